"""cpu kernels that make tensors from nothing: fills, ranges, and the random numbers a Generator drew on the host."""
import numpy as np

from webgrad import kernel_names as K

from .backend_dtypes import np_dtype
from .registry import cpu_kernel


@cpu_kernel(K.FILL)
def fill(*, shape, value, dtype):
    if not shape:
        return np.array(value, dtype=np_dtype(dtype))  # 0-d: np.full costs 3x more
    return np.full(shape, value, dtype=np_dtype(dtype))


_SPLIT = 134217729.0   # 2**27 + 1: Veltkamp's splitter for float64


def _split(a):
    """(high, low) halves of float64 ``a``, each with at most 26 significant bits: high + low == a."""
    c = _SPLIT * a
    high = c - (c - a)
    return high, a - high


def fused_multiply_add(a, b, c):
    """``a * b + c`` rounded once, as a fused multiply-add (float64 arrays): the exact product's error
    term (Dekker) and the sum's (Knuth) are added back before the last rounding. (Correctly rounded
    but in rare ties of the double rounding this leaves; beyond float64's range, the plain result.)

    >>> float(fused_multiply_add(np.array(0.1), np.array(3.0), np.array(-0.3))), 0.1 * 3 - 0.3
    (2.7755575615628914e-17, 5.551115123125783e-17)
    """
    product = a * b
    (ah, al), (bh, bl) = _split(a), _split(b)
    product_error = ((ah * bh - product) + ah * bl + al * bh) + al * bl
    total = product + c
    sum_error = (product - (total - (total - product))) + (c - (total - product))
    return np.where(np.isfinite(total), total + (sum_error + product_error), total)   # inf - inf is no error


@cpu_kernel(K.ARANGE)
def arange(*, start, step, size, dtype):
    """start + step * i, i < size. Floats as PyTorch's cpu kernel computes them, to the last bit (see
    ``float_range``); integers exactly."""
    if dtype.kind == "f":
        return float_range(start, step, size, np_dtype(dtype))
    return (start + step * np.arange(size, dtype=np.int64)).astype(np_dtype(dtype))


def float_range(start: float, step: float, size: int, dtype) -> np.ndarray:
    """PyTorch's float ``arange`` (its cpu kernel, to the last bit): a loop over 32-byte vectors (8 float32,
    4 float64, 16 half lanes), two a turn. Each vector starts from start + step * i, computed in the
    accumulating type (float64; float32 for half precision) as a fused multiply-add and rounded to
    ``dtype``; its lanes add lane * step to that start in the accumulating type. Values after the last
    whole pair are start + step * i each. (PyTorch splits ranges beyond 32768 values between its
    threads, which moves the vectors' starts; this is its one-thread result.)"""
    dtype = np.dtype(dtype)
    acc = np.float64 if dtype.itemsize >= 4 else np.float32

    def rounded(x, to=acc):
        return x.astype(to).astype(np.float64)

    start, step = rounded(np.float64(start)), rounded(np.float64(step))
    lanes = 32 // dtype.itemsize
    i = np.arange(size, dtype=np.float64)
    paired = size - size % (2 * lanes)
    lane = i[:paired] % lanes
    vector_start = rounded(rounded(fused_multiply_add(step, i[:paired] - lane, start)), dtype)
    out = np.empty(size, dtype)
    out[:paired] = rounded(fused_multiply_add(lane, step, vector_start))
    out[paired:] = rounded(fused_multiply_add(step, i[paired:], start))
    return out


@cpu_kernel(K.LINSPACE)
def linspace(*, start, end, steps, dtype):
    """PyTorch's cpu linspace: step = (end - start) / (steps - 1), then start + step * i for the first
    half and end - step * (steps - 1 - i) for the rest: in float32/float64 as fused multiply-adds of
    the dtype; in half precision each operation rounded to it; for integers in float64, truncated."""
    out_dtype = np_dtype(dtype)
    i = np.arange(steps, dtype=np.float64)
    first = i < max(steps // 2, 1)      # one step: start
    if dtype.kind == "f" and out_dtype.itemsize < 4:
        return _half_linspace(start, end, steps, i, first, out_dtype)
    work = out_dtype.type if dtype.kind == "f" else np.float64
    start, end = np.float64(work(start)), np.float64(work(end))
    step = np.float64(work(work(end - start) / (steps - 1))) if steps > 1 else 0.0
    values = np.where(first, fused_multiply_add(step, i, start), fused_multiply_add(-step, steps - 1 - i, end))
    return values.astype(work).astype(out_dtype)


def _half_linspace(start, end, steps, i, first, dtype):
    """float16/bfloat16 linspace as PyTorch's Half arithmetic: every operation (the index converted too)
    computed in float32 and rounded to ``dtype``."""
    def r(x):
        return np.asarray(x, np.float32).astype(dtype).astype(np.float32)
    start, end = r(start), r(end)
    step = r(r(end - start) / r(max(steps - 1, 1)))
    values = np.where(first, r(start + r(step * r(i))), r(end - r(step * r(steps - 1 - i))))
    return values.astype(dtype)


@cpu_kernel(K.RANDOM_VALUES)
def random_values(*, shape, dtype, values):
    return np.asarray(values).astype(np_dtype(dtype)).reshape(shape)
