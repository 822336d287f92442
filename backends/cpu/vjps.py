"""Native VJPs on cpu: the gradient rules of the hot kernels (core/gradients), over numpy arrays.

``backward`` uses one in place of its rule when it records no graph of the backward
(``create_graph=False``): a numpy call or two, where the rule wraps Tensors and dispatches
each gradient kernel through ``run_kernel``. Each computes what its rule computes, in the
same order (tests/test_vjps.py compares them on every case of the op tests); broadcast
gradients are summed back to the inputs' shapes by the engine, as for rules. Each gets
``(dy, saved, node)``: numpy arrays for dy and the saved tensors, and the node's ``attrs``,
``shapes``, ``dtypes`` and ``next`` (an input's edge is None when it needs no gradient).
"""
import math

import numpy as np

from webgrad import kernel_names as K
from webgrad.gradients.linalg import folds_batch
from webgrad.registry import register_vjp
from webgrad.shapes import reduced_shape

from .backend_dtypes import np_dtype
from .elementwise import _ZERO, _where
from .indexing import scatter_add
from .linalg import matmul
from .losses import shifted, softmax_cross_entropy_grad
from .movement import expand
from .reduce import sum_kernel
from .windows import col2im


def _vjp(name):
    """Register the decorated function as kernel ``name``'s native VJP (backward runs it inside
    ``CpuBackend.gradient_scope``, with numpy's warnings off)."""
    def deco(fn):
        register_vjp(name, "cpu", fn)
        return fn
    return deco


@_vjp(K.ADD)
def _add(dy, saved, node):
    return dy, dy


@_vjp(K.SUB)
def _sub(dy, saved, node):
    return dy, (np.negative(dy) if node.next[1] is not None else None)


@_vjp(K.MUL)
def _mul(dy, saved, node):
    a, b = saved
    need_a, need_b = node.next
    return (dy * b if need_a is not None else None, dy * a if need_b is not None else None)


@_vjp(K.DIV)
def _div(dy, saved, node):
    a, b = saved   # PyTorch's order of operations (-dy * a / (b * b)): the same over- and underflows
    return dy / b, -dy * a / (b * b)


@_vjp(K.NEG)
def _neg(dy, saved, node):
    return (np.negative(dy),)


@_vjp(K.EXP)
def _exp(dy, saved, node):
    return (dy * saved[0],)


@_vjp(K.LOG)
def _log(dy, saved, node):
    return (dy / saved[0],)


@_vjp(K.TANH)
def _tanh(dy, saved, node):
    (y,) = saved
    return (dy * (1 - y * y),)


@_vjp(K.SIGMOID)
def _sigmoid(dy, saved, node):
    (y,) = saved
    return (dy * (y * (1 - y)),)


@_vjp(K.RELU)
def _relu(dy, saved, node):
    (y,) = saved
    zero = _ZERO[dy.dtype]
    return (_where(y <= zero, zero, dy),)   # dy passes at NaN, as PyTorch's threshold_backward


@_vjp(K.WHERE)
def _where_vjp(dy, saved, node):
    (cond,) = saved
    zero = _ZERO[dy.dtype]
    return None, _where(cond, dy, zero), _where(cond, zero, dy)


@_vjp(K.CAST)
def _cast(dy, saved, node):
    dtype = node.dtypes[0]
    return (dy.astype(np_dtype(dtype)) if dtype.is_floating else None,)


@_vjp(K.SUM)
def _sum(dy, saved, node):
    shape, axes = tuple(node.shapes[0]), node.attrs["axes"]
    if not (node.attrs["keepdim"] or axes == tuple(range(len(axes)))):  # dy broadcasts as it is otherwise
        dy = dy.reshape(reduced_shape(shape, axes, True))
    return (expand(dy, shape=shape),)


def _extreme(dy, saved, node):
    x, y = saved
    axes = node.attrs["axes"]
    kept = reduced_shape(x.shape, axes, True)
    hit = np.asarray(x == y.reshape(kept), dtype=x.dtype)   # an array even when 0-d
    ties = sum_kernel(hit, axes=axes, keepdim=True)       # the Sum kernel: fast over a pooling window's axis
    return (np.multiply(hit, dy.reshape(kept) / ties, out=hit),)   # hit is ours: written in place


register_vjp(K.MAX, "cpu", _extreme)
register_vjp(K.MIN, "cpu", _extreme)


def _batch_rows(x):
    """``x`` as [rows, last dim] (not reshape(-1, n): the last dim may be 0)."""
    return x.reshape(math.prod(x.shape[:-1]), x.shape[-1])


@_vjp(K.MATMUL)
def _matmul(dy, saved, node):
    a, b = saved
    need_a, need_b = node.next
    ta, tb = node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)
    da = db = None
    if need_a is not None:
        da = matmul(b, dy, transpose_a=tb, transpose_b=True) if ta else matmul(dy, b, transpose_b=not tb)
    if need_b is not None and folds_batch(a.shape, node.shapes[1], ta):   # b broadcast over a's batch
        a, dy = _batch_rows(a), _batch_rows(dy)
        db = matmul(dy, a, transpose_a=True) if tb else matmul(a, dy, transpose_a=True)
    elif need_b is not None:
        db = matmul(dy, a, transpose_a=True, transpose_b=ta) if tb else matmul(a, dy, transpose_a=not ta)
    return da, db


@_vjp(K.RESHAPE)
def _reshape(dy, saved, node):
    return (dy.reshape(node.shapes[0]),)


@_vjp(K.TRANSPOSE)
def _transpose(dy, saved, node):
    return (dy.transpose(np.argsort(node.attrs["perm"])),)


@_vjp(K.EXPAND)
def _expand(dy, saved, node):
    return (dy,)


@_vjp(K.GATHER)
def _gather(dy, saved, node):
    (index,) = saved
    return scatter_add(np.zeros(node.shapes[0], dy.dtype), index, dy, axis=node.attrs["axis"]), None


@_vjp(K.IM2COL)
def _im2col(dy, saved, node):
    return (col2im(dy, output_size=tuple(node.shapes[0][2:]), **node.attrs),)


@_vjp(K.SOFTMAX_CROSS_ENTROPY)
def _softmax_cross_entropy(dy, saved, node):
    """See ``losses.softmax_cross_entropy_grad``."""
    x, target = saved
    e = np.exp(shifted(x))
    return softmax_cross_entropy_grad(dy, e, np.add.reduce(e, axis=1, keepdims=True), target, node.attrs), None
