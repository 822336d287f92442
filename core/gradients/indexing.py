"""Gradients of the indexing kernels: Gather and ScatterAdd are each other's adjoint; IndexCopy
gathers each written place's gradient for the source slices written there."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..ops import indexing as I
from ..ops import movement as M
from ..ops.creation import zeros
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


@register_gradient(K.INDEX_COPY, inputs_to_save=[1])
def _index_copy(dy, saved, attrs):
    """x's gradient is dy with the written slices zeroed; the source's is dy at the slices it wrote, every
    entry's, as PyTorch's index_copy and index_put (a write overwritten by a later repeat of its index gets
    its place's gradient too)."""
    (index,) = saved
    axis, source_shape = attrs["axis"], saved.shapes[2]
    dx = run_kernel(K.INDEX_COPY, dy, index, zeros(source_shape, dtype=dy.dtype, backend=dy._backend), axis=axis)
    return dx, None, I.index_select(dy, axis, index)
