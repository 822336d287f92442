"""Gradient of MatMul: two more matmuls with the transposes folded into the kernel's flags.
Broadcast batch dims are summed back by the engine, except for a matrix broadcast over a batch
(a Linear layer's weight on [B, T, C]): its gradient is one product over the flattened batch, with
no [B, K, N] array to sum. An input that needs no gradient (e.g. a layer's data input) costs nothing."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..registry import register_gradient
from ..shapes import numel
from .complex import conj


def _grad_a(dy, b, ta, tb):
    """dA = dC op(B)^T, or op(B) dC^T when A came transposed."""
    if ta:
        return run_kernel(K.MATMUL, b, dy, transpose_a=tb, transpose_b=True)
    return run_kernel(K.MATMUL, dy, b, transpose_a=False, transpose_b=not tb)


def _rows(x):
    """``x`` as [rows, last dim] (not reshape(-1, n): the last dim may be 0)."""
    return run_kernel(K.RESHAPE, x, shape=(numel(x.shape[:-1]), x.shape[-1]))


def _grad_b(dy, a, ta, tb):
    """dB = op(A)^T dC, or dC^T op(A) when B came transposed."""
    if tb:
        return run_kernel(K.MATMUL, dy, a, transpose_a=True, transpose_b=ta)
    return run_kernel(K.MATMUL, a, dy, transpose_a=not ta, transpose_b=False)


def folds_batch(a_shape, b_shape, ta):
    """Whether B's gradient is one product over A's flattened batch: B a matrix, A batched, A not
    transposed (so that A's rows run over the batch)."""
    return len(b_shape) == 2 < len(a_shape) and not ta


@register_gradient(K.MATMUL, inputs_to_save=True, kernel=K.MATMUL_GRAD, saved_for=[[1], [0]])
def _matmul(dy, saved, attrs):
    a, b = conj(saved[0]), conj(saved[1])   # (complex: the adjoints, PyTorch's convention)
    need_a, need_b = saved.needs_input_grad
    ta, tb = attrs.get("transpose_a", False), attrs.get("transpose_b", False)
    if need_b and folds_batch(a.shape, b.shape, ta):
        db = _grad_b(_rows(dy), _rows(a), False, tb)
    else:
        db = _grad_b(dy, a, ta, tb) if need_b else None
    return (_grad_a(dy, b, ta, tb) if need_a else None, db)
