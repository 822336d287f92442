"""Small helpers every op module shares: turning Python scalars into tensors on the
right backend with PyTorch's weak scalar typing, and checking arguments."""
from __future__ import annotations

import functools
import inspect
import math
import numbers
import warnings

from .. import kernel_names as K
from ..dtypes import promote_scalar, promote_tensors, scalar_dtype
from ..engine import run_kernel
from ..tensor import Tensor

_SCALARS = (bool, int, float, complex)


def scale_first(op: str, args: tuple, form: str, current: str) -> tuple:
    """PyTorch's deprecated overloads that put the scale before the tensors (``x.add_(alpha, other)``,
    ``torch.addcmul(x, value, t1, t2)``, as old scripts write ``p.data.add_(-lr, p.grad.data)``):
    ``args``, the positional arguments after ``input``, as (the tensors, the scale), with PyTorch's
    UserWarning naming the ``form`` used and the ``current`` one.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     scale_first("add", (2, "t"), "Number alpha, Tensor other", "Tensor other, *, Number alpha = 1")
    (('t',), 2)
    """
    if not is_scalar(args[0]):
        raise TypeError(f"{op}: got {len(args)} positional arguments after input; only PyTorch's deprecated "
                        f"{op}(input, {form}) takes that many, and its first is a number, not "
                        f"{type(args[0]).__name__}")
    warnings.warn(f"This overload of {op} is deprecated:\n\t{op}({form})\nConsider using one of the following "
                  f"signatures instead:\n\t{op}({current})", UserWarning, stacklevel=3)
    return args[1:], args[0]


NO_ORDER = "; complex numbers have no order"


def real_only(error=NotImplementedError, why: str = ""):
    """Decorate an op that has no complex formula: complex input raises ``error`` (PyTorch's type where
    PyTorch refuses it too) naming the op, before anything runs.

    >>> import webgrad as wg
    >>> wg.sort(wg.tensor([1j]))
    Traceback (most recent call last):
    RuntimeError: sort: not implemented for complex tensors (got complex64); complex numbers have no order
    """
    def deco(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):   # (any arguments: fn's own signature refuses what it does not take)
            x = args[0] if args else kwargs.get("input")
            if isinstance(x, Tensor) and x._dtype.is_complex:
                raise error(f"{fn.__name__}: not implemented for complex tensors (got {x._dtype.name}){why}")
            return fn(*args, **kwargs)
        return op
    return deco


def is_scalar(x) -> bool:
    return type(x) in _SCALARS or isinstance(x, numbers.Number)


def python_scalar(x):
    """A Python bool/int/float/complex for any number (numpy scalars included)."""
    return x if isinstance(x, _SCALARS) else x.item()


def check_tensor(op: str, x, name: str = "input") -> Tensor:
    """Raise a TypeError naming ``op`` unless ``x`` is a Tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    return x


_CONSTANTS: dict = {}     # (value, type, dtype, backend) -> native data of a 0-d constant
_MAX_CONSTANTS = 512


def tensor_sequence(op: str, tensors) -> list:
    """``tensors`` (a list or tuple of tensors, as ``cat``/``stack`` take) as a list, each checked; a tensor
    given whole raises PyTorch's TypeError (iterating it would join its rows).

    >>> import webgrad as wg
    >>> len(tensor_sequence("cat", (wg.ones(2), wg.ones(3))))
    2
    """
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    return [check_tensor(op, t, "each tensor") for t in tensors]


def scalar_tensor(value, dtype, backend) -> Tensor:
    """A 0-d tensor holding ``value`` with ``dtype`` on ``backend``.

    On backends whose data is never mutated (``backend.constant_cache``), the data of small
    constants is kept and reused; each call still returns a new Tensor object, so nothing done
    to one result (in-place ops rebind data, hooks, requires_grad) reaches another.

    >>> import webgrad as wg
    >>> scalar_tensor(2.0, wg.float32, wg.get_backend()).tolist()
    2.0
    """
    key = (value, type(value), dtype, backend)
    # -0.0 == 0.0 as a key: only +0.0 is kept and found (a complex zero, whose signs are two, never)
    cached = value or (type(value) is not complex and math.copysign(1.0, value) > 0)
    data = _CONSTANTS.get(key) if cached else None
    if data is not None:
        return Tensor._wrap(data, backend)
    t = run_kernel("Fill", backend=backend, shape=(), value=value, dtype=dtype)
    if cached and getattr(backend, "constant_cache", False):
        _keep_constant(key, t._data)
    return t


def _keep_constant(key, data):
    """Keep a constant's data; once ``_MAX_CONSTANTS`` are kept, the oldest goes, so that a program past
    that many distinct constants (a fuzz run's) still reuses the ones it uses now."""
    if len(_CONSTANTS) >= _MAX_CONSTANTS:
        oldest = next(iter(_CONSTANTS), None)
        if oldest is None:      # a stand-in that takes none (the compiler's tracer)
            return
        del _CONSTANTS[oldest]
    _CONSTANTS[key] = data


def binary_operands(op: str, a, b, dtype=None):
    """Turn (tensor|scalar, tensor|scalar) into two tensors of one dtype on one backend,
    promoting as PyTorch does (scalars are weakly typed). ``dtype`` forces the common dtype."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if dtype is None and a._dtype is b._dtype:
                return a, b
            dt = dtype or promote_tensors(a._dtype, a.ndim, b._dtype, b.ndim)
        elif is_scalar(b):
            b = python_scalar(b)
            dt = dtype or promote_scalar(a._dtype, b)
            b = scalar_tensor(b, dt, a._backend)
        else:
            raise _bad_operands(op, a, b)
    elif isinstance(b, Tensor) and is_scalar(a):
        a = python_scalar(a)
        dt = dtype or promote_scalar(b._dtype, a)
        a = scalar_tensor(a, dt, b._backend)
    else:
        raise _bad_operands(op, a, b)
    if a._dtype is not dt:
        a = run_kernel("Cast", a, dtype=dt)
    if b._dtype is not dt:
        b = run_kernel("Cast", b, dtype=dt)
    return a, b


def _bad_operands(op, a, b):
    return TypeError(f"{op}: expected tensors or Python numbers, got {type(a).__name__} and {type(b).__name__}")


def reshape_to(x: Tensor, shape) -> Tensor:
    """``x`` reshaped to ``shape`` (fully resolved and known to fit: the Reshape kernel without the
    reshape op's checks), or ``x`` itself when it already has that shape.

    >>> import webgrad as wg
    >>> reshape_to(wg.ones(2, 3), [3, 2]).shape
    webgrad.Size([3, 2])
    """
    shape = tuple(shape)
    return x if x._data.shape == shape else run_kernel(K.RESHAPE, x, shape=shape)


__all__ = ["is_scalar", "check_tensor", "scalar_tensor", "binary_operands", "scalar_dtype", "reshape_to"]


def inplace_method(name: str, fn):
    """The in-place method ``name`` (``"exp_"``) of the op ``fn``: ``x.exp_()`` writes ``exp(x)`` into
    ``x`` and returns it; its signature is ``fn``'s with ``self`` first."""
    def method(self, *args, **kwargs):
        from .binary import inplace
        return inplace(self, name, fn, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: writes the result into this tensor and returns it."
    params = list(inspect.signature(fn).parameters.values())[1:]
    method.__signature__ = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)] + params)
    return method
