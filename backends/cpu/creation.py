"""cpu kernels that make tensors from nothing: fills, ranges, seeded random numbers."""
import numpy as np

from webgrad import kernel_names as K

from .backend_dtypes import np_dtype
from .registry import cpu_kernel


@cpu_kernel(K.FILL)
def fill(*, shape, value, dtype):
    if not shape:
        return np.array(value, dtype=np_dtype(dtype))  # 0-d: np.full costs 3x more
    return np.full(shape, value, dtype=np_dtype(dtype))


@cpu_kernel(K.ARANGE)
def arange(*, start, step, size, dtype):
    if dtype.kind == "f":
        return (start + step * np.arange(size, dtype=np.float64)).astype(np_dtype(dtype))
    return (start + step * np.arange(size, dtype=np.int64)).astype(np_dtype(dtype))


@cpu_kernel(K.RANDOM_UNIFORM)
def random_uniform(*, shape, dtype, seed, low, high):
    r = np.random.default_rng(seed).random(shape, dtype=np.float64)
    return (low + (high - low) * r).astype(np_dtype(dtype))


@cpu_kernel(K.RANDOM_NORMAL)
def random_normal(*, shape, dtype, seed, mean, std):
    return (mean + std * np.random.default_rng(seed).standard_normal(shape)).astype(np_dtype(dtype))


@cpu_kernel(K.RANDOM_INT)
def random_int(*, shape, seed, low, high):
    return np.random.default_rng(seed).integers(low, high, size=shape, dtype=np.int32)
