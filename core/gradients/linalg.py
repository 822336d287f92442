"""Gradient of MatMul: two more matmuls with the transposes folded into the kernel's flags.
Broadcast batch dims are summed back by the engine."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..registry import register_gradient


@register_gradient(K.MATMUL, inputs_to_save=[0, 1])
def _matmul(dy, saved, attrs):
    """For C = op(A) op(B): dA = dC op(B)^T (or op(B) dC^T when A came transposed), and
    dB = op(A)^T dC (or dC^T op(A) when B came transposed)."""
    a, b = saved
    ta, tb = attrs.get("transpose_a", False), attrs.get("transpose_b", False)
    if ta:
        da = run_kernel(K.MATMUL, b, dy, transpose_a=tb, transpose_b=True)
    else:
        da = run_kernel(K.MATMUL, dy, b, transpose_a=False, transpose_b=not tb)
    if tb:
        db = run_kernel(K.MATMUL, dy, a, transpose_a=True, transpose_b=ta)
    else:
        db = run_kernel(K.MATMUL, a, dy, transpose_a=not ta, transpose_b=False)
    return da, db
