"""PyTorch's legacy tensor types (``FloatTensor``, ``LongTensor``, ...) as old scripts use them:
``dtype = torch.FloatTensor; x = torch.randn(2, 3).type(dtype)``, ``torch.LongTensor([1, 2])``,
``torch.FloatTensor(2, 3)`` (uninitialised), ``isinstance(x, torch.FloatTensor)``. As in PyTorch
they make CPU tensors. The types whose dtype webgrad lacks (``ByteTensor``, ``CharTensor``,
``ShortTensor``) exist and refuse, saying so.

>>> import webgrad as wg
>>> wg.FloatTensor([1, 2]), wg.LongTensor(2, 3).shape, isinstance(wg.ones(1), wg.FloatTensor)
(tensor([1., 2.]), webgrad.Size([2, 3]), True)
"""
from __future__ import annotations

from .dtypes import DTYPES, bfloat16, bool_, float16, float32, float64, int32, int64
from .ops.creation import empty
from .tensor import Tensor, tensor

_DTYPE_OF = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16, "BFloat16Tensor": bfloat16,
             "LongTensor": int64, "IntTensor": int32, "BoolTensor": bool_}
_MISSING = {"ByteTensor": "uint8", "CharTensor": "int8", "ShortTensor": "int16"}


class TensorType(type):
    """The metaclass of the legacy types: calling one makes a ``cpu`` tensor of its dtype,
    ``isinstance`` checks dtype and device (as ``torch.tensortype``)."""

    def __call__(cls, *args):
        if cls.dtype is None:
            raise TypeError(f"{cls.__name__}: webgrad has no {_MISSING[cls.__name__]} dtype (it has "
                            f"{', '.join(DTYPES)}); use LongTensor or IntTensor")
        if not args:
            return empty(0, dtype=cls.dtype, device="cpu")
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return empty(*args, dtype=cls.dtype, device="cpu")
        if len(args) == 1 and isinstance(args[0], Tensor):
            return _alias_of_type(cls, args[0])
        if len(args) == 1:
            return tensor(args[0], dtype=cls.dtype, device="cpu")
        raise TypeError(f"{cls.__name__}(): expected sizes (ints) or one sequence of data, got "
                        f"({', '.join(type(a).__name__ for a in args)})")

    def __instancecheck__(cls, other):
        return isinstance(other, Tensor) and other.dtype is cls.dtype and other.device == "cpu"

    def __repr__(cls):
        return f"<class 'webgrad.{cls.__name__}'>"


def _alias_of_type(cls, t):
    if not isinstance(t, cls):
        raise TypeError(f"{cls.__name__}(): expected a cpu {cls.dtype.name} tensor, got a {t.device.type} "
                        f"{t.dtype.name} tensor")
    return t.detach()


def _legacy_type(name, dtype):
    return TensorType(name, (), {"dtype": dtype, "__module__": "webgrad",
                                 "__doc__": f"PyTorch's legacy CPU tensor type of dtype {getattr(dtype, 'name', None)}."})


LEGACY_TYPES = {name: _legacy_type(name, dtype) for name, dtype in {**_DTYPE_OF, **dict.fromkeys(_MISSING)}.items()}
globals().update(LEGACY_TYPES)
__all__ = list(LEGACY_TYPES)
