"""Views over a tensor's storage by strides, and the ops that change a tensor's own view in place.

``as_strided`` and ``unfold`` read a tensor's storage (its root's, ``webgrad.views``) at a layout of
strides; ``unsqueeze_``, ``squeeze_``, ``transpose_``, ``t_``, ``swapaxes_``/``swapdims_``,
``as_strided_`` and ``resize_`` make a tensor itself become such a view, as PyTorch's in-place view ops
change a tensor's sizes and strides over the same storage. A tensor that holds its storage (a root)
first hands it to a hidden root, so that it and its other views keep sharing it.

>>> import webgrad as wg
>>> x = wg.arange(6.0); v = x.view(2, 3); _ = x.unsqueeze_(0); _ = v.fill_(1.0); x.tolist()
[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]
"""
from __future__ import annotations

import operator
import warnings
from weakref import WeakValueDictionary, ref

from .. import strides as S
from ..engine import _mode, no_grad
from ..shapes import normalize_axis, numel
from ..tensor import Tensor
from ..views import ViewInfo, bump_versions, layout_of, live_views, make_view, root_of, strided_read
from . import movement as M
from .common import check_tensor
from .creation import arange


_HIDDEN = WeakValueDictionary()   # id -> a hidden root (by identity: a WeakSet would compare tensors with ==)


def _hide_root(x) -> None:
    """Give ``x``'s storage to a new hidden root, ``x`` (and its views) becoming views of it."""
    root = x._alias()
    root._views, x._views = x._views, None
    for v in live_views(root):
        v._view.root = root
    x._view = ViewInfo(root, S.contiguous(x._data.shape), x)
    root._views = (root._views or []) + [ref(x)]
    _HIDDEN[id(root)] = root


def _become(x, op, view_fn):
    """``x`` takes the place of ``view_fn(x)``, a view of its storage: in-place view ops end here."""
    check_tensor(op, x)
    if _mode.enabled and x.requires_grad and x.grad_fn is None:
        raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an in-place operation; "
                           f"wrap it in `with webgrad.no_grad():`")
    if x._view is None:
        _hide_root(x)
    y = view_fn(x)
    if y is x:
        return x
    x._data, x._view = y._data, ViewInfo(y._view.root, y._view.layout, x._view.versions)
    if _mode.enabled and y.requires_grad:
        x.requires_grad, x.grad_fn, x._out_index = True, y.grad_fn, y._out_index
    bump_versions(y._view.root, x, op)   # as PyTorch: what autograd saved of x no longer matches it
    return x


def unsqueeze_(input, dim) -> Tensor:
    """In-place ``unsqueeze``: this tensor gains a dim of size 1 at ``dim`` (its storage unchanged).

    >>> import webgrad as wg
    >>> wg.zeros(2).unsqueeze_(0).shape
    webgrad.Size([1, 2])
    """
    return _become(input, "unsqueeze_", lambda x: M.unsqueeze(x, dim))


def squeeze_(input, *dims, dim=None) -> Tensor:
    """In-place ``squeeze``: this tensor loses its dims of size 1 (all, or those among ``dim``).

    >>> import webgrad as wg
    >>> wg.zeros(1, 2).squeeze_().shape
    webgrad.Size([2])
    """
    return _become(input, "squeeze_", lambda x: M.squeeze(x, *dims, dim=dim))


def transpose_(input, dim0, dim1) -> Tensor:
    """In-place ``transpose``: this tensor becomes its transpose over the same storage.

    >>> import webgrad as wg
    >>> x = wg.zeros(2, 3); x.transpose_(0, 1).shape, x.stride()
    (webgrad.Size([3, 2]), (1, 3))
    """
    return _become(input, "transpose_", lambda x: M.transpose(x, dim0, dim1))


def swapaxes_(input, axis0, axis1) -> Tensor:
    """In-place ``swapaxes`` (``transpose_``)."""
    return _become(input, "swapaxes_", lambda x: M.transpose(x, axis0, axis1))


def swapdims_(input, dim0, dim1) -> Tensor:
    """In-place ``swapdims`` (``transpose_``)."""
    return _become(input, "swapdims_", lambda x: M.transpose(x, dim0, dim1))


def t_(input) -> Tensor:
    """In-place ``t``.

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2]]).t_().tolist()
    [[1], [2]]
    """
    return _become(input, "t_", M.t)


# ---------------------------------------------------------------- strided views


def _ints(op, name, values) -> tuple:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{op}: {name} must be a sequence of ints, got {values!r}") from None


