"""Strided layouts in plain Python: where a view's elements sit in its base's storage.

A ``Layout`` is PyTorch's view geometry -- a shape, a stride per dim (in elements) and an offset --
over a base stored row-major. Each view op maps its input's layout to its output's; the functions
here are those maps, and ``positions`` lists the storage position of every element of a layout.
"""
from __future__ import annotations

from typing import NamedTuple

from .shapes import numel, remembered


class Layout(NamedTuple):
    """A view's shape, strides (elements per step along each dim) and storage offset.

    >>> sliced(contiguous((2, 3)), (0, 1), (2, 3), (1, 1))
    Layout(shape=(2, 2), strides=(3, 1), offset=1)
    """
    shape: tuple
    strides: tuple
    offset: int


@remembered
def contiguous_strides(shape) -> tuple:
    """Row-major strides of ``shape``.

    >>> contiguous_strides((2, 3, 4))
    (12, 4, 1)
    """
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def contiguous(shape) -> Layout:
    """The layout of a base of ``shape``: row-major, offset 0."""
    return Layout(tuple(shape), contiguous_strides(tuple(shape)), 0)


def is_contiguous(layout: Layout) -> bool:
    """Whether the layout is row-major (strides of size-1 dims do not count, as in PyTorch).

    >>> is_contiguous(permuted(contiguous((2, 3)), (1, 0)))
    False
    """
    want = contiguous_strides(layout.shape)
    return numel(layout.shape) == 0 or all(n == 1 or s == w for n, s, w in zip(layout.shape, layout.strides, want))


def covers_base(layout: Layout, base_shape) -> bool:
    """Whether the layout is its whole base in order (a reshape of it, or the base itself)."""
    return layout.offset == 0 and numel(layout.shape) == numel(base_shape) and is_contiguous(layout)


def overlaps(layout: Layout) -> bool:
    """Whether two elements share a position (a dim of stride 0 and size > 1, as ``expand`` makes; an
    empty layout has no elements to share one)."""
    return 0 not in layout.shape and any(s == 0 and n > 1 for n, s in zip(layout.shape, layout.strides))


def permuted(layout: Layout, perm) -> Layout:
    return Layout(tuple(layout.shape[p] for p in perm), tuple(layout.strides[p] for p in perm), layout.offset)


def sliced(layout: Layout, begin, end, step) -> Layout:
    """The layout after taking ``range(begin[d], end[d], step[d])`` along each dim (step > 0)."""
    offset = layout.offset + sum(b * s for b, s in zip(begin, layout.strides))
    shape = tuple(len(range(b, e, st)) for b, e, st in zip(begin, end, step))
    return Layout(shape, tuple(s * st for s, st in zip(layout.strides, step)), offset)


def indexed(layout: Layout, recipe) -> Layout:
    """The layout after basic indexing, item by item as PyTorch applies it: ``("new",)`` inserts a dim
    of size 1 (with ``unsqueeze``'s stride), ``("int", i)`` selects and drops a dim, ``("slice", b, e, s)``
    takes ``range(b, e, s)`` of a dim.

    >>> indexed(contiguous((2, 3, 4)), [("slice", 0, 2, 1), ("slice", 0, 3, 1), ("new",), ("int", 2)])
    Layout(shape=(2, 3, 1), strides=(12, 4, 4), offset=2)
    """
    shape, strides, offset, d = list(layout.shape), list(layout.strides), layout.offset, 0
    for item in recipe:
        if item[0] == "new":
            strides.insert(d, shape[d] * strides[d] if d < len(shape) else 1)
            shape.insert(d, 1)
            d += 1
        elif item[0] == "int":
            offset += item[1] * strides[d]
            del shape[d], strides[d]
        else:
            _, b, e, s = item
            offset += b * strides[d]
            shape[d], strides[d] = len(range(b, e, s)), strides[d] * s
            d += 1
    return Layout(tuple(shape), tuple(strides), offset)


def expanded(layout: Layout, shape) -> Layout:
    """The layout broadcast to ``shape``: stride 0 on new leading dims and on stretched size-1 dims."""
    lead = len(shape) - len(layout.shape)
    strides = [0] * lead + [0 if n != m else s for n, m, s in zip(layout.shape, shape[lead:], layout.strides)]
    return Layout(tuple(shape), tuple(strides), layout.offset)


def diagonal(layout: Layout, offset: int, d1: int, d2: int) -> Layout:
    """The layout of the diagonal ``offset`` of dims ``d1``, ``d2`` (moved to the end, as PyTorch)."""
    n1, n2 = layout.shape[d1], layout.shape[d2]
    start = layout.offset + (offset * layout.strides[d2] if offset >= 0 else -offset * layout.strides[d1])
    size = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    keep = [d for d in range(len(layout.shape)) if d not in (d1, d2)]
    return Layout(tuple(layout.shape[d] for d in keep) + (size,),
                  tuple(layout.strides[d] for d in keep) + (layout.strides[d1] + layout.strides[d2],),
                  start if size else layout.offset)


def reshaped(layout: Layout, shape) -> Layout | None:
    """The layout of ``shape`` over the same elements, or None where no strides can express it (a
    ``view`` then fails and a ``reshape`` copies): PyTorch's stride computation for views.

    >>> reshaped(contiguous((2, 3)), (3, 2)).strides
    (2, 1)
    >>> reshaped(permuted(contiguous((2, 3)), (1, 0)), (6,)) is None
    True
    """
    shape = tuple(shape)
    strides = _view_strides(layout.shape, layout.strides, shape)
    return None if strides is None else Layout(shape, strides, layout.offset)


def _view_strides(old, old_strides, new):
    if numel(old) == 0 or not old:
        return contiguous_strides(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    base_stride = old_strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):      # chunks of dims that are contiguous with each other
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and old_strides[d - 1] != tensor_numel * base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * base_stride
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base_stride, tensor_numel, view_numel = old_strides[d - 1], 1, 1
    return tuple(out) if view_d == -1 else None


def positions(layout: Layout) -> list:
    """The storage position of each element of ``layout``, row-major (a host-side reference;
    backends compute the same with kernels).

    >>> positions(sliced(contiguous((2, 3)), (0, 1), (2, 3), (1, 1)))
    [1, 2, 4, 5]
    """
    out = [layout.offset]
    for n, s in zip(layout.shape, layout.strides):
        out = [p + i * s for p in out for i in range(n)]
    return out
