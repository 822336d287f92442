"""Gradients of the reduce kernels, written with kernels that have gradients themselves
(so they differentiate again). ArgMax, ArgMin, All and Any give ints and bools: no gradient."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..ops.common import scalar_tensor
from ..ops.movement import flip
from ..registry import register_gradient
from ..shapes import reduced_shape


def _scalar(value, like):
    return scalar_tensor(value, like._dtype, like._backend)


def _kept(t, shape, attrs):
    """A reduced tensor (``dy`` or the output) in the keepdim shape of the input ``shape``."""
    return run_kernel(K.RESHAPE, t, shape=reduced_shape(shape, attrs["axes"], True))


@register_gradient(K.SUM, kernel=K.SUM_GRAD)
def _sum(dy, saved, attrs):
    shape, axes = tuple(saved.shapes[0]), attrs["axes"]
    if not (attrs["keepdim"] or axes == tuple(range(len(axes)))):  # dy broadcasts as it is otherwise
        dy = _kept(dy, shape, attrs)
    return (run_kernel(K.EXPAND, dy, shape=shape),)


@register_gradient(K.PROD, inputs_to_save=True)
def _prod(dy, saved, attrs):
    """d prod / d x_i is the product of the others: prod(x) / x_i without zeros; with exactly one
    zero, the product of the nonzeros at that zero and 0 elsewhere; with several zeros, 0. Of a 0-d
    tensor it is 1, even at NaN or inf (PyTorch's too)."""
    (x,) = saved
    axes, zero, one = attrs["axes"], _scalar(0, x), _scalar(1, x)
    if not x.ndim:
        return (dy,)
    is_zero = run_kernel(K.EQUAL, x, zero)
    nonzero = run_kernel(K.WHERE, is_zero, one, x)
    p = run_kernel(K.PROD, nonzero, axes=axes, keepdim=True)
    zeros = run_kernel(K.SUM, run_kernel(K.CAST, is_zero, dtype=x._dtype), axes=axes, keepdim=True)
    at_zero = run_kernel(K.WHERE, run_kernel(K.EQUAL, zeros, one), p, zero)
    elsewhere = run_kernel(K.WHERE, run_kernel(K.EQUAL, zeros, zero), run_kernel(K.DIV, p, nonzero), zero)
    others = run_kernel(K.WHERE, is_zero, at_zero, elsewhere)
    return (run_kernel(K.MUL, _kept(dy, x.shape, attrs), others),)


def _extreme(dy, saved, attrs):
    """dy goes to the positions equal to the result, split evenly among ties (as torch.amax)."""
    x, y = saved
    hit = run_kernel(K.CAST, run_kernel(K.EQUAL, x, _kept(y, x.shape, attrs)), dtype=x._dtype)
    ties = run_kernel(K.SUM, hit, axes=attrs["axes"], keepdim=True)
    return (run_kernel(K.MUL, hit, run_kernel(K.DIV, _kept(dy, x.shape, attrs), ties)),)   # divide the small one


register_gradient(K.MAX, _extreme, inputs_to_save=[0], outputs_to_save=[0], kernel=K.MAX_GRAD)
register_gradient(K.MIN, _extreme, inputs_to_save=[0], outputs_to_save=[0], kernel=K.MIN_GRAD)


@register_gradient(K.CUMSUM)
def _cumsum(dy, saved, attrs):
    """The reverse cumulative sum of dy: flip, cumsum, flip back."""
    axis = attrs["axis"]
    return (flip(run_kernel(K.CUMSUM, flip(dy, axis), axis=axis), axis),)
