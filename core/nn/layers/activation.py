"""Activations as modules (each calls its ``webgrad.nn.functional`` form)."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class _Activation(Module):
    """An activation with PyTorch's options (``inplace=True`` writes the result into the input, as there)."""

    options: tuple = ()   # (name, default) in PyTorch's positional order

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.__dict__.update(bind_options(type(self).__name__, self.options, args, kwargs))

    def _kwargs(self):
        return {n: getattr(self, n) for n, _ in self.options}

    def forward(self, input):
        return getattr(F, self.fn)(input, **self._kwargs())

    def extra_repr(self):
        return ", ".join(_option_repr(k, v) for k, v in self._kwargs().items() if (k, v) != _INPLACE)   # as PyTorch's


def _option_repr(name, value) -> str:
    """One option as PyTorch's activations show it: ``dim=1``, ``approximate='tanh'``, a shrink's bare ``0.5``."""
    if name == "lambd":
        return f"{value}"
    return f"{name}={value!r}" if isinstance(value, str) else f"{name}={value}"


def bind_options(owner: str, options, args, kwargs) -> dict:
    """{name: value} for ``options`` ((name, default) pairs) given positional ``args`` and ``kwargs``."""
    names = [n for n, _ in options]
    if len(args) > len(names):
        raise TypeError(f"{owner} takes at most {len(names)} positional arguments, got {len(args)}")
    values = dict(options, **dict(zip(names, args)))
    for k, v in kwargs.items():
        if k not in values:
            raise TypeError(f"{owner} got an unexpected keyword argument {k!r}")
        values[k] = v
    return values


def _activation(name, fn, options=(), doc=""):
    return type(name, (_Activation,), {"fn": fn, "options": tuple(options), "__doc__": doc,
                                       "__module__": __name__})


_INPLACE = ("inplace", False)
ReLU = _activation("ReLU", "relu", [_INPLACE], doc="max(x, 0).")
LeakyReLU = _activation("LeakyReLU", "leaky_relu", [("negative_slope", 0.01), _INPLACE],
                        "x for x > 0, else negative_slope * x.")
ELU = _activation("ELU", "elu", [("alpha", 1.0), _INPLACE], "x for x > 0, else alpha * (exp(x) - 1).")
GELU = _activation("GELU", "gelu", [("approximate", "none")], "x * Phi(x) (exact, or the tanh approximation).")
SiLU = _activation("SiLU", "silu", [_INPLACE], doc="x * sigmoid(x).")
Softplus = _activation("Softplus", "softplus", [("beta", 1.0), ("threshold", 20.0)], "log(1 + exp(beta*x)) / beta.")
Tanh = _activation("Tanh", "tanh", doc="The hyperbolic tangent.")
Sigmoid = _activation("Sigmoid", "sigmoid", doc="1 / (1 + exp(-x)).")
Softmax = _activation("Softmax", "softmax", [("dim", None)], "exp(x) / exp(x).sum(dim).")
LogSoftmax = _activation("LogSoftmax", "log_softmax", [("dim", None)], "log(softmax(x, dim)).")

__all__ = ["ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Softplus", "Tanh", "Sigmoid", "Softmax", "LogSoftmax"]
