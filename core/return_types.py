"""``torch.return_types``: the named tuples ops return (``values, indices`` of ``max``, ``sort``,
``topk`` ...), printed as PyTorch prints them, one field a line under the library's name.

>>> import webgrad as wg
>>> print(wg.tensor([[1.0, 3.0], [4.0, 2.0]]).max(1))
webgrad.return_types.max(
values=tensor([3., 4.]),
indices=tensor([1, 0]))
"""
from __future__ import annotations

from collections import namedtuple


def _repr(self) -> str:
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"webgrad.return_types.{type(self).__name__}(\n{fields})"


def return_type(name: str, fields: list):
    """A named tuple class ``name`` with ``fields`` that prints as ``torch.return_types`` do.

    >>> pair = return_type("sort", ["values", "indices"])(1, 2)
    >>> pair.indices, repr(pair)
    (2, 'webgrad.return_types.sort(\\nvalues=1,\\nindices=2)')
    """
    cls = namedtuple(name, fields, module=__name__)
    cls.__repr__ = _repr
    return cls
