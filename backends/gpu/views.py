"""GPU kernels for views: a view's elements read from its root's storage (AsStrided: the
elementwise identity read through the view's strides) and written into a copy of the root
(AsStridedScatter: a copy, then the strided copy of ``movement.copy_into``)."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import View, contiguous_strides, elementwise
from .movement import copy_into


def as_strided(be, x, *, shape, strides, offset):
    return elementwise(be, K.AS_STRIDED, "x0", [View(x, offset, strides)], tuple(shape), x.dtype)


def as_strided_scatter(be, x, src, *, shape, strides, offset):
    out = elementwise(be, K.AS_STRIDED_SCATTER, "x0", [x], x.shape, x.dtype)
    copy_into(be, out, View(src, 0, contiguous_strides(src.shape)), tuple(shape), offset, strides)
    return out


KERNELS = {K.AS_STRIDED: as_strided, K.AS_STRIDED_SCATTER: as_strided_scatter}
