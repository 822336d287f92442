"""Gradients of the reduce kernels, written with kernels that have gradients themselves
(so they differentiate again). ArgMax, ArgMin, All and Any give ints and bools: no gradient."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..ops.common import reshape_to, scalar_tensor
from ..ops.creation import ones_like
from ..ops.movement import flip, narrow, pad, permute
from ..ops.reduce import cumprod
from ..registry import register_gradient
from ..shapes import numel, reduced_shape


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


def _exclusive_products(x, axis: int):
    """At each place, the product of the others along ``axis`` (PyTorch's prod_safe_zeros_backward):
    the cumulative product before it times the one after it, exact with zeros, NaN and inf."""
    n, ndim = x.shape[axis], x.ndim
    if n <= 1:
        return ones_like(x)
    keep = (0, 0) * (ndim - 1 - axis)
    before = pad(narrow(x, axis, 0, n - 1), keep + (1, 0), value=1)
    after = pad(narrow(x, axis, 1, n - 1), keep + (0, 1), value=1)
    return run_kernel(K.MUL, cumprod(before, axis), flip(cumprod(flip(after, axis), axis), axis))


def _products_of_others(x, axes):
    """The product of the others within each slice over ``axes`` (moved last and flattened into one)."""
    rest = [d for d in range(x.ndim) if d not in axes]
    order = rest + list(axes)
    moved = permute(x, order) if order != list(range(x.ndim)) else x
    flat = reshape_to(moved, [x.shape[d] for d in rest] + [numel([x.shape[d] for d in axes])])
    others = reshape_to(_exclusive_products(flat, flat.ndim - 1), moved.shape)
    inverse = [order.index(d) for d in range(x.ndim)]
    return permute(others, inverse) if order != list(range(x.ndim)) else others


@register_gradient(K.PROD, inputs_to_save=True, outputs_to_save=True)
def _prod(dy, saved, attrs):
    """PyTorch's prod_backward: ``prod / x`` when the input holds no zero; else the product of the others
    in each slice (its prod_safe_zeros_backward, from cumulative products), or, for the product of the
    whole tensor, that at a single zero and 0 for two or more. Chosen on the data without reading it
    back. Of a 0-d tensor it is 1, even at NaN or inf (PyTorch's too). ``prod(x, dim)`` of a 1-d ``x``
    reaches the kernel with keepdim (see ``ops.reduce.prod``), so the whole product is told apart."""
    x, y = saved
    if not x.ndim:
        return (dy,)
    axes, zero = attrs["axes"], _scalar(0, x)
    dy, y = _kept(dy, x.shape, attrs), _kept(y, x.shape, attrs)
    is_zero = run_kernel(K.EQUAL, x, zero)
    every = tuple(range(x.ndim))
    zeros = run_kernel(K.SUM, run_kernel(K.CAST, is_zero, dtype=x._dtype), axes=every, keepdim=False)
    others = _products_of_others(x, axes)
    if axes == every and not attrs["keepdim"]:   # the whole product: 0 beside two zeros or more
        others = run_kernel(K.WHERE, run_kernel(K.GREATER, zeros, _scalar(1, x)), zero, others)
    # prod / x, with x's zeros divided as 1: no 0/0 there to leak NaN into a second order
    plain = run_kernel(K.DIV, y, run_kernel(K.WHERE, is_zero, _scalar(1, x), x))
    return (run_kernel(K.MUL, dy, run_kernel(K.WHERE, run_kernel(K.EQUAL, zeros, zero), plain, others)),)


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
