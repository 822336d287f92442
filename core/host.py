"""Host data in plain Python: nested lists, scalars, buffers, and numpy-like arrays,
turned into (flat values, shape, dtype) that any backend can upload."""
from __future__ import annotations

import array
from collections import deque

from .dtypes import (DTYPES, DType, bool_, default_int, float64, get_default_dtype, int_range, promote, scalar_dtype,
                     to_dtype, wrap_int)

SEQUENCES = (list, tuple, deque)    # nested data torch.tensor reads (a deque: the RL examples' returns)
_PLAIN_NUMBERS = {int, float, bool, complex}
_TYPECODE_DTYPES = {"e": "float16", "f": "float32", "d": "float64", "i": "int32", "l": "int64", "q": "int64",
                    "b": "int64", "B": "int64", "h": "int64", "H": "int64", "I": "int64", "?": "bool"}


def is_array_like(obj) -> bool:
    """True for numpy arrays and other objects exposing the array interface."""
    return hasattr(obj, "__array_interface__") or hasattr(obj, "__array__")


def flatten(data):
    """Flatten nested lists/tuples of scalars into (flat list, shape, inferred dtype).

    >>> flatten([[1, 2], [3, 4]])
    ([1, 2, 3, 4], (2, 2), webgrad.int64)
    """
    shape, level = [], data
    while isinstance(level, SEQUENCES):
        shape.append(len(level))
        if not level:
            break
        level = level[0]
    flat, typed = [], {}
    _flatten_into(data, tuple(shape), 0, flat, typed)
    return flat, tuple(shape), _infer(flat, typed)


def _flatten_into(data, shape, depth, out, typed):
    """Append the numbers of ``data`` (nested to ``shape``) to ``out``; the dtypes of the numbers that
    bring one (numpy scalars, 0-d tensors) go to ``typed`` by their place in ``out``."""
    if depth == len(shape):
        if isinstance(data, SEQUENCES):
            raise ValueError(f"tensor: ragged nested sequence (expected a scalar at depth {depth})")
        if type(data) not in _PLAIN_NUMBERS:
            typed[len(out)] = DTYPES.get(getattr(getattr(data, "dtype", None), "name", None))
            data = data.item() if hasattr(data, "item") else data
        if not isinstance(data, (int, float, bool, complex)):
            raise TypeError(f"tensor: expected numbers, got {type(data).__name__}")
        out.append(data)
        return
    if not isinstance(data, SEQUENCES) or len(data) != shape[depth]:
        raise ValueError(f"tensor: ragged nested sequence: expected length {shape[depth]} at depth {depth}, "
                         f"got {len(data) if isinstance(data, SEQUENCES) else type(data).__name__}")
    if depth == len(shape) - 1 and set(map(type, data)) <= _PLAIN_NUMBERS:
        out.extend(data)        # a row of plain Python numbers: no per-number work
        return
    for item in data:
        _flatten_into(item, shape, depth + 1, out, typed)


def _infer(flat, typed=None) -> DType:
    """The dtype torch.tensor gives ``flat``: the default float dtype if a float is among them, else
    int64, or bool if all are; numbers that bring a dtype (``typed``: place -> dtype) promote with it,
    as PyTorch's (``[np.float64(1.5)]`` is float64, ``[np.int32(1)]`` int32).

    >>> _infer([1.5]), _infer([1.5], {0: float64}), _infer([1, 2.5], {1: float64})
    (webgrad.float32, webgrad.float64, webgrad.float64)
    """
    if any(typed.values() if typed else ()):
        natives = [v for i, v in enumerate(flat) if typed.get(i) is None]
        result = _infer(natives) if natives else None
        for d in filter(None, typed.values()):
            result = d if result is None else promote(result, d)
        return result
    types = set(map(type, flat))
    if any(issubclass(t, complex) for t in types):
        return scalar_dtype(1j)   # the default float's complex, as PyTorch's
    if not flat or any(issubclass(t, float) for t in types):
        return get_default_dtype()
    return bool_ if types == {bool} else default_int


