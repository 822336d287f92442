"""The cpu backward kernels (core/kernel_names.py, "backward kernels"): the gradient rules of the
hot kernels (core/gradients) over numpy arrays, which a backward that records nothing runs
instead of the rule naming them. Each computes what its rule computes, in the same order
(tests/test_backward_kernels.py compares them on every case of the op tests); broadcast
gradients are summed back to the inputs' shapes by the engine, as for rules. Each gets the
output gradient and the saved tensors as arrays, and as keywords the forward's attrs plus those
of ``needs``, ``shapes`` and ``dtypes`` (per input) that it names (``register_gradient``). A
backward pass runs them inside the backend's ``gradient_scope`` (numpy's warnings off).

A holomorphic op's gradient is ``dy * conj(f'(z))`` (PyTorch's convention), so the kernels take the
conjugate of what multiplies ``dy`` with ndarray's ``conj()``, which gives a real array back as it is (no copy
but for ml_dtypes' bfloat16, and no Python call: these kernels run once per node of every backward pass).
"""
import math

import numpy as np

from webgrad import kernel_names as K
from webgrad.gradients.linalg import folds_batch
from webgrad.registry import register_kernel
from webgrad.shapes import reduced_shape

from .elementwise import _ZERO, _cast as cast, _where
from .indexing import scatter_add
from .linalg import matmul
from .losses import shifted, softmax_cross_entropy_grad
from .movement import expand
from .reduce import sum_kernel
from .registry import cpu_kernel
from .windows import col2im


def _kernel(*names):
    """Register the decorated function as the cpu backward kernel(s) ``names``."""
    def deco(fn):
        for name in names:
            cpu_kernel(name)(fn)   # (those named in opmath.OPMATH compute half precision in float32)
        return fn
    return deco


@_kernel(K.ADD_GRAD)
def _add(dy):
    return dy, dy


@_kernel(K.SUB_GRAD)
def _sub(dy, *, needs):
    return dy, (np.negative(dy) if needs[1] else None)


@_kernel(K.MUL_GRAD)
def _mul(dy, a, b, *, needs):
    return (dy * b.conj() if needs[0] else None, dy * a.conj() if needs[1] else None)


@_kernel(K.DIV_GRAD)
def _div(dy, a, b):
    a, b = a.conj(), b.conj()
    return dy / b, -dy * (a / b / b)   # PyTorch's order of operations: the same over- and underflows


@_kernel(K.NEG_GRAD)
def _neg(dy):
    return (np.negative(dy),)


@_kernel(K.EXP_GRAD)
def _exp(dy, y):
    return (dy * y.conj(),)


@_kernel(K.LOG_GRAD)
def _log(dy, x):
    return (dy / x.conj(),)


@_kernel(K.TANH_GRAD)
def _tanh(dy, y):
    y = y.conj()
    return (dy * (1 - y * y),)


@_kernel(K.SIGMOID_GRAD)
def _sigmoid(dy, y):
    return (dy * (1 - y) * y,)   # PyTorch's order


@_kernel(K.RELU_GRAD)
def _relu(dy, y):
    zero = _ZERO[dy.dtype]
    return (_where(y <= zero, zero, dy),)   # dy passes at NaN, as PyTorch's threshold_backward


@_kernel(K.WHERE_GRAD)
def _where_grad(dy, cond):
    zero = _ZERO[dy.dtype]
    return None, _where(cond, dy, zero), _where(cond, zero, dy)


@_kernel(K.CAST_GRAD)
def _cast(dy, *, dtypes, dtype):
    return (cast(dy, dtype=dtypes[0]) if dtypes[0].differentiable else None,)


@_kernel(K.SUM_GRAD)
def _sum(dy, *, shapes, axes, keepdim):
    shape = tuple(shapes[0])
    if not (keepdim or axes == tuple(range(len(axes)))):  # dy broadcasts as it is otherwise
        dy = dy.reshape(reduced_shape(shape, axes, True))
    return (expand(dy, shape=shape),)


@_kernel(K.MAX_GRAD, K.MIN_GRAD)
def _extreme(dy, x, y, *, axes, keepdim):
    kept = reduced_shape(x.shape, axes, True)
    hit = np.asarray(x == y.reshape(kept), dtype=x.dtype)   # an array even when 0-d
    ties = sum_kernel(hit, axes=axes, keepdim=True)       # the Sum kernel: fast over a pooling window's axis
    return (np.multiply(hit, dy.reshape(kept) / ties, out=hit),)   # hit is ours: written in place


def _batch_rows(x):
    """``x`` as [rows, last dim] (not reshape(-1, n): the last dim may be 0)."""
    return x.reshape(math.prod(x.shape[:-1]), x.shape[-1])


@_kernel(K.MATMUL_GRAD)
def _matmul(dy, a, b, *, needs, shapes, transpose_a=False, transpose_b=False):
    ta, tb = transpose_a, transpose_b
    a, b = a.conj(), b.conj()
    da = db = None
    if needs[0]:
        da = matmul(b, dy, transpose_a=tb, transpose_b=True) if ta else matmul(dy, b, transpose_b=not tb)
    if needs[1] and folds_batch(a.shape, shapes[1], ta):   # b broadcast over a's batch
        a, dy = _batch_rows(a), _batch_rows(dy)
        db = matmul(dy, a, transpose_a=True) if tb else matmul(a, dy, transpose_a=True)
    elif needs[1]:
        db = matmul(dy, a, transpose_a=True, transpose_b=ta) if tb else matmul(a, dy, transpose_a=not ta)
    return da, db


@_kernel(K.RESHAPE_GRAD)
def _reshape(dy, *, shapes, shape):
    return (dy.reshape(shapes[0]),)


@_kernel(K.TRANSPOSE_GRAD)
def _transpose(dy, *, perm):
    return (dy.transpose(np.argsort(perm)),)


@_kernel(K.EXPAND_GRAD)
def _expand(dy, *, shape):
    return (dy,)


@_kernel(K.GATHER_GRAD)
def _gather(dy, index, *, shapes, axis):
    return scatter_add(np.zeros(shapes[0], dy.dtype), index, dy, axis=axis), None


@_kernel(K.IM2COL_GRAD)
def _im2col(dy, *, shapes, kernel_size, stride, padding, dilation):
    return (col2im(dy, output_size=tuple(shapes[0][2:]), kernel_size=kernel_size, stride=stride, padding=padding,
                   dilation=dilation),)


@_kernel(K.SOFTMAX_CROSS_ENTROPY_GRAD)
def _softmax_cross_entropy(dy, x, target, *, ignore_index, reduction):
    """See ``losses.softmax_cross_entropy_grad``."""
    e = np.exp(shifted(x))
    attrs = {"ignore_index": ignore_index, "reduction": reduction}
    return softmax_cross_entropy_grad(dy, e, np.add.reduce(e, axis=1, keepdims=True), target, attrs), None
