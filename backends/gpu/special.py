"""Special-function kernels that take an attr, two inputs or generated WGSL (the other one-input
ones are rows of ``elementwise.FLOAT_UNARY``): Polygamma and Zeta, elementwise maps over
kernels/special.wgsl, and the scaled Bessel functions BesselI0e, BesselI1e (Clenshaw sums of
bessel_tables' coefficients)."""
from __future__ import annotations

import math

from webgrad import kernel_names as K
from webgrad.dtypes import bool_, int32

from ..bessel_tables import I0E_FAR, I0E_NEAR, I1E_FAR, I1E_NEAR, K0_FAR, K0_NEAR, K1_FAR, K1_NEAR

from .elementwise import _broadcast, elementwise

# n >= 2: (-1)^(n+1) n! zeta(n + 1, x), with p0 = n + 1 and p1 = the factor; n = 1: PyTorch's trigamma
_POLYGAMMA = "select(select(T0(p1) * zeta_(T0(p0), x0), trigamma_(x0), p0 == 2.0), digamma_(x0), p0 == 1.0)"


def polygamma(be, x, *, n):
    factor = (-1.0) ** (n + 1) * math.exp(math.lgamma(n + 1))
    return elementwise(be, K.POLYGAMMA, _POLYGAMMA, [x], x.shape, x.dtype, params=(n + 1.0, factor))


def zeta(be, x, q):
    return elementwise(be, K.ZETA, "zeta_(x0, x1)", [x, q], _broadcast(x.shape, q.shape), x.dtype)


def _binary(name, expr):
    def run(be, a, b):
        return elementwise(be, name, expr, [a, b], _broadcast(a.shape, b.shape), a.dtype)
    return run


def signbit(be, x):
    return elementwise(be, K.SIGNBIT, "select(O(0), O(1), signbit_(x0))", [x], x.shape, bool_)


def frexp(be, x):
    return (elementwise(be, K.FREXP, "frexp_mantissa_(x0)", [x], x.shape, x.dtype),
            elementwise(be, K.FREXP, "O(frexp_exponent_(x0))", [x], x.shape, int32))


KERNELS = {K.POLYGAMMA: polygamma, K.ZETA: zeta, K.SIGNBIT: signbit, K.FREXP: frexp,
           **{name: _binary(name, expr) for name, expr in ((K.COPYSIGN, "copysign_(x0, x1)"),
                                                            (K.NEXTAFTER, "nextafter_(x0, x1)"),
                                                            (K.GCD, "gcd_(x0, x1)"), (K.LCM, "lcm_(x0, x1)"),
                                                            (K.IGAMMA, "igamma_(x0, x1, 0.0)"),
                                                            (K.IGAMMAC, "igamma_(x0, x1, 1.0)"))}}


def _clenshaw_wgsl(name, coefficients):
    """A WGSL ``fn name(y: F) -> F``: Cephes' chbevl over ``coefficients`` (highest order first)."""
    values = ", ".join(repr(c) for c in coefficients)
    return (f"fn {name}(y: F) -> F {{\n    let c = array<f32, {len(coefficients)}>({values});\n"
            f"    var b0 = F(c[0]); var b1 = F(0.0); var b2 = F(0.0);\n"
            f"    for (var i = 1; i < {len(coefficients)}; i++) {{   // {len(coefficients) - 1} times\n"
            f"        b2 = b1; b1 = b0; b0 = y * b1 - b2 + F(c[i]);\n    }}\n"
            f"    return F(0.5) * (b0 - b2);\n}}\n")


# exp(-|x|) I0(x), exp(-|x|) I1(x): the [0, 8] expansion in |x| / 2 - 2, beyond it the one in 32 / |x| - 2 over
# sqrt; exp(x) K0(x), exp(x) K1(x): the [0, 2] one in x^2 - 2 (with log(x / 2) I), beyond the one in 8 / x - 2
_SCALED_FUNCTIONS = """
fn i0e_(x: F) -> F {
    let a = abs(x);
    return select(i0e_far_(F(32.0) / max(a, F(8.0)) - F(2.0)) / sqrt(max(a, F(8.0))), i0e_near_(a * F(0.5) - F(2.0)),
                  a <= F(8.0));
}
fn i1e_(x: F) -> F {
    let a = abs(x);
    return sign(x) * select(i1e_far_(F(32.0) / max(a, F(8.0)) - F(2.0)) / sqrt(max(a, F(8.0))),
                            i1e_near_(a * F(0.5) - F(2.0)) * a, a <= F(8.0));
}
fn k_scaled_(x: F, near: F, far_sum: F) -> F {
    let u = max(x, F(2.0));
    let infinite = bitcast<F>(U(0x7f800000u) + bitcast<U>(x) * U(0u));
    let value = select(far_sum / sqrt(u), near, x <= F(2.0));
    return select(select(value, infinite, x == F(0.0)), nan_(x), x < F(0.0));
}
fn k0e_(x: F) -> F {
    let t = clamp(x, F(1e-30), F(2.0));
    let near = (k0_near_(t * t - F(2.0)) - log(F(0.5) * t) * i0e_(t) * exp(t)) * exp(t);
    return k_scaled_(x, near, k0_far_(F(8.0) / max(x, F(2.0)) - F(2.0)));
}
fn k1e_(x: F) -> F {
    let t = clamp(x, F(1e-30), F(2.0));
    let near = (log(F(0.5) * t) * i1e_(t) * exp(t) + k1_near_(t * t - F(2.0)) / t) * exp(t);
    return k_scaled_(x, near, k1_far_(F(8.0) / max(x, F(2.0)) - F(2.0)));
}
"""
_BESSEL = "".join(_clenshaw_wgsl(n, c) for n, c in (("i0e_near_", I0E_NEAR), ("i0e_far_", I0E_FAR),
                                                      ("i1e_near_", I1E_NEAR), ("i1e_far_", I1E_FAR),
                                                      ("k0_near_", K0_NEAR), ("k0_far_", K0_FAR),
                                                      ("k1_near_", K1_NEAR), ("k1_far_", K1_FAR))) + _SCALED_FUNCTIONS
_SCALED = {K.BESSEL_I0E: "i0e_(x0)", K.BESSEL_I1E: "i1e_(x0)", K.BESSEL_K0E: "k0e_(x0)", K.BESSEL_K1E: "k1e_(x0)"}


def _scaled_bessel(name):
    expr = f"select({_SCALED[name]}, x0, isnan_(x0))"   # NaN stays NaN (WGSL's max may drop it)

    def run(be, x):
        return elementwise(be, name, expr, [x], x.shape, x.dtype, extra=_BESSEL)
    return run


KERNELS.update({name: _scaled_bessel(name) for name in _SCALED})
