"""Gradients of the special-function kernels (PyTorch's derivative formulas), written with ops."""
import math

from .. import kernel_names as K
from .unary import _IN, _OUT, _rule

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

_rule(K.ERFC, _IN)(lambda dy, x: dy * -_TWO_OVER_SQRT_PI * (-x * x).exp())
_rule(K.ERFINV, outputs=_OUT)(lambda dy, y: dy * (math.sqrt(math.pi) / 2) * (y * y).exp())


@_rule(K.ERFCX, _IN, outputs=_OUT)
def _erfcx(dy, x, y):
    return dy * (2 * x * y - _TWO_OVER_SQRT_PI)
_rule(K.NDTRI, outputs=_OUT)(lambda dy, y: dy * math.sqrt(2 * math.pi) * (y * y / 2).exp())