class IntegerOverflow(OverflowError, RuntimeError):
    """An integer a dtype cannot hold: PyTorch raises RuntimeError ("value cannot be converted to type
    uint8 without overflow"), webgrad's earlier releases OverflowError; this is both."""


def accepted_range(dtype: DType) -> tuple:
    """The integers data of ``dtype`` may be made from, as PyTorch's: the dtype's range, and for uint8
    also the negatives down to -255 (which wrap around, as C's conversion: ``-1`` is 255).

    >>> accepted_range(to_dtype("uint8")), accepted_range(to_dtype("int8"))
    ((-255, 255), (-128, 127))
    """
    low, high = int_range(dtype)
    return (-high, high) if dtype.is_signed is False and dtype.kind == "i" else (low, high)


def check_int_range(flat, dtype: DType, op: str = "tensor", storage: DType | None = None, why: str = ""):
    """Refuse integers that ``dtype`` cannot hold exactly (or ``storage``, the dtype a backend holds
    ``dtype`` in, ``why`` saying so)."""
    low, high = accepted_range(storage or dtype)
    if flat and low <= min(flat) and max(flat) <= high:
        return
    for v in flat:
        if not low <= v <= high:
            raise IntegerOverflow(f"{op}: integer {v} does not fit in {dtype.name}{why} "
                                f"(values must lie in [{low}, {high}])")


def int_fill(value, dtype: DType, op: str):
    """``value`` as a fill of ``dtype``: for an integer dtype, an int checked against what PyTorch takes
    and wrapped into the dtype (uint8's -1 is 255), a float checked against the dtype's range (uint8's
    -0.5 raises, 2.7 is kept for the cast to truncate), an IntegerOverflow beyond; else unchanged.

    >>> int_fill(-1, to_dtype("uint8"), "full"), int_fill(2.7, to_dtype("uint8"), "full")
    (255, 2.7)
    """
    if dtype.kind != "i" or type(value) not in (int, float):
        return value
    if type(value) is float:
        low, high = int_range(dtype)
        if not low <= value <= high:
            raise IntegerOverflow(f"{op}: {value} does not fit in {dtype.name} (values must lie in [{low}, {high}])")
        return value
    check_int_range([value], dtype, op)
    return wrap_int(value, dtype)


def from_buffer(obj):
    """(flat values, shape, dtype) of an ``array.array`` or a memoryview-able object."""
    mv = memoryview(obj)
    fmt = mv.format.lstrip("@=<")
    name = _TYPECODE_DTYPES.get(fmt)
    if name is None:
        raise TypeError(f"tensor: unsupported buffer format {mv.format!r}")
    shape = mv.shape or ()
    flat = mv.cast("B").cast(fmt).tolist() if mv.ndim != 1 else mv.tolist()
    return flat, tuple(shape) if shape else (len(flat),), to_dtype(name)


def as_host(data, dtype=None):
    """(flat, shape, dtype) for Python scalars, nested sequences and buffers.

    >>> as_host(2.5)
    ([2.5], (), webgrad.float32)
    """
    if isinstance(data, (bool, int, float, complex)):
        flat, shape, inferred = [data], (), _infer([data])
    elif isinstance(data, (array.array, memoryview, bytes, bytearray)):
        flat, shape, inferred = from_buffer(data)
    else:
        flat, shape, inferred = flatten(data)
    dt = to_dtype(dtype) if dtype is not None else inferred
    if dt.kind == "i":
        if not set(map(type, flat)) <= {int, bool}:   # floats truncated, once checked against the dtype's range
            flat = [int(int_fill(v, dt, "tensor")) for v in flat]
        check_int_range(flat, dt)
        if not dt.is_signed and flat and min(flat) < 0:
            flat = [v % 256 for v in flat]   # uint8 from -255..-1, as PyTorch's (C's wrap-around)
    elif dt is bool_:
        flat = [bool(v) for v in flat]
    elif dt.is_complex:
        flat = [complex(v) for v in flat]
    elif not set(map(type, flat)) <= {float}:
        flat = list(map(float, flat))
    return flat, shape, dt


__all__ = ["as_host", "flatten", "is_array_like", "float64"]
