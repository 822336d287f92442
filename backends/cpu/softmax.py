"""cpu Softmax and LogSoftmax along one axis, and their backward kernels, each a few numpy passes.

Half precision (float16, bfloat16) is computed in float32 and rounded once at the end, as
PyTorch's cpu kernels do."""
import numpy as np

from webgrad import kernel_names as K

from .elementwise import _quiet
from .registry import cpu_kernel


def _work(a):
    """``a`` in the dtype the arithmetic runs in: float32 for 2-byte floats, its own otherwise."""
    return a.astype(np.float32) if a.dtype.itemsize == 2 else a


def row_max(x):
    """The max along the last axis (keepdims), NaN-propagating as np.maximum.reduce: the row's halves
    folded together by np.maximum, log2(n) vectorised passes over ever shorter rows, where numpy's
    reduction along a short contiguous axis takes ~4x longer (attention's scores: rows of 64).

    >>> row_max(np.array([[1.0, 5.0, 2.0], [0.0, -1.0, 3.0]])).tolist()
    [[5.0], [3.0]]
    """
    n = x.shape[-1]
    if n <= 2:
        return np.maximum.reduce(x, axis=-1, keepdims=True)
    while n > 1:
        h = n // 2
        head = np.maximum(x[..., :h], x[..., h:2 * h])
        if n % 2:
            np.maximum(head[..., :1], x[..., 2 * h:], out=head[..., :1])
        x, n = head, h
    return x


def row_sum(x):
    """The sum along the last axis (keepdims) of a float32/float64 array, as one BLAS product with a
    vector of ones (numpy's reduction along a short contiguous axis is ~3x slower)."""
    return np.matmul(x, np.ones(x.shape[-1], x.dtype))[..., None]


def _shifted(x, axis):
    """x minus its max along ``axis`` (a new array, in the working dtype)."""
    x = _work(x)
    return x - (row_max(x) if axis in (-1, x.ndim - 1) else np.maximum.reduce(x, axis=axis, keepdims=True))


def _sum(a, axis):
    return row_sum(a) if axis in (-1, a.ndim - 1) else np.add.reduce(a, axis=axis, keepdims=True)


@cpu_kernel(K.SOFTMAX)
@_quiet
def softmax(x, *, axis):
    """exp(x - max) / sum(exp(x - max)) along ``axis`` (a row of -inf gives NaN, as in PyTorch)."""
    if x.size == 0:
        return x.copy()
    e = np.exp(_shifted(x, axis))
    e /= _sum(e, axis)
    return e.astype(x.dtype, copy=False)


@cpu_kernel(K.LOG_SOFTMAX)
@_quiet
def log_softmax(x, *, axis):
    """x - max - log(sum(exp(x - max))) along ``axis``."""
    if x.size == 0:
        return x.copy()
    z = _shifted(x, axis)
    z -= np.log(_sum(np.exp(z), axis))
    return z.astype(x.dtype, copy=False)


@cpu_kernel(K.SOFTMAX_GRAD)
@_quiet
def softmax_grad(dy, y, *, axis):
    """y * (dy - sum(dy * y)) along ``axis``: Softmax's backward from its output y."""
    dyw, yw = _work(dy), _work(y)
    out = dyw - _sum(dyw * yw, axis)
    out *= yw
    return out.astype(y.dtype, copy=False)


@cpu_kernel(K.LOG_SOFTMAX_GRAD)
@_quiet
def log_softmax_grad(dy, y, *, axis):
    """dy - exp(y) * sum(dy) along ``axis``: LogSoftmax's backward from its output y."""
    dyw = _work(dy)
    out = np.exp(_work(y))
    out *= _sum(dyw, axis)
    np.subtract(dyw, out, out=out)
    return out.astype(y.dtype, copy=False)
