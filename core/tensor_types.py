"""PyTorch's legacy tensor types (``FloatTensor``, ``LongTensor``, ...) as old scripts use them:
``dtype = torch.FloatTensor; x = torch.randn(2, 3).type(dtype)``, ``torch.LongTensor([1, 2])``,
``torch.FloatTensor(2, 3)`` (uninitialised), ``isinstance(x, torch.FloatTensor)``. As in PyTorch
they make CPU tensors.

>>> import webgrad as wg
>>> wg.FloatTensor([1, 2]), wg.LongTensor(2, 3).shape, isinstance(wg.ones(1), wg.FloatTensor)
(tensor([1., 2.]), webgrad.Size([2, 3]), True)
"""
from __future__ import annotations

from .dtypes import bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, uint8
from .devices import device as to_device
from .ops.creation import empty
from .size import Size
from .tensor import Tensor, tensor

_DTYPE_OF = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16, "BFloat16Tensor": bfloat16,
             "LongTensor": int64, "IntTensor": int32, "BoolTensor": bool_, "ByteTensor": uint8, "CharTensor": int8,
             "ShortTensor": int16}


class TensorType(type):
    """The metaclass of the legacy types: calling one makes a ``cpu`` tensor of its dtype,
    ``isinstance`` checks dtype and device (as ``torch.tensortype``)."""

    def __call__(cls, *args, device=None):
        if device is not None and to_device(device) != "cpu":
            raise RuntimeError(f"{cls.__name__}(): legacy constructor expects device type: cpu, got {device!r}")
        if len(args) == 1 and isinstance(args[0], Tensor) and not isinstance(args[0], cls):
            raise TypeError(f"{cls.__name__}(): expected a cpu {cls.dtype.name} tensor, got a "
                            f"{args[0].device.type} {args[0].dtype.name} tensor")
        return legacy_new(cls.__name__, cls.dtype, args, "cpu")

    def __instancecheck__(cls, other):
        return isinstance(other, Tensor) and other.dtype is cls.dtype and other.device == "cpu"

    def __repr__(cls):
        return f"<class 'webgrad.{cls.__name__}'>"


def legacy_new(name: str, dtype, args: tuple, device) -> Tensor:
    """PyTorch's legacy constructors (``torch.Tensor(...)``, ``torch.FloatTensor(...)``) for ``args``:
    nothing (an empty tensor), sizes (ints or a ``Size``: uninitialised), one sequence or array of data
    (in ``dtype``), or one tensor (an alias of it, its own dtype kept, as PyTorch's).

    >>> import webgrad as wg
    >>> legacy_new("Tensor", wg.float32, (2, 3), "cpu").shape, legacy_new("Tensor", wg.float32, ([1, 2],), "cpu")
    (webgrad.Size([2, 3]), tensor([1., 2.]))
    """
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if not args:
        return empty(0, dtype=dtype, device=device)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        if any(a < 0 for a in args):
            raise RuntimeError(f"{name}(): Trying to create tensor with negative dimension: {list(args)}")
        return empty(*args, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].view(args[0].shape)
    if len(args) == 1 and not isinstance(args[0], (bool, int, float)):
        return tensor(args[0], dtype=dtype, device=device)
    raise TypeError(f"{name}(): expected sizes (ints), a Size, one sequence of data or one tensor, got "
                    f"({', '.join(type(a).__name__ for a in args)})")


def _legacy_type(name, dtype):
    return TensorType(name, (), {"dtype": dtype, "__module__": "webgrad",
                                 "__doc__": f"PyTorch's legacy CPU tensor type of dtype {dtype.name}."})


LEGACY_TYPES = {name: _legacy_type(name, dtype) for name, dtype in _DTYPE_OF.items()}
globals().update(LEGACY_TYPES)
__all__ = list(LEGACY_TYPES)
