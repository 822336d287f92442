"""PyTorch's serial CPU samplers (``aten/src/ATen/native/Distributions.h``/``.cpp``) in plain Python:
the Gamma (Marsaglia-Tsang), Poisson (Hoermann's transformed rejection, else multiplied uniforms) and
Binomial (BTRS, else inversion) samplers, and the Cauchy and log-normal fills. Each takes ``unit()``,
one double uniform in [0, 1) from the stream (PyTorch's ``uniform_real_distribution<double>``), and
``normals(n, cached)``, PyTorch's ``normal_distribution<double>`` with the generator's kept value
(``torch_random_pure.scalar_normals``); ``torch_random`` (numpy) and ``torch_random_pure`` wrap them
with their streams. The arithmetic follows PyTorch's: float literals (``0.0331f``) are float32
values, and with float32 parameters the steps PyTorch computes in float are rounded to float32
(``f32``), so the draws are PyTorch's (libm's log/exp through Python's ``math``; ``lgamma`` is
Python's, which may differ from libm's in the last bit and so, very rarely, decide one
acceptance test the other way).

>>> import itertools
>>> u = itertools.cycle([0.25, 0.5, 0.75]).__next__
>>> poisson(u, [0.0, 2.0])            # 0.25 > exp(-2), 0.25 * 0.5 is not: one event
[0.0, 1.0]
"""
from __future__ import annotations

import array
import math

__all__ = ["standard_gamma", "dirichlet", "poisson", "binomial", "cauchy", "log_normal"]

_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def f32(x: float) -> float:
    """``x`` rounded to float32 (as a C ``float`` holds it)."""
    return array.array("f", [x])[0]


def _same(x: float) -> float:
    return x


def _rounding(dtype: str):
    """The rounding of PyTorch's ``scalar_t`` arithmetic: float32 for float types below double."""
    return _same if dtype == "float64" else f32


_THIRD_F, _C0331_F = f32(1.0 / 3.0), f32(0.0331)


def _gamma_one(alpha, unit, normal, f):
    """sample_gamma: Marsaglia and Tsang's method; alpha < 1 boosted by one and scaled by U**(1/alpha)."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= (1 - unit()) ** f(1.0 / alpha)
        alpha = f(alpha + 1.0)
    d = f(alpha - _THIRD_F)
    c = 1.0 / math.sqrt(9.0 * d) if d > 0 else math.nan       # C's sqrt: NaN below 0 (a negative alpha)
    while True:
        x = normal()
        y = 1.0 + c * x
        while y <= 0:
            x = normal()
            y = 1.0 + c * x
        v = y * y * y
        u = 1 - unit()
        xx = x * x
        if u < 1.0 - _C0331_F * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def standard_gamma(unit, normals, alphas, dtype, cached) -> tuple:
    """``torch._standard_gamma``: one Gamma(alpha, 1) draw per alpha, in order, each at least the
    dtype's smallest normal number. Returns (values, the kept normal)."""
    f, tiny = _rounding(dtype), (2.2250738585072014e-308 if dtype == "float64" else 1.1754943508222875e-38)
    kept = [cached]

    def normal():
        (value,), kept[0] = normals(1, kept[0])
        return value
    out = [max(tiny, f(_gamma_one(f(a), unit, normal, f))) for a in alphas]
    return out, kept[0]


def dirichlet(unit, normals, alphas, k, cached) -> tuple:
    """``torch._sample_dirichlet``: standard gammas in double precision for each alpha (rows of ``k``),
    each row over its sum. Returns (the gammas followed by the normalised values, the kept normal)."""
    gammas, cached = standard_gamma(unit, normals, alphas, "float64", cached)
    sums = [sum(gammas[i:i + k]) for i in range(0, len(gammas), k)]
    return gammas + [g / sums[i // k] for i, g in enumerate(gammas)], cached


def _poisson_one(lam, unit):
    """sample_poisson: transformed rejection (Hoermann, 1993) from lambda 10 up, else multiplied uniforms."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = unit() - 0.5
            v = unit()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b) <= -lam + k * loglam - math.lgamma(k + 1):
                return k
    if lam == 0:
        return 0
    enlam, x, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= unit()
        if prod <= enlam:
            return x
        x += 1


def poisson(unit, rates) -> list:
    """``torch.poisson``: one draw per rate, in order."""
    return [float(_poisson_one(float(r), unit)) for r in rates]


def _stirling_tail(k):
    if k < len(_TAIL):
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _inversion(n, p, unit, f):
    logprob = f(math.log1p(-p))
    geom_sum, num = 0.0, 0.0
    while True:
        geom_sum += math.ceil(math.log(unit()) / logprob)
        if geom_sum > n:
            return num
        num += 1


def _btrs(n, p, unit, f):
    stddev = f(math.sqrt(f(f(n * p) * f(1 - p))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = f(n * p) + 0.5
    v_r = 0.92 - 4.2 / b
    r = f(p / f(1 - p))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(f(f(n + 1) * p))
    while True:
        u = unit() - 0.5
        v = unit()
        us = 0.5 - abs(u)
        k = f(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1))) + (n + 1) * math.log((n - m + 1) / f(n - k + 1))
                 + (k + 0.5) * math.log(r * f(n - k + 1) / f(k + 1)) + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(k) - _stirling_tail(f(n - k)))
        if v <= bound:
            return k


def _binomial_one(n, p, unit, f):
    """sample_binomial: BTRS when the smaller of n p and n (1 - p) is 10 or more, else inversion."""
    if n <= 0.0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return n
    if p <= 0.5:
        return (_btrs if f(n * p) >= 10.0 else _inversion)(n, p, unit, f)
    if p > 0.5:
        q = f(1.0 - p)
        return f(n - (_btrs if f(n * q) >= 10.0 else _inversion)(n, q, unit, f))
    return math.nan


def binomial(unit, counts, probs, dtype) -> list:
    """``torch.binomial``: one draw per (count, prob), in order."""
    f = _rounding(dtype)
    return [float(_binomial_one(f(float(n)), f(float(p)), unit, f)) for n, p in zip(counts, probs)]


def cauchy(unit, n, median, sigma) -> list:
    """``cauchy_(median, sigma)``: median + sigma * tan(pi * (u - 0.5)), u a double uniform."""
    return [median + sigma * math.tan(math.pi * (unit() - 0.5)) for _ in range(n)]


def log_normal(normals, n, mean, std, cached, fma=None) -> tuple:
    """``log_normal_(mean, std)``: exp of normal_distribution<double>(mean, std), one value at a time
    (``fma(v, std, mean)``: v * std + mean with one rounding, as PyTorch's build computes it; plain
    arithmetic when not given). Returns (values, the kept normal)."""
    values, cached = normals(n, cached)
    affine = fma or (lambda v, s, m: v * s + m)
    return [math.exp(affine(v, std, mean)) for v in values], cached
