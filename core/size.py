"""``webgrad.Size``: PyTorch's ``torch.Size``, the tuple of ints that ``Tensor.shape`` and
``Tensor.size()`` return.

A tuple in every way (equal to, and hashing as, the tuple of the same ints; ``isinstance(s, tuple)``),
with PyTorch's extras: ``numel()``, and slicing, ``+`` and ``*`` give a ``Size`` back.

>>> import webgrad as wg
>>> s = wg.zeros(2, 3).shape; s, s.numel(), s == (2, 3), s[1:], (4,) + s
(webgrad.Size([2, 3]), 6, True, webgrad.Size([3]), webgrad.Size([4, 2, 3]))
"""
from __future__ import annotations

import operator
from functools import partial

from .shapes import numel as _numel

_tuple_getitem, _tuple_add, _tuple_mul = tuple.__getitem__, tuple.__add__, tuple.__mul__


class Size(tuple):
    """A tuple of ints describing a shape, as ``torch.Size``: built from any iterable of ints (or of
    objects with ``__index__``: 0-d integer tensors, numpy integers); anything else raises TypeError.

    >>> import webgrad as wg
    >>> wg.Size([2, 3]), wg.Size(), wg.Size([2, 3]) * 2
    (webgrad.Size([2, 3]), webgrad.Size([]), webgrad.Size([2, 3, 2, 3]))
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        return tuple.__new__(cls, [_entry(s, i) for i, s in enumerate(sizes)])

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds (1 for ``Size([])``).

        >>> import webgrad as wg
        >>> wg.Size([2, 3]).numel(), wg.Size([]).numel()
        (6, 1)
        """
        return _numel(self)

    def __getitem__(self, item):
        if item.__class__ is slice:
            return size_of(_tuple_getitem(self, item))
        return _tuple_getitem(self, item)

    def __add__(self, other):
        return size_of(_tuple_add(self, other)) if isinstance(other, tuple) else NotImplemented

    def __radd__(self, other):
        return size_of(_tuple_add(other, self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, n):
        return size_of(_tuple_mul(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return Size, (tuple(self),)

    def __repr__(self) -> str:
        return f"webgrad.Size({list(self)})"


size_of = partial(tuple.__new__, Size)   # a Size of a tuple already known to hold ints (the engine's shapes)


def _entry(s, i: int) -> int:
    """Entry ``i`` of a ``Size`` under construction, as an int, or PyTorch's TypeError."""
    try:
        return operator.index(s)
    except TypeError:
        raise TypeError(f"webgrad.Size() takes an iterable of 'int' (item {i} is '{_type_name(s)}')") from None


def _type_name(s) -> str:
    t = type(s)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}.{t.__name__}"


__all__ = ["Size"]
