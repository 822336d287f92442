"""Loss modules: one per functional loss, holding its options (and ``weight``/``pos_weight``
as buffers, so they move with ``to()``)."""
from __future__ import annotations

from .. import functional as F
from ...tensor import Tensor
from ..module import Module
from ..functional._utils import legacy_reduction
from .activation import bind_options

_LEGACY = ("size_average", "reduce")


class _Loss(Module):
    """Calls ``F.<fn>(input, target, **options)``; options are PyTorch's, in its positional order
    (the deprecated ``size_average``/``reduce`` become ``reduction`` here, with PyTorch's warning)."""

    fn = ""
    options: tuple = (("size_average", None), ("reduce", None), ("reduction", "mean"))   # PyTorch's _Loss's

    def __init__(self, *args, **kwargs):
        super().__init__()
        values = bind_options(type(self).__name__, self.options, args, kwargs)
        if any(k in values for k in _LEGACY):
            legacy = values.pop("size_average"), values.pop("reduce")
            values["reduction"] = legacy_reduction(*legacy, values["reduction"])
        for k, v in values.items():
            if isinstance(v, Tensor):
                self.register_buffer(k, v)
            else:
                self.__dict__[k] = v

    def _options(self):
        return [n for n, _ in self.options if n not in _LEGACY]

    def forward(self, input, target):
        return getattr(F, self.fn)(input, target, **{n: getattr(self, n) for n in self._options()})


class _WeightedLoss(_Loss):
    """PyTorch's base of the losses with a class ``weight`` (kept as a buffer), for subclasses scripts write."""

    options = (("weight", None), ("size_average", None), ("reduce", None), ("reduction", "mean"))


def _loss(name, fn, options, doc):
    return type(name, (_Loss,), {"fn": fn, "options": options, "__doc__": doc, "__module__": __name__})


_R = ("reduction", "mean")
_SA, _RE = ("size_average", None), ("reduce", None)
MSELoss = _loss("MSELoss", "mse_loss", (_SA, _RE, _R), "Mean squared error.")
L1Loss = _loss("L1Loss", "l1_loss", (_SA, _RE, _R), "Mean absolute error.")
SmoothL1Loss = _loss("SmoothL1Loss", "smooth_l1_loss", (_SA, _RE, _R, ("beta", 1.0)),
                     "Quadratic below ``beta``, linear above.")
HuberLoss = _loss("HuberLoss", "huber_loss", (_R, ("delta", 1.0)), "Quadratic below ``delta``, linear above.")
NLLLoss = _loss("NLLLoss", "nll_loss", (("weight", None), _SA, ("ignore_index", -100), _RE, _R),
                "Negative log-likelihood of class indices, given log-probabilities.")
CrossEntropyLoss = _loss("CrossEntropyLoss", "cross_entropy",
                         (("weight", None), _SA, ("ignore_index", -100), _RE, _R, ("label_smoothing", 0.0)),
                         "Softmax cross-entropy of logits against class indices or probabilities.")
BCELoss = _loss("BCELoss", "binary_cross_entropy", (("weight", None), _SA, _RE, _R),
                "Binary cross-entropy of probabilities.")
BCEWithLogitsLoss = _loss("BCEWithLogitsLoss", "binary_cross_entropy_with_logits",
                          (("weight", None), _SA, _RE, _R, ("pos_weight", None)),
                          "Binary cross-entropy of logits (stable).")
NLLLoss2d = _loss("NLLLoss2d", "nll_loss", (("weight", None), _SA, ("ignore_index", -100), _RE, _R),
                  "PyTorch's deprecated name for NLLLoss (over [N, C, H, W]).")
KLDivLoss = _loss("KLDivLoss", "kl_div", (_SA, _RE, _R, ("log_target", False)),
                  "Kullback-Leibler divergence; ``input`` holds log-probabilities.")



class CTCLoss(_Loss):
    """Connectionist temporal classification loss (``F.ctc_loss``): ``forward(log_probs, targets,
    input_lengths, target_lengths)``.

    >>> import webgrad as wg
    >>> lp = wg.randn(5, 2, 3).log_softmax(2)
    >>> CTCLoss()(lp, wg.tensor([[1, 2], [2, 2]]), [5, 5], [2, 2]).shape
    webgrad.Size([])
    """

    options = (("blank", 0), _R, ("zero_infinity", False))

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class LinearCrossEntropyLoss(Module):
    """A ``Linear`` to ``num_classes * prod(out_features)`` outputs followed by cross entropy
    (``F.linear_cross_entropy``; PyTorch 2.13). Its parameters are ``linear.weight`` (and
    ``linear.bias``); ``weight`` (class weights) is a buffer. ``options`` must be None.

    >>> import webgrad as wg
    >>> LinearCrossEntropyLoss(4, 3)(wg.ones(2, 4), wg.tensor([0, 2])).shape
    webgrad.Size([])
    """

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None, dtype=None,
                 reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"LinearCrossEntropyLoss: expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if not 0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"LinearCrossEntropyLoss: expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__()
        from .linear import Linear
        self.register_buffer("weight", weight)
        self.num_classes, self.out_features, self.reduction = num_classes, tuple(out_features), reduction
        self.ignore_index, self.label_smoothing, self.options = ignore_index, label_smoothing, options
        rows = num_classes
        for size in self.out_features:
            rows *= size
        self.linear = Linear(in_features, rows, bias=bias, device=device, dtype=dtype)

    def forward(self, input, target):
        shape = (self.num_classes, *self.out_features)
        bias = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(input, self.linear.weight.reshape(*shape, self.linear.in_features), target,
                                      linear_bias=bias, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")


__all__ = ["LinearCrossEntropyLoss", "CTCLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "NLLLoss2d", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss", "KLDivLoss"]
