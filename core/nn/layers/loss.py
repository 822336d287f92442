"""Loss modules: one per functional loss, holding its options (and ``weight``/``pos_weight``
as buffers, so they move with ``to()``)."""
from __future__ import annotations

from .. import functional as F
from ...tensor import Tensor
from ..module import Module
from .activation import bind_options


class _Loss(Module):
    """Calls ``F.<fn>(input, target, **options)``; options are PyTorch's, in its positional order
    (the deprecated ``size_average``/``reduce`` are not accepted)."""

    fn = ""
    options: tuple = ()

    def __init__(self, *args, **kwargs):
        super().__init__()
        values = bind_options(type(self).__name__, self.options, args, kwargs)
        for k, v in values.items():
            if isinstance(v, Tensor):
                self.register_buffer(k, v)
            else:
                self.__dict__[k] = v

    def forward(self, input, target):
        return getattr(F, self.fn)(input, target, **{n: getattr(self, n) for n, _ in self.options})

    def extra_repr(self):
        return ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self.options if not isinstance(getattr(self, n),
                                                                                                  Tensor))


def _loss(name, fn, options, doc):
    return type(name, (_Loss,), {"fn": fn, "options": (("reduction", "mean"),) if options is None else options,
                                 "__doc__": doc, "__module__": __name__})


_R = ("reduction", "mean")
MSELoss = _loss("MSELoss", "mse_loss", None, "Mean squared error.")
L1Loss = _loss("L1Loss", "l1_loss", None, "Mean absolute error.")
SmoothL1Loss = _loss("SmoothL1Loss", "smooth_l1_loss", (_R, ("beta", 1.0)), "Quadratic below ``beta``, linear above.")
HuberLoss = _loss("HuberLoss", "huber_loss", (_R, ("delta", 1.0)), "Quadratic below ``delta``, linear above.")
NLLLoss = _loss("NLLLoss", "nll_loss", (("weight", None), ("ignore_index", -100), _R),
                "Negative log-likelihood of class indices, given log-probabilities.")
CrossEntropyLoss = _loss("CrossEntropyLoss", "cross_entropy",
                         (("weight", None), ("ignore_index", -100), _R, ("label_smoothing", 0.0)),
                         "Softmax cross-entropy of logits against class indices or probabilities.")
BCELoss = _loss("BCELoss", "binary_cross_entropy", (("weight", None), _R), "Binary cross-entropy of probabilities.")
BCEWithLogitsLoss = _loss("BCEWithLogitsLoss", "binary_cross_entropy_with_logits",
                          (("weight", None), _R, ("pos_weight", None)), "Binary cross-entropy of logits (stable).")
KLDivLoss = _loss("KLDivLoss", "kl_div", (_R, ("log_target", False)),
                  "Kullback-Leibler divergence; ``input`` holds log-probabilities.")

__all__ = ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss", "KLDivLoss"]
