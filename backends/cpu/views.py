"""cpu kernels for views: a view's elements read from its root's storage (AsStrided) and written
into a copy of it (AsStridedScatter), through numpy's strided views of the flat root."""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from webgrad import kernel_names as K

from .registry import cpu_kernel


def _window(flat, shape, strides, offset):
    """A strided numpy view of the 1-d array ``flat`` (element strides and offset)."""
    return as_strided(flat[offset:], shape=shape, strides=[s * flat.itemsize for s in strides])


@cpu_kernel(K.AS_STRIDED)
def as_strided_(x, *, shape, strides, offset):
    return _window(np.ascontiguousarray(x).reshape(-1), shape, strides, offset).copy()


@cpu_kernel(K.AS_STRIDED_SCATTER)
def as_strided_scatter(x, src, *, shape, strides, offset):
    out = np.array(x, copy=True, order="C")
    if out.size:
        _window(out.reshape(-1), shape, strides, offset)[...] = src
    return out
