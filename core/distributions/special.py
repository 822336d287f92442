"""``erfinv`` composed from existing ops (webgrad has no ErfInv kernel).

The value: Giles' single-precision approximation ("Approximating the erfinv function", GPU
Computing Gems, 2011), which is float32's precision as it stands; in float64, two Newton steps on
``erf(x) = y``. Their error is about ``1e-16 / erf'(x)`` (the residual ``erf(x) - y`` cancels near
±1): float64's precision for ``1 - |y|`` above ~1e-8, 1e-9 relative at 1e-9, 1e-5 at 1e-12.
(Newton would spoil float32, whose ``erf`` values near ±1 are a float32 ulp apart.)
The gradient is exact, ``sqrt(pi)/2 * exp(x**2)``, attached as ``x + (y - y') * k`` with ``y'``
the detached ``y`` (adds exactly zero to the value).

>>> import webgrad as wg
>>> round(erfinv(wg.tensor([0.5], dtype=wg.float64)).item(), 12)
0.476936276204
"""
from __future__ import annotations

import math

from ..dtypes import float64
from ..engine import no_grad
from ..ops.binary import where

_CENTRE = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
           -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
         0.00943887047, 1.00167406, 2.83297682)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
NEWTON_STEPS = 2


def _horner(coefficients, w):
    p = coefficients[0]
    for c in coefficients[1:]:
        p = c + p * w
    return p


def _giles(y):
    w = -((1 - y) * (1 + y)).log()
    centre = _horner(_CENTRE, w - 2.5)
    tail = _horner(_TAIL, w.clamp(min=5.0).sqrt() - 3)
    return where(w < 5.0, centre, tail) * y


def _newton(x, y):
    for _ in range(NEWTON_STEPS):
        x = x - (x.erf() - y) / (_TWO_OVER_SQRT_PI * (-x * x).exp())
    return x


def _solve(y, inside):
    safe = where(inside, y, 0.0)
    x = _giles(safe)
    if y.dtype is float64:
        x = _newton(x, safe)
    return where(inside, x, where(y.abs() == 1, y * math.inf, math.nan))


def erfinv(y):
    """The inverse error function, elementwise, for y in [-1, 1] (±inf at ±1, nan outside)."""
    inside = y.abs() < 1
    with no_grad():
        x = _solve(y.detach(), inside)
    slope = where(inside, (x * x).exp() / _TWO_OVER_SQRT_PI, 0.0)
    return x + (y - y.detach()) * slope
