"""Questions about tensors and dtypes that compute nothing on a backend: ``is_tensor``,
``is_floating_point``, ``is_complex``, ``is_nonzero``, ``numel``, ``result_type``,
``promote_types``, ``can_cast``."""
from __future__ import annotations

from .. import dtypes
from ..dtypes import DType, to_dtype
from ..tensor import Tensor
from .common import check_tensor, is_scalar, python_scalar


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a webgrad Tensor.

    >>> import webgrad as wg
    >>> wg.is_tensor(wg.zeros(1)), wg.is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    """Whether ``input``'s dtype is a floating one.

    >>> import webgrad as wg
    >>> wg.is_floating_point(wg.zeros(1)), wg.is_floating_point(wg.arange(2))
    (True, False)
    """
    return check_tensor("is_floating_point", input).is_floating_point()


def is_complex(input) -> bool:
    """False: webgrad has no complex dtypes.

    >>> import webgrad as wg
    >>> wg.is_complex(wg.zeros(1))
    False
    """
    return check_tensor("is_complex", input).is_complex()


def is_nonzero(input) -> bool:
    """Whether a one-element tensor is nonzero (a RuntimeError for any other size, as in PyTorch).

    >>> import webgrad as wg
    >>> wg.is_nonzero(wg.tensor([0.5]))
    True
    """
    check_tensor("is_nonzero", input)
    if input.numel() != 1:
        amount = "no values" if not input.numel() else "more than one value"
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {amount} is ambiguous (shape "
                           f"{tuple(input.shape)})")
    return bool(input.item())


def numel(input) -> int:
    """The number of elements of ``input``.

    >>> import webgrad as wg
    >>> wg.numel(wg.zeros(2, 3))
    6
    """
    return check_tensor("numel", input).numel()


def _operand_dtype(x):
    return x.dtype if isinstance(x, Tensor) else dtypes.scalar_dtype(python_scalar(x))


def result_type(tensor, other) -> DType:
    """The dtype an arithmetic op on these operands (tensors or numbers) gives, by PyTorch's promotion.

    >>> import webgrad as wg
    >>> wg.result_type(wg.tensor([1]), 2.5), wg.result_type(wg.tensor([1.0]), wg.tensor([1], dtype=wg.float64))
    (webgrad.float32, webgrad.float64)
    """
    for x in (tensor, other):
        if not (isinstance(x, Tensor) or is_scalar(x)):
            raise TypeError(f"result_type: expected tensors or numbers, got {type(x).__name__}")
    if isinstance(tensor, Tensor) and isinstance(other, Tensor):
        return dtypes.promote_tensors(tensor.dtype, tensor.ndim, other.dtype, other.ndim)
    if isinstance(tensor, Tensor) or isinstance(other, Tensor):
        t, s = (tensor, other) if isinstance(tensor, Tensor) else (other, tensor)
        return dtypes.promote_scalar(t.dtype, python_scalar(s))
    return dtypes.promote(_operand_dtype(tensor), _operand_dtype(other))


def promote_types(type1, type2) -> DType:
    """The smallest dtype both ``type1`` and ``type2`` convert to without loss, as PyTorch's.

    >>> import webgrad as wg
    >>> wg.promote_types(wg.int32, wg.float16)
    webgrad.float16
    """
    return dtypes.promote(to_dtype(type1), to_dtype(type2))


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` in an in-place op (no float to int,
    no number to bool).

    >>> import webgrad as wg
    >>> wg.can_cast(wg.int64, wg.float32), wg.can_cast(wg.float32, wg.int64)
    (True, False)
    """
    return dtypes.can_cast(to_dtype(from_), to_dtype(to))


METHODS: dict = {}

__all__ = ["is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel", "result_type", "promote_types",
           "can_cast"]
