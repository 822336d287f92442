"""PyTorch's CPU random numbers on the host (numpy), for ``webgrad.random.Generator``.

PyTorch's CPU generator is mt19937 seeded by the standard ``init_genrand`` with the seed's low
32 bits; numpy's ``MT19937`` with its legacy seeding yields the same 32-bit stream. Each function
here draws what PyTorch's CPU kernel for an op draws, in its order, and applies its transform
(``aten/src/ATen/core/TransformationHelper.h``, ``native/cpu/DistributionTemplates.h``), so
``wg.manual_seed(s)`` followed by an op gives PyTorch's numbers on every backend (generated
here, then uploaded). ``random()`` is one 32-bit draw; ``random64()`` two, the first the high half.

>>> s = Stream(0)
>>> [round(v, 6) for v in uniform(s, 3, "float32").tolist()]
[0.496257, 0.768222, 0.088477]
"""
from __future__ import annotations

import math

import numpy as np

from . import torch_random_samplers as _serial
from .torch_random_pure import scalar_normals

_F32, _F64 = np.float32, np.float64
_TWO_PI = 2.0 * math.pi
_BITS = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}   # numeric_limits<T>::digits
_INT_MAX_BITS = {"int64": 63, "int32": 31, "int16": 15, "int8": 7, "uint8": 8}
_LARGE_RANDPERM = (2 ** 32 - 1) // 20   # randperm_cpu's switch to the 64-bit inside-out shuffle


class Stream:
    """An mt19937 stream as PyTorch's CPU generator holds it (its state and position).

    >>> int(Stream(0).random(1)[0])
    2357136044
    """

    def __init__(self, seed: int):
        self.engine = np.random.MT19937()
        self.engine._legacy_seeding(seed & 0xFFFFFFFF)

    def random(self, n: int) -> np.ndarray:
        """``n`` 32-bit draws (uint64 array)."""
        return self.engine.random_raw(n)

    def random64(self, n: int) -> np.ndarray:
        """``n`` 64-bit draws: two 32-bit draws each, the first the high half."""
        raw = self.engine.random_raw(2 * n)
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    def get(self) -> tuple:
        """(the 624 state words, a uint32 array; the position)."""
        st = self.engine.state["state"]
        return st["key"], int(st["pos"])

    def set(self, key, pos: int) -> None:
        self.engine.state = {"bit_generator": "MT19937",
                             "state": {"key": np.asarray(key, dtype=np.uint32), "pos": int(pos)}}


def _split(a):
    """Veltkamp's split of float64 ``a`` into two halves of 26 bits each."""
    t = a * 134217729.0
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c):
    """float64 a * b + c with one rounding (the fused multiply-add PyTorch's build makes of such
    lines): Dekker's exact product and Knuth's exact sum, their errors added once at the end.

    >>> float(fma64(np.float64(0.1), np.float64(10.0), np.float64(-1.0)))
    5.551115123125783e-17
    """
    a, b, c = np.asarray(a, _F64), np.asarray(b, _F64), np.asarray(c, _F64)
    p = a * b
    (ah, al), (bh, bl) = _split(a), _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    v = s - p
    t = (p - (s - v)) + (c - v)
    return s + (t + e)


def _unit(s: Stream, n: int, dtype: str) -> np.ndarray:
    """uniform_real_distribution<T>(0, 1): random() for float types below double, random64() for double."""
    bits = _BITS[dtype]
    if dtype == "float64":
        return (s.random64(n) & np.uint64((1 << 53) - 1)).astype(_F64) * 2.0 ** -53
    return ((s.random(n) & np.uint64((1 << bits) - 1)).astype(_F32) * _F32(2.0 ** -bits))


