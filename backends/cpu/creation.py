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


@cpu_kernel(K.ARANGE)
def arange(*, start, step, size, dtype):
    if dtype.kind == "f":
        return (start + step * np.arange(size, dtype=np.float64)).astype(np_dtype(dtype))
    return (start + step * np.arange(size, dtype=np.int64)).astype(np_dtype(dtype))


@cpu_kernel(K.RANDOM_VALUES)
def random_values(*, shape, dtype, values):
    return np.asarray(values).astype(np_dtype(dtype)).reshape(shape)
