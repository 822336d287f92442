"""Gradients of the indexing kernels: Gather and ScatterAdd are each other's adjoint; IndexCopy
sends each written slice's gradient to the source slice that won it."""
from .. import kernel_names as K
from ..dtypes import int64
from ..engine import run_kernel
from ..ops import indexing as I
from ..ops import movement as M
from ..ops.common import scalar_tensor
from ..ops.creation import arange, full, zeros
from ..registry import register_gradient


@register_gradient(K.GATHER, inputs_to_save=[1], kernel=K.GATHER_GRAD)
def _gather(dy, saved, attrs):
    (index,) = saved
    base = zeros(saved.shapes[0], dtype=dy.dtype, backend=dy._backend)
    return I.scatter_add(base, attrs["axis"], index, dy), None


@register_gradient(K.SCATTER_ADD, inputs_to_save=[1])
def _scatter_add(dy, saved, attrs):
    (index,) = saved
    dsrc = I.gather(dy, attrs["axis"], index)
    pads = [p for i, s in zip(index.shape[::-1], saved.shapes[2][::-1]) for p in (0, s - i)]
    return dy, None, M.pad(dsrc, pads)


def _winners(index, n):
    """Bool, one per entry of the 1-d ``index`` into a dim of size ``n``: whether the entry's write
    stands (no later entry repeats its index), by IndexCopy itself (the last write wins)."""
    be, m = index._backend, index.shape[0]
    order = arange(m, dtype=int64, backend=be)
    claims = run_kernel(K.INDEX_COPY, full((n,), -1, dtype=int64, backend=be), index, order, axis=0)
    return run_kernel(K.EQUAL, run_kernel(K.GATHER, claims, index, axis=0), order)


@register_gradient(K.INDEX_COPY, inputs_to_save=[1])
def _index_copy(dy, saved, attrs):
    """x's gradient is dy with the written slices zeroed; the source's is dy at the slices it wrote,
    for the entries whose write stands (a write overwritten by a later repeat of its index gets 0)."""
    (index,) = saved
    axis, source_shape = attrs["axis"], saved.shapes[2]
    dx = run_kernel(K.INDEX_COPY, dy, index, zeros(source_shape, dtype=dy.dtype, backend=dy._backend), axis=axis)
    stands = M.reshape(_winners(index, dy.shape[axis]), index.shape + (1,) * (dy.ndim - axis - 1))
    dsource = run_kernel(K.WHERE, stands, I.index_select(dy, axis, index), scalar_tensor(0, dy.dtype, dy._backend))
    return dx, None, dsource
