"""PyTorch's CPU random numbers in plain Python, where numpy is missing (webgrad in the browser
without numpy): the same mt19937 stream and draws as ``torch_random`` (Python's ``random`` module is
mt19937; its state is set to PyTorch's seeding), returned as lists. Bitwise as PyTorch's, except
float32 normals from 16 values up (Box-Muller in float64 math rounded to float32, within an ulp or
two of PyTorch's float32 polynomials) and float64 uniforms with bounds (no fused multiply-add).

>>> [round(v, 6) for v in uniform(Stream(0), 3, "float32")]
[0.496257, 0.768222, 0.088477]
"""
from __future__ import annotations

import array
import math
import random as _random

from . import torch_random_samplers as _serial

_N = 624
_TWO_PI = 2.0 * math.pi
_BITS = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}
_INT_MAX_BITS = {"int64": 63, "int32": 31, "int16": 15, "int8": 7, "uint8": 8}
_LARGE_RANDPERM = (2 ** 32 - 1) // 20


def _seeded(seed: int) -> list:
    key = [seed & 0xFFFFFFFF]
    for i in range(1, _N):
        key.append((1812433253 * (key[-1] ^ (key[-1] >> 30)) + i) & 0xFFFFFFFF)
    return key


class Stream:
    """mt19937 seeded as PyTorch seeds it (init_genrand of the seed's low 32 bits).

    >>> Stream(0).random(1)
    [2357136044]
    """

    def __init__(self, seed: int):
        self.engine = _random.Random()
        self.set(_seeded(seed), _N)

    def random(self, n: int) -> list:
        if n <= 0:
            return []
        words = array.array("I", self.engine.getrandbits(32 * n).to_bytes(4 * n, "little"))
        return words.tolist()

    def random64(self, n: int) -> list:
        raw = self.random(2 * n)
        return [(raw[2 * i] << 32) | raw[2 * i + 1] for i in range(n)]

    def get(self) -> tuple:
        state = self.engine.getstate()[1]
        return list(state[:_N]), state[_N]

    def set(self, key, pos: int) -> None:
        self.engine.setstate((3, tuple(int(k) for k in key) + (int(pos),), None))


def _round32(values) -> list:
    return array.array("f", values).tolist()


def _unit(s, n, dtype):
    if dtype == "float64":
        return [(x & ((1 << 53) - 1)) * 2.0 ** -53 for x in s.random64(n)]
    bits = _BITS.get(dtype, 24)
    scale = 2.0 ** -bits
    return [(x & ((1 << bits) - 1)) * scale for x in s.random(n)]


def uniform(s, n, dtype, low=0.0, high=1.0) -> list:
    x = _unit(s, n, dtype if dtype in _BITS else "float32")
    if dtype == "float64":
        return x if (low, high) == (0.0, 1.0) else [v * (high - low) + low for v in x]
    lo, hi = _round32([low, high])
    width = _round32([hi - lo])[0]
    return _round32([v * width + lo for v in x])


def _box_muller16(u, f32):
    out = list(u)
    for b in range(0, len(u), 16):
        for j in range(8):
            u1, u2 = 1 - u[b + j], u[b + j + 8]
            radius = math.sqrt(-2 * math.log(u1))
            theta = (_round32([_TWO_PI])[0] * u2) if f32 else _TWO_PI * u2
            out[b + j], out[b + j + 8] = radius * math.cos(theta), radius * math.sin(theta)
    return _round32(out) if f32 else out


def normal(s, n, dtype, mean, std, contiguous, cached):
    if n >= 16 and contiguous:
        f32 = dtype != "float64"
        kind = "float32" if f32 else "float64"
        data = _unit(s, n, kind)
        whole = n // 16 * 16
        data[:whole] = _box_muller16(data[:whole], f32)
        if n % 16:
            data[n - 16:] = _box_muller16(_unit(s, 16, kind), f32)
        return [v * std + mean for v in data], cached
    out, cached = scalar_normals(lambda: _unit(s, 2, "float64"), n, cached)
    return [v * std + mean for v in out], cached


def scalar_normals(pair, n: int, cached) -> tuple:
    """PyTorch's normal_distribution<double>, one value at a time: each pair of uniforms (u1, u2) from
    ``pair()`` gives r cos(2 pi u1) now and keeps r sin(2 pi u1) for the next value. Returns
    (the ``n`` values as a list, the kept value or None)."""
    out = []
    while len(out) < n:
        if cached is not None:
            out.append(cached)
            cached = None
            continue
        u1, u2 = pair()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        cached = r * math.sin(_TWO_PI * u1)
        out.append(r * math.cos(_TWO_PI * u1))
    return out, cached


def integers(s, n, low, high) -> list:
    span = high - low
    draws = s.random64(n) if span >= 1 << 28 else s.random(n)
    return [d % span + low for d in draws]


def full_range(s, n, dtype) -> list:
    if dtype == "bool":
        return [d & 1 for d in s.random(n)]
    draws = s.random64(n) if dtype in ("float64", "int64") else s.random(n)
    span = (1 << _BITS[dtype]) + 1 if dtype in _BITS else 1 << _INT_MAX_BITS[dtype]
    return [d % span for d in draws]


def randperm(s, n) -> list:
    if n >= _LARGE_RANDPERM:
        order = [0] * n
        for i, d in enumerate(s.random64(n)):
            z = d % (i + 1)
            order[i] = order[z]
            order[z] = i
        return order
    order = list(range(n))
    for i, d in enumerate(s.random(n - 1) if n > 1 else []):
        z = i + d % (n - i)
        order[i], order[z] = order[z], order[i]
    return order


def exponential(s, n, lambd) -> list:
    scale = -1.0 / lambd
    return [scale * math.log1p(-u) for u in _unit(s, n, "float64")]


def geometric(s, n, p) -> list:
    scale = math.log1p(-p)
    return [math.ceil(math.log(u) / scale) if u > 0 else math.inf for u in _unit(s, n, "float64")]


def bernoulli_scalar(s, n, p) -> list:
    return [u < p for u in _unit(s, n, "float64")]


def _one_unit(s):
    return lambda: _unit(s, 1, "float64")[0]


def _normals(s):
    return lambda n, cached: scalar_normals(lambda: _unit(s, 2, "float64"), n, cached)


def standard_gamma(s, alphas, dtype, cached) -> tuple:
    return _serial.standard_gamma(_one_unit(s), _normals(s), alphas, dtype, cached)


def dirichlet(s, alphas, k, cached) -> tuple:
    return _serial.dirichlet(_one_unit(s), _normals(s), alphas, k, cached)


def poisson(s, rates) -> list:
    return _serial.poisson(_one_unit(s), rates)


def binomial(s, counts, probs, dtype) -> list:
    return _serial.binomial(_one_unit(s), counts, probs, dtype)


def cauchy(s, n, median, sigma) -> list:
    return _serial.cauchy(_one_unit(s), n, median, sigma)


def log_normal(s, n, mean, std, cached) -> tuple:
    return _serial.log_normal(_normals(s), n, mean, std, cached)


__all__ = ["Stream", "uniform", "normal", "integers", "full_range", "randperm", "exponential", "geometric",
           "bernoulli_scalar", "standard_gamma", "dirichlet", "poisson", "binomial", "cauchy", "log_normal"]
