"""Special-function kernels that take an attr or two inputs (the one-input ones are rows of
``elementwise.FLOAT_UNARY``): Polygamma and Zeta, elementwise maps over kernels/special.wgsl."""
from __future__ import annotations

import math

from webgrad import kernel_names as K

from .elementwise import _broadcast, elementwise

# n >= 2: (-1)^(n+1) n! zeta(n + 1, x), with p0 = n + 1 and p1 = the factor; n = 1: PyTorch's trigamma
_POLYGAMMA = "select(select(T0(p1) * zeta_(T0(p0), x0), trigamma_(x0), p0 == 2.0), digamma_(x0), p0 == 1.0)"


def polygamma(be, x, *, n):
    factor = (-1.0) ** (n + 1) * math.exp(math.lgamma(n + 1))
    return elementwise(be, K.POLYGAMMA, _POLYGAMMA, [x], x.shape, x.dtype, params=(n + 1.0, factor))


def zeta(be, x, q):
    return elementwise(be, K.ZETA, "zeta_(x0, x1)", [x, q], _broadcast(x.shape, q.shape), x.dtype)


KERNELS = {K.POLYGAMMA: polygamma, K.ZETA: zeta}
