"""How the coefficients of ``backends/cpu/erf.py`` were made (and a test remakes them): Chebyshev
interpolants of the smooth parts of erf, computed with mpmath at 50 digits, written as polynomials
in ``y - center`` (highest power first) and rounded to float64.

* ``P(s) = erf(sqrt(s)) / sqrt(s)`` on s in [0, 1] (erf(x) = x P(x^2) for |x| < 1);
* ``G(t) = erfcx(t) = exp(t^2) erfc(t)`` on intervals of t >= 1 (erf(t) = 1 - exp(-t^2) G(t)).

``tanh_form`` fits ``backends/cpu/gelu.py``'s one-formula erf for float32 GELU.
"""
import math

import mpmath as mp
import numpy as np

PIECES = {   # name: (function, interval, degree, center)
    "P64": ("P", (0, 1), 12, 0), "G1_64": ("G", (1, 2.5), 18, 1.75), "G2_64": ("G", (2.5, 6), 18, 4.25),
    "P32": ("P", (0, 1), 5, 0), "G32": ("G", (1, 4.5), 13, 2.75),
}


def _p(s):
    return mp.erf(mp.sqrt(s)) / mp.sqrt(s) if s else 2 / mp.sqrt(mp.pi)


def _g(t):
    return mp.erfc(t) * mp.exp(t * t)


def chebyshev(f, a, b, degree):
    """Coefficients c_j of the interpolant sum c_j T_j(u) of f at the Chebyshev points, u = (2y - a - b) / (b - a)."""
    n = degree + 1
    nodes = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    values = [f((u + 1) / 2 * (b - a) + a) for u in nodes]
    c = [2 * mp.fsum(v * mp.cos(mp.pi * j * (k + mp.mpf(1) / 2) / n) for k, v in enumerate(values)) / n
         for j in range(n)]
    c[0] /= 2
    return c


def monomial(c, a, b, center):
    """sum c_j T_j(u) as a polynomial in z = y - center, highest power first."""
    n = len(c)
    t = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    while len(t) < n:
        t.append([mp.mpf(0)] + [2 * v for v in t[-1]])
        for i, v in enumerate(t[-3]):
            t[-1][i] -= v
    in_u = [mp.fsum(c[j] * t[j][i] for j in range(i, n) if i < len(t[j])) for i in range(n)]
    alpha, beta = 2 / (mp.mpf(b) - a), (2 * mp.mpf(center) - a - b) / (mp.mpf(b) - a)
    in_z = [mp.fsum(in_u[i] * mp.binomial(i, k) * alpha ** k * beta ** (i - k) for i in range(k, n)) for k in range(n)]
    return in_z[::-1]


def coefficients():
    """{name: tuple of float64 coefficients} for every piece in PIECES."""
    mp.mp.dps = 50
    funcs = {"P": _p, "G": _g}
    return {name: tuple(float(v) for v in monomial(chebyshev(funcs[f], a, b, deg), a, b, center))
            for name, (f, (a, b), deg, center) in PIECES.items()}


def tanh_form(degree=6, bound=4.0, points=4000, rounds=30):
    """Coefficients (lowest power first) of p with erf(x) ~ tanh(x p(x^2)) on |x| <= ``bound``, fitted for
    absolute error: least squares on atanh(erf(x)) / x weighted by d erf / d atanh = 1 - erf^2 (and x),
    reweighted towards the largest errors (an approach to the minimax fit), in float64 with math.erf."""
    x = np.linspace(1e-6, bound, points)
    erf = np.array([math.erf(v) for v in x])
    target = np.arctanh(np.minimum(erf, 1 - 1e-16)) / x
    powers = np.stack([(x * x) ** k for k in range(degree + 1)], 1)
    weight = (1 - erf ** 2) * x
    for _ in range(rounds):
        c = np.linalg.lstsq(powers * weight[:, None], target * weight, rcond=None)[0]
        err = np.abs(np.tanh(x * (powers @ c)) - erf)
        weight = weight * (err / err.max()) ** 0.3 + 1e-300
    return tuple(float(v) for v in c)


if __name__ == "__main__":
    for name, cs in coefficients().items():
        print(f"{name} = ({', '.join(repr(v) for v in cs)})")
    print(f"_ERF_BY_TANH = ({', '.join(repr(v) for v in tanh_form()[::-1])})")
