"""Activations: the elementwise ones are webgrad's own ops, re-exported under torch's names;
softmax and log_softmax are composed here (shifted by the max for stability, differentiably)."""
from __future__ import annotations

from ...dtypes import to_dtype
from ...ops.common import check_tensor
from ...ops.unary import elu, gelu, leaky_relu, relu, sigmoid, silu, softplus, tanh  # noqa: F401
from ...shapes import normalize_axis


def _prepare(op, input, dim, dtype):
    check_tensor(op, input)
    if dim is None:
        raise TypeError(f"{op}: pass the dimension to normalise over, e.g. {op}(x, dim=-1)")
    dim = normalize_axis(dim, input.ndim, op)
    x = input if dtype is None else input.to(to_dtype(dtype))
    if not x.dtype.is_floating:
        x = x.to("float32")
    return x - x.amax(dim, keepdim=True), dim


def softmax(input, dim=None, dtype=None):
    """exp(x) / exp(x).sum(dim), computed stably.

    >>> import webgrad as wg
    >>> softmax(wg.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    z, dim = _prepare("softmax", input, dim, dtype)
    e = z.exp()
    return e / e.sum(dim, keepdim=True)


def log_softmax(input, dim=None, dtype=None):
    """log(softmax(x, dim)), computed stably as z - log(exp(z).sum(dim)) with z = x - max(x).

    >>> import webgrad as wg
    >>> round(log_softmax(wg.tensor([0.0, 0.0]), dim=0)[0].item(), 4)
    -0.6931
    """
    z, dim = _prepare("log_softmax", input, dim, dtype)
    return z - z.exp().sum(dim, keepdim=True).log()


__all__ = ["relu", "leaky_relu", "elu", "gelu", "silu", "softplus", "sigmoid", "tanh", "softmax", "log_softmax"]
