"""cpu movement kernels (views where numpy allows; webgrad never mutates arrays in place)."""
import math

import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel


@cpu_kernel(K.RESHAPE)
def reshape(x, *, shape):
    return x.reshape(shape)   # the method: np.reshape is a Python wrapper ~0.8 µs slower


_COPY_BELOW = 4096   # elements: a copy this small costs 0.3 µs, np.broadcast_to's view 2.6 µs


@cpu_kernel(K.EXPAND)
def expand(x, *, shape):
    if math.prod(shape) >= _COPY_BELOW:
        return np.broadcast_to(x, shape)   # large: a read-only view, no copy
    out = np.empty(shape, x.dtype)
    out[...] = x
    return out


@cpu_kernel(K.TRANSPOSE)
def transpose(x, *, perm):
    return x.transpose(perm)


@cpu_kernel(K.SLICE)
def slice_(x, *, begin, end, step):
    # per dim, the elements are Python's range(begin, end, step): end == -1 with a negative step means
    # "through index 0", which a numpy slice spells as None
    return x[tuple(slice(b, None if e < 0 else e, s) for b, e, s in zip(begin, end, step))]


@cpu_kernel(K.CONCAT)
def concat(*xs, axis):
    return np.concatenate(xs, axis=axis)


@cpu_kernel(K.PAD)
def pad(x, *, pads, value):
    return np.pad(x, pads, mode="constant", constant_values=np.asarray(value).astype(x.dtype))
