"""``webgrad.linalg.LinAlgError`` (PyTorch's ``torch.linalg.LinAlgError``) and the argument checks
the linear-algebra ops share: PyTorch's error types, each message naming the op, what it got and
what it wanted."""
from __future__ import annotations

import warnings

from ..ops.common import check_tensor
from ..shapes import ShapeError


class LinAlgError(RuntimeError):
    """Raised by a linear-algebra op whose input has no answer: a singular matrix to invert or solve
    with, a matrix that is not positive-definite for a Cholesky factorization. A RuntimeError, as
    PyTorch's.

    >>> import webgrad as wg
    >>> try:
    ...     wg.linalg.inv(wg.zeros(2, 2))
    ... except wg.linalg.LinAlgError as e:
    ...     print(isinstance(e, RuntimeError))
    True
    """


def floating(op: str, x, name: str = "A", complex_ok: bool = False):
    """``x`` itself, when it is a Tensor of a floating dtype (PyTorch's linear algebra takes no integers;
    ``complex_ok``: nor complex dtypes, but where the op has a complex form)."""
    check_tensor(op, x, name)
    if not (x.dtype.is_floating or complex_ok and x.dtype.is_complex):
        raise RuntimeError(f"{op}: Expected a floating point tensor as input. Got {x.dtype.name} "
                           f"(convert it with .float() or .double())")
    return x


def matrices(op: str, x, name: str = "A", ndim: int = 2, complex_ok: bool = False):
    """``x`` when it is a floating (or, ``complex_ok``, complex) tensor of matrices (at least ``ndim`` dims)."""
    floating(op, x, name, complex_ok)
    if x.ndim < ndim:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least {ndim} dimensions, got shape "
                           f"{tuple(x.shape)}")
    return x


def factorizable(op: str, x, name: str = "A", ndim: int = 2):
    """``x`` when it is a tensor of matrices (or of at least ``ndim`` dims) of float32 or float64: the
    dtypes a factorization takes (PyTorch's CPU LAPACK has no half precision; the error type is PyTorch's)."""
    matrices(op, x, name, ndim)
    if x.dtype.itemsize < 4:
        raise NotImplementedError(f"{op}: not implemented for {x.dtype.name} (factorizations take float32 or "
                                  f"float64, as PyTorch's on the CPU)")
    return x


def square(op: str, x, name: str = "A"):
    """``x`` when it is a float32 or float64 tensor of square matrices."""
    factorizable(op, x, name)
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are {x.shape[-2]} by "
                           f"{x.shape[-1]} matrices")
    return x


def same_dtype(op: str, a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op}: Expected all tensors to have the same dtype, got {a.dtype.name} and "
                           f"{b.dtype.name}")


DEPRECATION_WARNED: set = set()   # the deprecated torch names that warned already (PyTorch warns once)


def deprecated(name: str, instead: str, message: str = ""):
    """PyTorch's UserWarning for its deprecated ``torch.<name>``, once a process, as PyTorch's TORCH_WARN_ONCE.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     deprecated("example", "torch.linalg.example"); deprecated("example", "torch.linalg.example")
    >>> len(seen)
    1
    """
    if name not in DEPRECATION_WARNED:
        DEPRECATION_WARNED.add(name)
        warnings.warn(message or f"torch.{name} is deprecated in favor of {instead} and will be removed in a future "
                                 f"PyTorch release.", UserWarning, stacklevel=3)


__all__ = ["LinAlgError", "ShapeError"]
