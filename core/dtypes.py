"""Dtypes and PyTorch's type promotion, in plain Python.

Twelve dtypes exist: ``bool``, ``uint8``, ``int8``, ``int16`` (``short``), ``int32``, ``int64`` (the default
for integer data, as in PyTorch),
``float16``, ``bfloat16``, ``float32`` (the default for floating data), ``float64``, ``complex64`` and
``complex128`` (``cfloat``/``cdouble``: a float32 or float64 real and imaginary part). Backends map
them onto their native types (or refuse those they cannot hold); the core only compares these objects.
"""
from __future__ import annotations

import struct


class DType:
    """A tensor element type.

    >>> import webgrad as wg
    >>> wg.float32.is_floating, wg.float32.itemsize, wg.int64.is_signed
    (True, 4, True)
    """

    __slots__ = ("name", "itemsize", "kind", "_rank", "is_floating", "is_complex", "differentiable", "_unsigned")

    def __init__(self, name: str, itemsize: int, kind: str, rank: int, unsigned: bool = False):
        self.name, self.itemsize, self.kind, self._rank, self._unsigned = name, itemsize, kind, rank, unsigned
        self.is_floating = kind == "f"   # plain attributes: every recorded op reads them
        self.is_complex = kind == "c"    # (as torch.dtype.is_complex)
        self.differentiable = kind in "fc"   # floating or complex: may require grad

    @property
    def is_signed(self) -> bool:
        """False for bool and uint8 (as ``torch.dtype.is_signed``).

        >>> import webgrad as wg
        >>> wg.uint8.is_signed, wg.int8.is_signed
        (False, True)
        """
        return self.kind != "b" and not self._unsigned

    def to_real(self) -> "DType":
        """The real dtype of a complex one (itself for the others), as ``torch.dtype.to_real``.

        >>> import webgrad as wg
        >>> wg.complex64.to_real(), wg.float64.to_real()
        (webgrad.float32, webgrad.float64)
        """
        return _REAL.get(self, self)

    def to_complex(self) -> "DType":
        """The complex dtype whose parts are this floating dtype (itself for a complex one), as
        ``torch.dtype.to_complex``; float16 and bfloat16 (PyTorch's complex32, which webgrad lacks) raise.

        >>> import webgrad as wg
        >>> wg.float64.to_complex()
        webgrad.complex128
        """
        if self.is_complex:
            return self
        c = _COMPLEX.get(self)
        if c is None:
            raise RuntimeError(f"to_complex: {self.name} has no complex counterpart in webgrad (complex64 has "
                               f"float32 parts, complex128 float64)")
        return c

    def __repr__(self) -> str:
        return f"webgrad.{self.name}"

    def __reduce__(self):
        return (to_dtype, (self.name,))


bool_ = DType("bool", 1, "b", 0)
uint8 = DType("uint8", 1, "i", 1, unsigned=True)
int8 = DType("int8", 1, "i", 1)         # the same rank as uint8: the two promote to int16
int16 = DType("int16", 2, "i", 2)
int32 = DType("int32", 4, "i", 3)
int64 = DType("int64", 8, "i", 4)
float16 = DType("float16", 2, "f", 5)
bfloat16 = DType("bfloat16", 2, "f", 5)   # the same rank as float16: the two promote to float32
float32 = DType("float32", 4, "f", 6)
float64 = DType("float64", 8, "f", 7)
complex64 = DType("complex64", 8, "c", 8)
complex128 = DType("complex128", 16, "c", 9)
_REAL = {complex64: float32, complex128: float64}
_COMPLEX = {float32: complex64, float64: complex128}

DTYPES = {d.name: d for d in (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)}
_ALIASES = {"float": float32, "double": float64, "half": float16, "int": int32, "long": int64, "bool_": bool_,
            "short": int16,
            "cfloat": complex64, "cdouble": complex128, bool: bool_, int: int64, float: float32, complex: complex64}

default_float = float32   # what get_default_dtype() returns; set_default_dtype changes it
default_int = int64
_CATEGORY = {"b": 0, "i": 1, "f": 2, "c": 3}
_TIE = {"i": int16, "f": float32}   # two different dtypes of one rank: uint8 with int8, float16 with bfloat16


def get_default_dtype() -> DType:
    """The dtype floating tensors get when none is asked for (float32 unless ``set_default_dtype``).

    >>> get_default_dtype()
    webgrad.float32
    """
    return default_float


def set_default_dtype(d) -> None:
    """Make ``d`` (a floating dtype) the default for new floating tensors, as ``torch.set_default_dtype``.

    >>> set_default_dtype(float64); set_default_dtype(float32)
    """
    global default_float
    d = to_dtype(d)
    if not d.is_floating:
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the default type, got {d.name}")
    default_float = d


