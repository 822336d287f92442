"""``webgrad.Size``: PyTorch's ``torch.Size``, a tuple of ints.

``Tensor.shape`` and ``Tensor.size()`` return plain tuples (equal to a ``Size`` of the same ints:
read on every op, a subclass would cost each call); ``Size`` is here for the scripts that build one,
``wg.Size([2, 3])``, and for its ``numel()``.

>>> import webgrad as wg
>>> s = wg.Size([2, 3]); s, s.numel(), s == wg.zeros(2, 3).shape
(webgrad.Size([2, 3]), 6, True)
"""
from __future__ import annotations

import operator

from .shapes import numel as _numel


class Size(tuple):
    """A tuple of non-negative ints describing a shape."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        return super().__new__(cls, (operator.index(s) for s in sizes))

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        return _numel(self)

    def __getitem__(self, item):
        out = super().__getitem__(item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __repr__(self) -> str:
        return f"webgrad.Size({list(self)})"


__all__ = ["Size"]
