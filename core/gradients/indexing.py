"""Gradients of the indexing kernels: Gather and ScatterAdd are each other's adjoint."""
from .. import kernel_names as K
from ..ops import indexing as I
from ..ops import movement as M
from ..ops.creation import zeros
from ..registry import register_gradient


@register_gradient(K.GATHER, inputs_to_save=[1])
def _gather(dy, saved, attrs):
    (index,) = saved
    base = zeros(*saved.shapes[0], dtype=dy.dtype, backend=dy._backend)
    return I.scatter_add(base, attrs["axis"], index, dy), None


@register_gradient(K.SCATTER_ADD, inputs_to_save=[1])
def _scatter_add(dy, saved, attrs):
    (index,) = saved
    dsrc = I.gather(dy, attrs["axis"], index)
    pads = [p for i, s in zip(index.shape[::-1], saved.shapes[2][::-1]) for p in (0, s - i)]
    return dy, None, M.pad(dsrc, pads)
