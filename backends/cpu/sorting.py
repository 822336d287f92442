"""cpu sorting kernel: a stable numpy argsort along one axis, and the values it orders."""
import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel


def _keys(x):
    """What to compare: half precision by its exact float32 values (numpy's sort of ml_dtypes'
    bfloat16 does not order it at all), every other dtype as it is."""
    return x.astype(np.float32) if x.dtype.itemsize == 2 else x


def _stable_order(keys, axis, descending):
    """Indices that sort ``keys`` along ``axis``, equal keys in their original order. numpy puts NaN
    last; descending sorts the reversed axis ascending and reverses the result, so equal keys keep
    their order and NaN comes first (sorting ``-keys`` would do neither for NaN, ints or bools)."""
    if not descending:
        return np.argsort(keys, axis=axis, kind="stable")
    reversed_order = np.argsort(np.flip(keys, axis), axis=axis, kind="stable")
    return (keys.shape[axis] - 1) - np.flip(reversed_order, axis)


@cpu_kernel(K.SORT)
def sort(x, *, axis, descending):
    order = _stable_order(_keys(x), axis, descending)
    return np.take_along_axis(x, order, axis), order.astype(np.int64, copy=False)