def uniform(s: Stream, n: int, dtype: str, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """``uniform_(low, high)``: x * (to - from) + from, with one rounding (the fused multiply-add PyTorch's
    build makes of it), in float64 for double and float32 otherwise (half types: their digits, then
    rounded by the caller)."""
    x = _unit(s, n, dtype if dtype in _BITS else "float32")
    if dtype == "float64":
        return fma64(x, high - low, low) if (low, high) != (0.0, 1.0) else x
    lo, hi = _F32(low), _F32(high)
    return (x.astype(_F64) * _F64(hi - lo) + _F64(lo)).astype(_F32)


# ---------------------------------------------------------------- normal


def _fma32(a, b, c):
    """float32 fused multiply-add (the product is exact in float64; one rounding to float64, then float32)."""
    t = np.multiply(a, b, dtype=_F64)
    t += c
    return t.astype(_F32)


def _log_cephes(x):
    """avx_mathfun's ``log256_ps`` as PyTorch's build compiles it (its multiply-adds fused)."""
    x = np.maximum(x, _F32(np.finfo(_F32).tiny))
    bits = x.view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 0x7F).astype(_F32) + _F32(1)
    x = ((bits & np.uint32(~0x7F800000 & 0xFFFFFFFF)) | np.uint32(0x3F000000)).view(_F32)
    small = x < _F32(0.707106781186547524)
    tmp = np.where(small, x, _F32(0))
    x = x - _F32(1)
    e = e - np.where(small, _F32(1), _F32(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, _F32(7.0376836292e-2))
    for p in (-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
              2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1):
        y = _fma32(y, x, _F32(p))
    y = y * x
    y = _fma32(y, z, e * _F32(-2.12194440e-4))
    y = _fma32(z, _F32(-0.5), y)
    return _fma32(e, _F32(0.693359375), x + y)


def _sincos_cephes(theta):
    """avx_mathfun's ``sincos256_ps`` (theta >= 0 here) as PyTorch's build compiles it."""
    x = np.abs(theta)
    j = ((x * _F32(1.27323954473516)).astype(np.int32) + 1) & ~1
    y = j.astype(_F32)
    sin_sign = np.where((j & 4) != 0, _F32(-1), _F32(1)) * np.where(theta < 0, _F32(-1), _F32(1))
    cos_sign = np.where((~(j - 2) & 4) != 0, _F32(-1), _F32(1))
    poly = (j & 2) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fma32(y, _F32(dp), x)
    z = x * x
    yc = _fma32(np.full_like(z, _F32(2.443315711809948e-5)), z, _F32(-1.388731625493765e-3))
    yc = _fma32(yc, z, _F32(4.166664568298827e-2))
    yc = yc * z
    yc = _fma32(yc, z, -(z * _F32(0.5))) + _F32(1)
    ys = _fma32(np.full_like(z, _F32(-1.9515295891e-4)), z, _F32(8.3321608736e-3))
    ys = _fma32(ys, z, _F32(-1.6666654611e-1))
    ys = _fma32(ys * z, x, x)
    return np.where(poly, ys, yc) * sin_sign, np.where(poly, yc, ys) * cos_sign


def _box_muller16_f32(u, mean, std):
    """normal_fill_16_AVX2 over rows of 16 uniforms: pairs (j, j + 8) become (r cos, r sin)."""
    u1, u2 = _F32(1) - u[:, :8], u[:, 8:]
    radius = np.sqrt(_F32(-2) * _log_cephes(u1))
    sin, cos = _sincos_cephes(_F32(_TWO_PI) * u2)
    out = np.concatenate([radius * cos, radius * sin], axis=1)
    return out if (mean, std) == (0.0, 1.0) else _fma32(out, _F32(std), _F32(mean))


def _box_muller16_f64(u, mean, std):
    """normal_fill_16<double>: libm's log (Python's math module; numpy's differs in the last bit now and
    then), numpy's cos and sin (equal to libm's)."""
    logs = np.array([math.log(v) for v in (1 - u[:, :8]).ravel().tolist()], dtype=_F64).reshape(-1, 8)
    radius = np.sqrt(-2 * logs)
    theta = _TWO_PI * u[:, 8:]
    out = np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1)
    return out if (mean, std) == (0.0, 1.0) else fma64(out, std, mean)


def _normal_fill(s, n, dtype, mean, std):
    """normal_fill: n uniforms, Box-Muller in blocks of 16; when 16 does not divide n, 16 fresh
    uniforms make the last 16 values again."""
    kind = "float64" if dtype == "float64" else "float32"
    fill = _box_muller16_f64 if kind == "float64" else _box_muller16_f32
    data = _unit(s, n, kind)
    whole = n // 16 * 16
    data[:whole] = fill(data[:whole].reshape(-1, 16), mean, std).reshape(-1)
    if n % 16:
        data[n - 16:] = fill(_unit(s, 16, kind).reshape(1, 16), mean, std).reshape(-1)
    return data


def _normal_scalar(s, n, mean, std, cached):
    """normal_distribution<double>, one value at a time (``torch_random_pure.scalar_normals``).
    Returns (values, cache)."""
    out, cached = scalar_normals(lambda: _unit(s, 2, "float64").tolist(), n, cached)
    out = np.array(out, dtype=_F64)
    return (out if (mean, std) == (0.0, 1.0) else fma64(out, std, mean)), cached


def normal(s: Stream, n: int, dtype: str, mean: float, std: float, contiguous: bool, cached):
    """``normal_(mean, std)``: (values, the generator's cached normal afterwards). A contiguous tensor of
    16 values or more takes the vectorised path (no cache); others the scalar one."""
    if n >= 16 and contiguous:
        return _normal_fill(s, n, dtype, mean, std), cached
    return _normal_scalar(s, n, mean, std, cached)


# ---------------------------------------------------------------- integers


