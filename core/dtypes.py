"""Dtypes and PyTorch's type promotion, in plain Python.

Four dtypes exist: ``float32`` (the default), ``float64``, ``int32`` and ``bool``.
Backends map them onto their native types; the core only compares these objects.
"""
from __future__ import annotations


class DType:
    """A tensor element type.

    >>> import webgrad as wg
    >>> wg.float32.is_floating, wg.float32.itemsize
    (True, 4)
    """

    __slots__ = ("name", "itemsize", "kind", "_rank", "is_floating")

    def __init__(self, name: str, itemsize: int, kind: str, rank: int):
        self.name, self.itemsize, self.kind, self._rank = name, itemsize, kind, rank
        self.is_floating = kind == "f"   # a plain attribute: every recorded op reads it

    def __repr__(self) -> str:
        return f"webgrad.{self.name}"

    def __reduce__(self):
        return (to_dtype, (self.name,))


bool_ = DType("bool", 1, "b", 0)
int32 = DType("int32", 4, "i", 1)
float32 = DType("float32", 4, "f", 2)
float64 = DType("float64", 8, "f", 3)

DTYPES = {d.name: d for d in (bool_, int32, float32, float64)}
_ALIASES = {"float": float32, "double": float64, "int": int32, "int64": int32, "long": int32,
            "bool_": bool_, bool: bool_, int: int32, float: float32}

default_float = float32


def to_dtype(x) -> DType:
    """Resolve a dtype given as a DType, a name ('float32'), a Python type, or a numpy dtype.

    >>> to_dtype("float64")
    webgrad.float64
    """
    if isinstance(x, DType):
        return x
    d = DTYPES.get(x) if isinstance(x, str) else None
    if d is None:
        d = _ALIASES.get(x) if isinstance(x, (str, type)) else None
    if d is None:
        name = getattr(x, "name", None) or getattr(getattr(x, "dtype", None), "name", None) \
            or getattr(x, "__name__", None)
        d = DTYPES.get(name) or (_ALIASES.get(name) if name else None)
    if d is None:
        raise TypeError(f"unknown dtype {x!r}; webgrad has {', '.join(DTYPES)}")
    return d


def promote(a: DType, b: DType) -> DType:
    """The result dtype of a binary op on two tensors (PyTorch's rules for these dtypes).

    >>> promote(int32, float32)
    webgrad.float32
    """
    return a if a._rank >= b._rank else b


def scalar_dtype(value) -> DType:
    """The dtype a Python scalar takes on its own: bool, int32 or the default float."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int32
    if isinstance(value, float):
        return default_float
    raise TypeError(f"expected a Python bool, int or float, got {type(value).__name__}")


def promote_scalar(t: DType, value) -> DType:
    """The result dtype of ``tensor op scalar``: a scalar only raises the category (bool < int < float),
    never the width, as in PyTorch (``int32 tensor + 2.5`` is float32, ``float64 tensor + 1`` stays float64)."""
    s = scalar_dtype(value)
    if s.kind == t.kind or s._rank < t._rank:
        return t
    return s
