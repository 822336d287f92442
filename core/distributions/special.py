"""``erfinv`` composed from existing ops (webgrad has no ErfInv kernel): Giles' single-precision
approximation ("Approximating the erfinv function", GPU Computing Gems, 2011), then two Newton
steps on ``erf(x) = y``, which bring it to the dtype's precision and make its gradient
``sqrt(pi)/2 * exp(x**2)`` (the Newton step's derivative in ``y`` is ``1/erf'(x)``).

>>> import webgrad as wg
>>> round(erfinv(wg.tensor([0.5], dtype=wg.float64)).item(), 12)
0.476936276204
"""
from __future__ import annotations

import math

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


def erfinv(y):
    """The inverse error function, elementwise, for y in [-1, 1] (±inf at ±1, nan outside)."""
    inside = y.abs() < 1
    safe = where(inside, y, 0.0)
    x = _giles(safe)
    for _ in range(NEWTON_STEPS):
        x = x - (x.erf() - safe) / (_TWO_OVER_SQRT_PI * (-x * x).exp())
    edge = where(y.abs() == 1, y * math.inf, math.nan)
    return where(inside, x, edge)
