"""Small helpers every op module shares: turning Python scalars into tensors on the
right backend with PyTorch's weak scalar typing, and checking arguments."""
from __future__ import annotations

import numbers

from ..dtypes import promote, promote_scalar, scalar_dtype
from ..engine import run_kernel
from ..tensor import Tensor

_SCALARS = (bool, int, float)


def is_scalar(x) -> bool:
    return isinstance(x, numbers.Number)


def python_scalar(x):
    """A Python bool/int/float for any number (numpy scalars included)."""
    return x if isinstance(x, _SCALARS) else x.item()


def check_tensor(op: str, x, name: str = "input") -> Tensor:
    """Raise a TypeError naming ``op`` unless ``x`` is a Tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def scalar_tensor(value, dtype, backend) -> Tensor:
    """A 0-d tensor holding ``value`` with ``dtype`` on ``backend``."""
    return run_kernel("Fill", backend=backend, shape=(), value=value, dtype=dtype)


def binary_operands(op: str, a, b, dtype=None):
    """Turn (tensor|scalar, tensor|scalar) into two tensors of one dtype on one backend,
    promoting as PyTorch does (scalars are weakly typed). ``dtype`` forces the common dtype."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        dt = dtype or (a._dtype if a._dtype is b._dtype else promote(a._dtype, b._dtype))
    elif isinstance(a, Tensor) and is_scalar(b):
        b = python_scalar(b)
        dt = dtype or promote_scalar(a._dtype, b)
        b = scalar_tensor(b, dt, a._backend)
    elif isinstance(b, Tensor) and is_scalar(a):
        a = python_scalar(a)
        dt = dtype or promote_scalar(b._dtype, a)
        a = scalar_tensor(a, dt, b._backend)
    else:
        raise TypeError(f"{op}: expected tensors or Python numbers, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if a._dtype is not dt:
        a = run_kernel("Cast", a, dtype=dt)
    if b._dtype is not dt:
        b = run_kernel("Cast", b, dtype=dt)
    return a, b


__all__ = ["is_scalar", "check_tensor", "scalar_tensor", "binary_operands", "scalar_dtype"]