def _strided_layout(op, input, size, stride, storage_offset) -> S.Layout:
    """The layout ``(size, stride, storage_offset)`` in ``input``'s storage, checked as PyTorch checks it."""
    size, stride = _ints(op, "size", size), _ints(op, "stride", stride)
    offset = layout_of(input).offset if storage_offset is None else operator.index(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError(f"{op}: mismatch in length of strides and shape: size {size}, stride {stride}")
    if any(n < 0 for n in size) or any(s < 0 for s in stride) or offset < 0:
        raise RuntimeError(f"{op}: sizes, strides and the storage offset must be non-negative (negative strides "
                           f"are not supported); got size {size}, stride {stride}, storage_offset {offset}")
    have = numel(root_of(input)._data.shape)
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > have:
        raise RuntimeError(f"{op}: size {size}, stride {stride} and storage offset {offset} need a storage of "
                           f"{need} elements, out of bounds for the storage of {have} elements of the input "
                           f"{tuple(input.shape)}")
    return S.Layout(size, stride, offset)


def _overlapping(layout) -> bool:
    """Whether two elements of ``layout`` may share a storage place (PyTorch's test of strides sorted)."""
    reach = 0
    for stride, n in sorted((s, n) for n, s in zip(layout.shape, layout.strides) if n > 1):
        if stride <= reach:
            return True
        reach += (n - 1) * stride
    return False


def _gathered(root, layout):
    """``root``'s elements at ``layout`` by a gather from its flat storage: the gradient of places read
    more than once adds up (AsStrided's gradient writes each place once)."""
    be = root._backend
    pos = arange(layout.offset, layout.offset + 1, device=be)
    for n, st in zip(layout.shape, layout.strides):
        pos = M.unsqueeze(pos, -1) + arange(n, device=be) * st
    return M.reshape(M.reshape(root, -1)[M.reshape(pos, -1)], layout.shape)


def _read_view(input, layout):
    """A new view of ``input``'s storage at ``layout`` (in its root's storage), read from the root."""
    root = root_of(input)
    value = _gathered(root, layout) if _overlapping(layout) else strided_read(root, layout)
    return make_view(input, value, layout)


def as_strided(input, size, stride, storage_offset=None) -> Tensor:
    """A view of ``input``'s storage with the given sizes, strides (elements per step) and storage
    offset (``input``'s own when None), as ``torch.as_strided``. Strides are non-negative.

    >>> import webgrad as wg
    >>> wg.arange(6).as_strided((2, 2), (1, 2)).tolist()
    [[0, 2], [1, 3]]
    """
    check_tensor("as_strided", input)
    return _read_view(input, _strided_layout("as_strided", input, size, stride, storage_offset))


def as_strided_(input, size, stride, storage_offset=None) -> Tensor:
    """In-place ``as_strided``: this tensor becomes that view of its storage.

    >>> import webgrad as wg
    >>> wg.arange(4).as_strided_((2,), (2,)).tolist()
    [0, 2]
    """
    return _become(input, "as_strided_", lambda x: as_strided(x, size, stride, storage_offset))


def unfold(input, dimension, size, step) -> Tensor:
    """All slices of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim: a view
    (``Tensor.unfold``).

    >>> import webgrad as wg
    >>> wg.arange(6).unfold(0, 2, 2).tolist()
    [[0, 1], [2, 3], [4, 5]]
    """
    check_tensor("unfold", input)
    layout = layout_of(input)
    d = normalize_axis(dimension, max(input.ndim, 1), "unfold")
    n = layout.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"unfold: size is {size} but must be >= 0")
    if not input.ndim:   # PyTorch's: a 0-d tensor gives its element once
        return _read_view(input, S.Layout((size,), (1,), layout.offset))
    shape = layout.shape[:d] + ((n - size) // step + 1,) + layout.shape[d + 1:] + (size,)
    strides = layout.strides[:d] + (layout.strides[d] * step,) + layout.strides[d + 1:] + (layout.strides[d],)
    return _read_view(input, S.Layout(shape, strides, layout.offset))


def resize_(input, *size, memory_format=None) -> Tensor:
    """This tensor in ``sizes``, row-major over its storage from its storage offset, as PyTorch's
    ``resize_``: the same elements in storage order when the count is kept; a part of the storage when
    it shrinks (growing back finds them again); a storage grown by zeros (PyTorch leaves them
    uninitialised) when a tensor that holds its storage alone grows. A tensor that requires grad is
    refused, as in PyTorch.

    >>> import webgrad as wg
    >>> x = wg.arange(6.0); x.resize_(2, 2).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    >>> x.resize_(6).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    """
    check_tensor("resize_", input)
    shape = M._sizes(size, "resize_")
    if input.requires_grad:
        raise RuntimeError("resize_: cannot resize variables that require grad")
    if any(n < 0 for n in shape):
        raise RuntimeError(f"resize_: sizes must be non-negative, got {shape}")
    if shape == tuple(input.shape):
        return input
    root, offset = root_of(input), layout_of(input).offset
    if offset + numel(shape) > numel(root._data.shape):
        _grow(input, root, offset + numel(shape))
    return _become(input, "resize_", lambda x: _read_view(x, S.contiguous(shape)._replace(offset=offset)))


def _grow(x, root, need):
    """Enlarge the storage of ``x`` to ``need`` elements, zeros added (PyTorch leaves them uninitialised):
    only a storage no one else holds (``x``'s own without views, or a hidden root only ``x`` views)."""
    alone = root is x and not live_views(x) or _HIDDEN.get(id(root)) is root and live_views(root) == [x]
    if not alone:
        raise RuntimeError(f"resize_: growing the tensor {tuple(x.shape)} needs a storage of {need} elements, and "
                           f"webgrad grows only a storage that the tensor holds alone (no other tensor viewing "
                           f"it); clone() it first")
    from .creation import zeros
    with no_grad():
        flat = M.reshape(root, -1)
        root._data = M.cat([flat, zeros(need - flat.numel(), dtype=root.dtype, device=root._backend)])._data


def resize_as_(input, the_template, *, memory_format=None) -> Tensor:
    """``resize_(the_template.shape)``.

    >>> import webgrad as wg
    >>> wg.arange(4).resize_as_(wg.zeros(2, 2)).tolist()
    [[0, 1], [2, 3]]
    """
    return resize_(input, tuple(check_tensor("resize_as_", the_template, "the_template").shape))


def _resize_copy(input, shape, op):
    if numel(shape) != input.numel():
        raise RuntimeError(f"{op}: requested resize to {'x'.join(map(str, shape))} ({numel(shape)} elements in "
                           f"total), but the given tensor has a size of {'x'.join(map(str, input.shape))} "
                           f"({input.numel()} elements). autograd's resize can only change the shape of a given "
                           f"tensor, while preserving the number of elements.")
    warnings.warn(f"non-inplace {op} is deprecated", UserWarning, stacklevel=3)
    return M.reshape(M.contiguous(input), shape)


def resize(input, *sizes) -> Tensor:
    """PyTorch's deprecated non-in-place ``resize``: a reshape keeping the element count (with its warning).

    >>> import warnings, webgrad as wg
    >>> with warnings.catch_warnings(record=True):
    ...     wg.arange(4).resize(2, 2).tolist()
    [[0, 1], [2, 3]]
    """
    return _resize_copy(check_tensor("resize", input), M._sizes(sizes, "resize"), "resize")


def resize_as(input, tensor) -> Tensor:
    """PyTorch's deprecated non-in-place ``resize_as``: ``resize(tensor.shape)``."""
    return _resize_copy(check_tensor("resize_as", input), tuple(check_tensor("resize_as", tensor, "tensor").shape),
                        "resize_as")


def fill_diagonal_(input, fill_value, wrap=False) -> Tensor:
    """Write ``fill_value`` on the main diagonal (a 2-d tensor, or one whose dims are all equal); with
    ``wrap``, a tall matrix's diagonal starts again every ``columns + 1`` rows, as numpy's.

    >>> import webgrad as wg
    >>> wg.zeros(2, 3).fill_diagonal_(1.0).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    check_tensor("fill_diagonal_", input)
    shape = tuple(input.shape)
    if input.ndim < 2 or (input.ndim > 2 and len(set(shape)) != 1):
        raise RuntimeError(f"fill_diagonal_: dimensions must larger than 1 and all of equal length, got shape "
                           f"{shape}")
    k, step = min(shape), sum(input.stride())
    if wrap and input.ndim == 2 and shape[0] > shape[1] + 1 and input.is_contiguous():
        k = len(range(0, numel(shape), step))
    input.as_strided((k,), (step,)).fill_(fill_value)
    return input


METHODS = {"unsqueeze_": unsqueeze_, "squeeze_": squeeze_, "transpose_": transpose_, "swapaxes_": swapaxes_,
           "swapdims_": swapdims_, "t_": t_, "as_strided": as_strided, "as_strided_": as_strided_, "unfold": unfold,
           "resize_": resize_, "resize_as_": resize_as_, "resize": resize, "resize_as": resize_as,
           "fill_diagonal_": fill_diagonal_}

__all__ = ["as_strided", "as_strided_", "resize_as_"]
