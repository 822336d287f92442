"""Questions about tensors and dtypes that compute nothing on a backend: ``is_tensor``,
``is_floating_point``, ``is_complex``, ``is_nonzero``, ``numel``, ``result_type``,
``promote_types``, ``can_cast``, ``is_same_size``, ``is_signed``; and the Tensor attributes of
that kind (``itemsize``, ``nbytes``, ``layout``, ``is_sparse`` ...)."""
from __future__ import annotations

from .. import dtypes
from ..dtypes import DType, to_dtype
from ..layouts import strided
from ..shapes import ShapeError
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
    """Whether ``input``'s dtype is complex (complex64, complex128).

    >>> import webgrad as wg
    >>> wg.is_complex(wg.zeros(1)), wg.is_complex(wg.tensor([1j]))
    (False, True)
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


def is_same_size(input, other) -> bool:
    """Whether the two tensors have one shape.

    >>> import webgrad as wg
    >>> wg.is_same_size(wg.zeros(2), wg.ones(2)), wg.zeros(2).is_same_size(wg.ones(3))
    (True, False)
    """
    return tuple(check_tensor("is_same_size", input).shape) == tuple(check_tensor("is_same_size", other).shape)


def is_signed(input) -> bool:
    """Whether ``input``'s dtype holds negative values (every dtype but bool here).

    >>> import webgrad as wg
    >>> wg.is_signed(wg.zeros(1)), wg.ones(1, dtype=wg.bool).is_signed()
    (True, False)
    """
    return check_tensor("is_signed", input)._dtype.kind != "b"


_FALSE_FLAGS = {   # PyTorch's attributes that are always False here, and why
    "is_sparse": "no sparse layouts", "is_sparse_csr": "no sparse layouts", "is_quantized": "no quantized tensors",
    "is_meta": "no meta device", "is_mkldnn": "no oneDNN layout", "is_mps": "no MPS device",
    "is_xpu": "no XPU device",
}


def _flag(name, why):
    def get(self) -> bool:
        return False
    get.__name__ = get.__qualname__ = name
    get.__doc__ = f"False: webgrad has {why}."
    return property(get)


def _is_pinned(self, device=None) -> bool:
    """False: webgrad has no pinned host memory (``pin_memory()`` returns the tensor itself)."""
    return False


def adjoint(input) -> Tensor:
    """The conjugate transpose of the last two dims, as ``torch.adjoint`` (for a real tensor, their transpose).

    >>> import webgrad as wg
    >>> wg.adjoint(wg.tensor([[1 + 2j, 3j]])).tolist()
    [[(1-2j)], [-3j]]
    """
    return _matrices(input, "tensor.adjoint()").mT.conj()


def _mH(self) -> Tensor:
    """``Tensor.mH``: the conjugate transpose of the last two dims."""
    return _matrices(self, "tensor.mH").mT.conj()


def _H(self) -> Tensor:
    """``Tensor.H``: the conjugate transpose of a matrix (a 0-d tensor: itself, conjugated)."""
    if self.ndim not in (0, 2):
        raise ShapeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
    return self.t().conj()


def _matrices(x: Tensor, name: str) -> Tensor:
    if x.ndim == 1:                 # a 0-d tensor is its own transpose, as in PyTorch
        raise ShapeError(f"{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return x


def _sum_to_size(self, *size) -> Tensor:
    """This tensor summed down to ``size``, to which it must broadcast (the reverse of ``expand``).

    >>> import webgrad as wg
    >>> wg.ones(2, 3).sum_to_size(1, 3).tolist()
    [[2.0, 2.0, 2.0]]
    """
    from .movement import _sizes
    shape = _sizes(size, "sum_to_size")
    lead = self.ndim - len(shape)
    if lead < 0 or any(s not in (1, n) for s, n in zip(shape, self.shape[lead:])):
        raise RuntimeError(f"sum_to_size: size {shape} is not expandable to size {tuple(self.shape)}")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and self.shape[lead + i] != 1)
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(shape)


METHODS: dict = {
    "is_same_size": is_same_size, "is_signed": is_signed, "ndimension": lambda self: self.ndim,
    "pin_memory": lambda self, device=None: self, "positive": lambda self: self, "adjoint": adjoint,
    "sum_to_size": _sum_to_size, "itemsize": property(lambda self: self._dtype.itemsize),
    "nbytes": property(lambda self: self._dtype.itemsize * self.numel()),
    "H": property(_H), "mH": property(_mH), "layout": property(lambda self: strided),
    "is_pinned": _is_pinned,
    **{name: _flag(name, why) for name, why in _FALSE_FLAGS.items()},
}

__all__ = ["adjoint", "is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel", "result_type", "promote_types",
           "can_cast", "is_same_size", "is_signed"]