def to_dtype(x) -> DType:
    """Resolve a dtype given as a DType, a name ('float32'), a Python type, or a numpy dtype.

    >>> to_dtype("float64"), to_dtype(int)
    (webgrad.float64, webgrad.int64)
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
    """The result dtype of a binary op on two tensors of the same standing (PyTorch's rules):
    the wider kind and width wins; uint8 with int8 gives int16, float16 with bfloat16 float32; with a complex dtype the
    result is complex with the wider of the two parts (float64 with complex64 is complex128).

    >>> promote(int32, float32), promote(int32, int64), promote(float16, bfloat16), promote(uint8, int8)
    (webgrad.float32, webgrad.int64, webgrad.float32, webgrad.int16)
    >>> promote(float64, complex64), promote(int64, complex64)
    (webgrad.complex128, webgrad.complex64)
    """
    if a is b:
        return a
    if a.is_complex or b.is_complex:
        return _complex_of(promote(a.to_real(), b.to_real()))
    if a._rank > b._rank:
        return a
    if b._rank > a._rank:
        return b
    return _TIE[a.kind]


def promote_tensors(a: DType, a_ndim: int, b: DType, b_ndim: int) -> DType:
    """The result dtype of a binary op on two tensors, as PyTorch decides it: a 0-d tensor beside a
    tensor with dims counts only when it brings a higher category (bool < int < float), so
    ``float32 [3] + float64 0-d`` stays float32 while ``int64 [3] + float64 0-d`` is float64.

    >>> promote_tensors(float32, 1, float64, 0), promote_tensors(int64, 1, float64, 0)
    (webgrad.float32, webgrad.float64)
    """
    if (a_ndim == 0) == (b_ndim == 0) or a is b:
        return promote(a, b)
    dims, zero = (a, b) if b_ndim == 0 else (b, a)
    return _combine(dims, zero)


def _complex_of(d: DType) -> DType:
    """The complex dtype holding ``d``'s values: complex64 for integers, bool, float16, bfloat16
    (PyTorch gives complex32 for the half ones, which webgrad lacks) and float32; complex128 for float64."""
    return complex128 if d is float64 or d is complex128 else complex64


def _combine(dims: DType, lower: DType) -> DType:
    """PyTorch's ``combine_categories``: the dtype of ``dims`` (the tensors with dims) unless ``lower``
    (a 0-d tensor's or a scalar's) brings a higher category; a complex one keeps a float tensor's width."""
    if _CATEGORY[lower.kind] <= _CATEGORY[dims.kind]:
        return dims
    if lower.is_complex:
        return _complex_of(dims) if dims.is_floating else lower
    return lower


def scalar_dtype(value) -> DType:
    """The dtype a Python scalar takes on its own: bool, int64, the default float or its complex."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return default_int
    if isinstance(value, float):
        return default_float
    if isinstance(value, complex):
        return _complex_of(default_float)
    raise TypeError(f"expected a Python bool, int, float or complex, got {type(value).__name__}")


def promote_scalar(t: DType, value) -> DType:
    """The result dtype of ``tensor op scalar``: a scalar only raises the category (bool < int < float),
    never the width, as in PyTorch (``int32 tensor + 2.5`` is float32, ``float64 tensor + 1`` stays float64,
    ``float64 tensor * 1j`` is complex128)."""
    return _combine(t, scalar_dtype(value))


def int_range(dtype: DType) -> tuple:
    """The least and greatest value of an integer dtype (bool's: 0 and 1).

    >>> int_range(int32), int_range(uint8)
    ((-2147483648, 2147483647), (0, 255))
    """
    if dtype.kind == "b" or dtype._unsigned:
        return 0, (1 << 8 * dtype.itemsize) - 1 if dtype._unsigned else 1
    bits = 8 * dtype.itemsize - 1
    return -2 ** bits, 2 ** bits - 1


def is_index(dtype: DType) -> bool:
    """Whether tensors of ``dtype`` may hold indices (int64 or int32, as PyTorch's index_select and
    gather take; uint8, int8 and int16 may not).

    >>> is_index(int64), is_index(uint8)
    (True, False)
    """
    return dtype is int64 or dtype is int32


def wrap_int(value, dtype: DType):
    """A Python int operand of an op in ``dtype`` (8, 16 or 32 bits) wrapped into its range, as PyTorch's
    scalar conversion (``uint8 tensor + 300`` adds 44); anything else unchanged.

    >>> wrap_int(300, uint8), wrap_int(-1, uint8), wrap_int(200, int8), wrap_int(2.5, uint8)
    (44, 255, -56, 2.5)
    """
    if type(value) is not int or dtype.kind != "i" or dtype.itemsize == 8:
        return value
    low, high = int_range(dtype)
    return value if low <= value <= high else (value - low) % (high - low + 1) + low


def can_cast(source: DType, target: DType) -> bool:
    """Whether an in-place op may write a ``source`` result into a ``target`` tensor (PyTorch's
    ``can_cast``: never to a lower category, e.g. complex into float, float into int or int into bool).

    >>> can_cast(int64, float16), can_cast(float32, int64)
    (True, False)
    """
    return _CATEGORY[source.kind] <= _CATEGORY[target.kind]


def round_to_float32(x: float) -> float:
    """The Python float ``x`` rounded to the nearest float32 (as a float32 tensor holds it).

    >>> round_to_float32(0.1)
    0.10000000149011612
    """
    return struct.unpack("f", struct.pack("f", x))[0]
