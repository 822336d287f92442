"""PyTorch's other names for webgrad's ops (``divide`` is ``div``, ``greater`` is ``gt``,
``moveaxis`` is ``movedim`` ...), as functions and Tensor methods; the in-place method forms
PyTorch has (``x.eq_(y)``, ``x.cumsum_(0)``, ``x.index_add_(...)`` ...); and the top-level
``torch.softmax``/``torch.conv2d`` family, which are ``nn.functional``'s under PyTorch's signatures.

>>> import webgrad as wg
>>> wg.greater(wg.tensor([1, 3]), 2).tolist(), wg.tensor([1.0, 5.0]).eq_(wg.tensor([1.0, 2.0])).tolist()
([False, True], [1.0, 0.0])
"""
from __future__ import annotations

from . import binary, indexing, movement, reduce, unary
from .common import inplace_method

_SAME = {
    "divide": binary.div, "true_divide": binary.div, "multiply": binary.mul, "subtract": binary.sub,
    "greater": binary.gt, "greater_equal": binary.ge, "less": binary.lt, "less_equal": binary.le,
    "not_equal": binary.ne, "arctan2": binary.atan2, "moveaxis": movement.movedim,
}
globals().update(_SAME)


def concatenate(tensors, dim=0, *, axis=None):
    """``cat(tensors, dim)``: numpy's name, as ``torch.concatenate`` (which takes ``axis=`` too).

    >>> import webgrad as wg
    >>> wg.concatenate([wg.ones(1), wg.zeros(2)]).tolist()
    [1.0, 0.0, 0.0]
    """
    return movement.cat(tensors, dim if axis is None else axis)


def detach(input):
    """``input.detach()``.

    >>> import webgrad as wg
    >>> wg.detach(wg.ones(1, requires_grad=True)).requires_grad
    False
    """
    return input.detach()


def rsub(input, other, alpha=1):
    """``other - alpha * input`` (``sub`` with its operands swapped).

    >>> import webgrad as wg
    >>> wg.rsub(wg.tensor([1, 2]), 10).tolist()
    [9, 8]
    """
    return binary.sub(other, input, alpha=alpha)


def positive(input):
    """``input`` itself (``+input``); a bool tensor is refused, as in PyTorch.

    >>> import webgrad as wg
    >>> x = wg.ones(1); wg.positive(x) is x
    True
    """
    if input.dtype.name == "bool":
        raise RuntimeError("positive: the `+` operator, on a bool tensor is not supported.")
    return input


def softmax(input, dim, dtype=None):
    """``torch.softmax``: ``nn.functional.softmax`` with a required ``dim``.

    >>> import webgrad as wg
    >>> wg.softmax(wg.zeros(2), 0).tolist()
    [0.5, 0.5]
    """
    from ..nn.functional import softmax as f
    return f(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    """``torch.log_softmax``: ``nn.functional.log_softmax`` with a required ``dim``.

    >>> import webgrad as wg
    >>> round(wg.log_softmax(wg.zeros(2), 0)[0].item(), 4)
    -0.6931
    """
    from ..nn.functional import log_softmax as f
    return f(input, dim, dtype=dtype)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv1d``: ``nn.functional.conv1d``."""
    from ..nn.functional import conv1d as f
    return f(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv2d``: ``nn.functional.conv2d``.

    >>> import webgrad as wg
    >>> wg.conv2d(wg.ones(1, 1, 3, 3), wg.ones(1, 1, 2, 2)).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    from ..nn.functional import conv2d as f
    return f(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose2d``: ``nn.functional.conv_transpose2d``."""
    from ..nn.functional import conv_transpose2d as f
    return f(input, weight, bias, stride, padding, output_padding, groups, dilation)


# in-place method forms: name -> the op they apply
_IN_PLACE = {
    "eq_": binary.eq, "ne_": binary.ne, "lt_": binary.lt, "le_": binary.le, "gt_": binary.gt, "ge_": binary.ge,
    "not_equal_": binary.ne, "greater_": binary.gt, "greater_equal_": binary.ge, "less_": binary.lt,
    "less_equal_": binary.le, "logical_and_": binary.logical_and, "logical_or_": binary.logical_or,
    "logical_xor_": binary.logical_xor, "logical_not_": unary.logical_not, "divide_": binary.div,
    "true_divide_": binary.div, "multiply_": binary.mul, "subtract_": binary.sub,
    "floor_divide_": binary.floor_divide, "remainder_": binary.remainder, "atan2_": binary.atan2,
    "arctan2_": binary.atan2, "cumsum_": reduce.cumsum, "cumprod_": reduce.cumprod, "index_add_": indexing.index_add,
    "scatter_add_": indexing.scatter_add, "tril_": movement.tril, "triu_": movement.triu,
}

METHODS = {**{name: fn for name, fn in _SAME.items() if name not in ("divide", "true_divide", "multiply", "subtract")},
           **{name: inplace_method(name, fn) for name, fn in _IN_PLACE.items()}}

__all__ = list(_SAME) + ["concatenate", "detach", "rsub", "positive", "softmax", "log_softmax", "conv1d", "conv2d",
                         "conv_transpose2d"]
