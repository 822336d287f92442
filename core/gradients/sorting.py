"""Gradient of Sort: each value's gradient goes back to the position it came from. The indices
(int64) get none."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..registry import register_gradient


@register_gradient(K.SORT, outputs_to_save=[1])
def _sort(dy, saved, attrs):
    """``dx[i] = dvalues[j]`` where ``indices[j] == i``: a gather through the inverse permutation,
    which sorting the indices gives (sorting, not ScatterAdd: a GPU ScatterAdd walks the whole axis
    for every element). Made of kernels with gradients, so it differentiates again."""
    (indices,) = saved
    axis = attrs["axis"]
    _, inverse = run_kernel(K.SORT, indices, axis=axis, descending=False)
    return (run_kernel(K.GATHER, dy[0], inverse, axis=axis),)
