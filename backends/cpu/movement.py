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


@cpu_kernel(K.SPLIT)
def split(x, *, sizes, axis):
    """x's consecutive pieces of ``sizes`` along ``axis`` (views; np.split's Python costs ~10 µs)."""
    index, at, out = [slice(None)] * x.ndim, 0, []
    for n in sizes:
        index[axis] = slice(at, at + n)
        out.append(x[tuple(index)])
        at += n
    return tuple(out)


@cpu_kernel(K.PAD)
def pad(x, *, pads, value):
    """``x`` inside a block of ``value``, (lo, hi) more elements per dim. One fill and one slice
    assignment: np.pad's Python takes ~80 µs a call, and a slice's gradient is a Pad (an LSTM's
    chunked gates make dozens a step)."""
    out = np.full([n + lo + hi for n, (lo, hi) in zip(x.shape, pads)], np.asarray(value).astype(x.dtype), x.dtype)
    out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape, pads))] = x
    return out
