"""``finfo`` and ``iinfo``: the numeric limits of a dtype, as ``torch.finfo``/``torch.iinfo``.

(The GPU backends hold int64 in 32 bits; ``iinfo(int64)`` gives the dtype's limits, as PyTorch's,
and a GPU upload beyond 32 bits raises an OverflowError.)

>>> import webgrad as wg
>>> wg.finfo(wg.float32).eps, wg.iinfo(wg.int32).max
(1.1920928955078125e-07, 2147483647)
"""
from __future__ import annotations

from .dtypes import DType, get_default_dtype, int_range, to_dtype

# name: (bits, eps, max, smallest normal, resolution)
_FLOATS = {
    "float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 0.001),
    "bfloat16": (16, 2.0 ** -7, 3.3895313892515355e+38, 2.0 ** -126, 0.01),
    "float32": (32, 2.0 ** -23, 3.4028234663852886e+38, 2.0 ** -126, 1e-06),
    "float64": (64, 2.0 ** -52, 1.7976931348623157e+308, 2.0 ** -1022, 1e-15),
}
_INTS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


class finfo:
    """Limits of a floating dtype (the default one when None): ``bits``, ``eps``, ``max``, ``min``,
    ``tiny`` (= ``smallest_normal``), ``resolution``, ``dtype``.

    >>> import webgrad as wg
    >>> wg.finfo(wg.float16).max
    65504.0
    """

    def __init__(self, type: DType | None = None):
        dtype = get_default_dtype() if type is None else to_dtype(type)
        if dtype.name not in _FLOATS:
            raise TypeError(f"finfo: requires a floating point dtype, got {dtype.name}; use webgrad.iinfo for "
                            f"integer dtypes")
        self.bits, self.eps, self.max, self.smallest_normal, self.resolution = _FLOATS[dtype.name]
        self.min, self.tiny, self.dtype = -self.max, self.smallest_normal, dtype.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: ``bits``, ``min``, ``max``, ``dtype``.

    >>> import webgrad as wg
    >>> wg.iinfo(wg.int64).min
    -9223372036854775808
    """

    def __init__(self, type: DType):
        dtype = to_dtype(type)
        if dtype.name not in _INTS:
            raise TypeError(f"iinfo: {dtype.name} is not supported by iinfo (an integer dtype is: {', '.join(_INTS)})")
        self.bits, self.dtype = _INTS[dtype.name], dtype.name
        self.min, self.max = int_range(dtype)

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


__all__ = ["finfo", "iinfo"]