def integers(s: Stream, n: int, low: int, high: int) -> np.ndarray:
    """``random_(low, high)`` / ``randint``: (draw % range) + low, with random64() from a range of 2**28 up."""
    span = high - low
    draws = s.random64(n) if span >= 1 << 28 else s.random(n)
    return ((draws % np.uint64(span)).astype(np.int64) + np.int64(low)) if span < 1 << 63 else \
        np.array([int(d) % span + low for d in draws.tolist()], dtype=np.int64)


def full_range(s: Stream, n: int, dtype: str) -> np.ndarray:
    """``random_()`` with no bounds: [0, 2**digits] for floats, [0, max] for integers, 0/1 for bool."""
    if dtype == "bool":
        return (s.random(n) & np.uint64(1)).astype(np.int64)
    wide = dtype in ("float64", "int64")
    draws = s.random64(n) if wide else s.random(n)
    span = (1 << _BITS[dtype]) + 1 if dtype in _BITS else 1 << _INT_MAX_BITS[dtype]
    return (draws % np.uint64(span)).astype(np.int64)


def randperm(s: Stream, n: int) -> np.ndarray:
    """randperm_cpu: swap position i with i + random() % (n - i), i = 0 .. n-2; from ~2**28 up, the
    inside-out shuffle on random64() % (i + 1)."""
    if n >= _LARGE_RANDPERM:
        order = np.empty(n, dtype=np.int64)
        for i, z in enumerate((s.random64(n) % (np.arange(n, dtype=np.uint64) + np.uint64(1))).tolist()):
            order[i] = order[z]
            order[z] = i
        return order
    order = list(range(n))
    if n > 1:
        picks = (s.random(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
        for i, z in enumerate(picks):
            order[i], order[i + z] = order[i + z], order[i]
    return np.array(order, dtype=np.int64)


# ---------------------------------------------------------------- other distributions


def exponential(s: Stream, n: int, lambd: float) -> np.ndarray:
    """``exponential_(lambd)``: -1/lambd * log1p(-u), u a double uniform (libm's log1p)."""
    scale = -1.0 / lambd
    return np.array([scale * math.log1p(-u) for u in _unit(s, n, "float64").tolist()], dtype=_F64)


def geometric(s: Stream, n: int, p: float) -> np.ndarray:
    """``geometric_(p)``: ceil(log(u) / log1p(-p)), u a double uniform (libm's log and log1p)."""
    scale = math.log1p(-p)
    return np.array([math.ceil(math.log(u) / scale) if u > 0 else math.inf for u in _unit(s, n, "float64").tolist()],
                    dtype=_F64)


def bernoulli_scalar(s: Stream, n: int, p: float) -> np.ndarray:
    """``bernoulli_(p)`` with a number p (dropout's mask too): double uniform < p."""
    return _unit(s, n, "float64") < p


# ---------------------------------------------------------------- serial samplers (torch_random_samplers)


def _one_unit(s: Stream):
    return lambda: float(_unit(s, 1, "float64")[0])


def _normals(s: Stream):
    return lambda n, cached: scalar_normals(lambda: _unit(s, 2, "float64").tolist(), n, cached)


def standard_gamma(s: Stream, alphas, dtype: str, cached):
    """``torch._standard_gamma``: (values, the kept normal)."""
    values, cached = _serial.standard_gamma(_one_unit(s), _normals(s), alphas, dtype, cached)
    return np.array(values, dtype=_F64), cached


def dirichlet(s: Stream, alphas, k: int, cached):
    """``torch._sample_dirichlet``: (gammas then normalised values, the kept normal)."""
    values, cached = _serial.dirichlet(_one_unit(s), _normals(s), alphas, k, cached)
    return np.array(values, dtype=_F64), cached


def poisson(s: Stream, rates) -> np.ndarray:
    """``torch.poisson``: one draw per rate."""
    return np.array(_serial.poisson(_one_unit(s), rates), dtype=_F64)


def binomial(s: Stream, counts, probs, dtype: str) -> np.ndarray:
    """``torch.binomial``: one draw per (count, prob)."""
    return np.array(_serial.binomial(_one_unit(s), counts, probs, dtype), dtype=_F64)


def cauchy(s: Stream, n: int, median: float, sigma: float) -> np.ndarray:
    """``cauchy_(median, sigma)``."""
    return np.array(_serial.cauchy(_one_unit(s), n, median, sigma), dtype=_F64)


def log_normal(s: Stream, n: int, mean: float, std: float, cached):
    """``log_normal_(mean, std)``: (values, the kept normal)."""
    values, cached = _serial.log_normal(_normals(s), n, mean, std, cached, lambda v, a, b: float(fma64(v, a, b)))
    return np.array(values, dtype=_F64), cached


__all__ = ["Stream", "uniform", "normal", "integers", "full_range", "randperm", "exponential", "geometric",
           "bernoulli_scalar", "fma64", "standard_gamma", "dirichlet", "poisson", "binomial", "cauchy", "log_normal"]
