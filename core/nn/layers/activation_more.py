"""More activation modules (each calls its ``webgrad.nn.functional`` form), and PReLU, whose
slope is a parameter."""
from __future__ import annotations

import warnings

from .. import functional as F
from ...ops.creation import full
from ..module import Module
from ..parameter import Parameter
from .activation import _INPLACE, _activation

ReLU6 = _activation("ReLU6", "relu6", [_INPLACE], "min(max(x, 0), 6).")
Hardswish = _activation("Hardswish", "hardswish", [_INPLACE], "x * relu6(x + 3) / 6.")
Hardsigmoid = _activation("Hardsigmoid", "hardsigmoid", [_INPLACE], "relu6(x + 3) / 6.")
Mish = _activation("Mish", "mish", [_INPLACE], "x * tanh(softplus(x)).")
SELU = _activation("SELU", "selu", [_INPLACE], "The self-normalising ELU.")
CELU = _activation("CELU", "celu", [("alpha", 1.0), _INPLACE], "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).")
LogSigmoid = _activation("LogSigmoid", "logsigmoid", doc="log(sigmoid(x)).")
Softsign = _activation("Softsign", "softsign", doc="x / (1 + |x|).")
Tanhshrink = _activation("Tanhshrink", "tanhshrink", doc="x - tanh(x).")
Softshrink = _activation("Softshrink", "softshrink", [("lambd", 0.5)], "Shrink toward 0 by lambd.")
Hardshrink = _activation("Hardshrink", "hardshrink", [("lambd", 0.5)], "x where |x| > lambd, else 0.")
Softmin = _activation("Softmin", "softmin", [("dim", None)], "softmax(-x, dim).")
GLU = _activation("GLU", "glu", [("dim", -1)], "a * sigmoid(b) for the halves a, b along dim.")


class Hardtanh(Module):
    """``x`` clamped to [min_val, max_val] (``min_value``/``max_value``: PyTorch's deprecated names).

    >>> import webgrad as wg
    >>> Hardtanh(-2.0, 2.0)(wg.tensor([-3.0, 1.0])).tolist()
    [-2.0, 1.0]
    """

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None or max_value is not None:
            warnings.warn("keyword argument `min_value`/`max_value` is deprecated and renamed to `min_val`/`max_val`",
                          FutureWarning, stacklevel=2)
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise ValueError(f"Hardtanh: max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``.

    >>> import webgrad as wg
    >>> Threshold(0.5, -1.0)(wg.tensor([0.0, 2.0])).tolist()
    [-1.0, 2.0]
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    """Softmax over the channels of [N, C, H, W] (or [C, H, W]).

    >>> import webgrad as wg
    >>> Softmax2d()(wg.zeros(1, 2, 1, 1)).reshape(-1).tolist()
    [0.5, 0.5]
    """

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
        return F.softmax(input, -3)


class RReLU(Module):
    """Randomized leaky ReLU: random negative slopes in [lower, upper] while training, their mean in eval.

    >>> import webgrad as wg
    >>> RReLU(0.2, 0.4).eval()(wg.tensor([-1.0, 2.0])).tolist()
    [-0.30000001192092896, 2.0]
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """``max(0, x) + weight * min(0, x)`` with a learned ``weight`` (one, or one per channel).

    >>> import webgrad as wg
    >>> PReLU()(wg.tensor([-4.0, 2.0])).tolist()
    [-1.0, 2.0]
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype, device=device))

    def reset_parameters(self):
        from .. import init as nn_init
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


__all__ = ["ReLU6", "Hardswish", "Hardsigmoid", "Mish", "SELU", "CELU", "LogSigmoid", "Softsign", "Tanhshrink",
           "Softshrink", "Hardshrink", "Threshold", "Softmin", "GLU", "Hardtanh", "Softmax2d", "PReLU", "RReLU"]
