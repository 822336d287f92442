"""Creation ops: constant and range tensors (random ones live in ``ops/random.py``)."""
from __future__ import annotations

import math

from .. import kernel_names as K
from .. import registry
from ..dtypes import default_int, float32, float64, get_default_dtype, scalar_dtype, to_dtype
from ..engine import run_kernel
from ..tensor import Tensor, tensor


def _shape(args, op) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for s in args:
        if not isinstance(s, int) or isinstance(s, bool) or s < 0:
            raise ValueError(f"{op}: sizes must be non-negative ints, got {tuple(args)}")
    return tuple(args)


def _backend(backend, device):
    """The backend object a creation op's ``device=`` (or webgrad's ``backend=``) names."""
    return registry.resolve(backend if backend is not None else device)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_() if requires_grad else t


def full(size, fill_value, *, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``.

    >>> import webgrad as wg
    >>> wg.full((2,), 7).tolist()
    [7, 7]
    """
    size = _shape((size,) if isinstance(size, int) else size, "full")
    dt = to_dtype(dtype) if dtype is not None else scalar_dtype(fill_value)
    t = run_kernel(K.FILL, backend=_backend(backend, device), shape=size, value=fill_value, dtype=dt)
    return _finish(t, requires_grad)


def zeros(*size, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``.

    >>> import webgrad as wg
    >>> wg.zeros(2).tolist()
    [0.0, 0.0]
    """
    return full(_shape(size, "zeros"), 0.0, dtype=dtype or get_default_dtype(), requires_grad=requires_grad,
                backend=backend, device=device)


def ones(*size, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """A tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``.

    >>> import webgrad as wg
    >>> wg.ones(2).tolist()
    [1.0, 1.0]
    """
    return full(_shape(size, "ones"), 1.0, dtype=dtype or get_default_dtype(), requires_grad=requires_grad,
                backend=backend, device=device)


def empty(*size, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """An uninitialised tensor (webgrad fills it with zeros).

    >>> import webgrad as wg
    >>> wg.empty(2, 2).shape
    (2, 2)
    """
    return zeros(*size, dtype=dtype, requires_grad=requires_grad, backend=backend, device=device)


def _like(x, dtype, backend, device):
    return dict(dtype=dtype or x.dtype, backend=backend or device or x._backend)


def zeros_like(x, *, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """Zeros with ``x``'s shape, dtype and backend.

    >>> import webgrad as wg
    >>> wg.zeros_like(wg.ones(2)).tolist()
    [0.0, 0.0]
    """
    return full(x.shape, 0, requires_grad=requires_grad, **_like(x, dtype, backend, device))


def ones_like(x, *, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """Ones with ``x``'s shape, dtype and backend.

    >>> import webgrad as wg
    >>> wg.ones_like(wg.zeros(2)).tolist()
    [1.0, 1.0]
    """
    return full(x.shape, 1, requires_grad=requires_grad, **_like(x, dtype, backend, device))


def full_like(x, fill_value, *, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """``fill_value`` with ``x``'s shape, dtype and backend.

    >>> import webgrad as wg
    >>> wg.full_like(wg.zeros(2), 3).tolist()
    [3.0, 3.0]
    """
    return full(x.shape, fill_value, requires_grad=requires_grad, **_like(x, dtype, backend, device))


def arange(start, end=None, step=1, *, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 when all are ints.

    >>> import webgrad as wg
    >>> wg.arange(5).tolist()
    [0, 1, 2, 3, 4]
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    size = max(0, math.ceil((end - start) / step))
    dt = to_dtype(dtype) if dtype is not None else (
        default_int if all(isinstance(v, int) for v in (start, end, step)) else get_default_dtype())
    t = run_kernel(K.ARANGE, backend=_backend(backend, device), start=start, step=step, size=size, dtype=dt)
    return _finish(t, requires_grad)


def linspace(start, end, steps, *, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    >>> import webgrad as wg
    >>> wg.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"linspace: steps must be a non-negative int, got {steps!r}")
    be, dtype = _backend(backend, device), to_dtype(dtype or get_default_dtype())
    if dtype.kind == "i":   # PyTorch's: the ends as integers, the values between them truncated
        start, end = int(start), int(end)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    work = dtype if dtype.is_floating else float64 if float64 in be.dtypes else float32
    t = run_kernel(K.ARANGE, backend=be, start=float(start), step=step, size=steps, dtype=work)
    if work is not dtype:   # integers: the float values truncated, as PyTorch's (linspace(0, 1, 3) is 0, 0, 1)
        t = run_kernel(K.CAST, t, dtype=dtype)
    return _finish(t, requires_grad)


def eye(n, m=None, *, dtype=None, requires_grad=False, backend=None, device=None) -> Tensor:
    """The ``n`` x ``m`` identity matrix.

    >>> import webgrad as wg
    >>> wg.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    be = _backend(backend, device)
    m = n if m is None else m
    rows = run_kernel(K.RESHAPE, arange(n, backend=be), shape=(n, 1))
    mask = run_kernel(K.EQUAL, run_kernel(K.EXPAND, rows, shape=(n, m)),
                      run_kernel(K.EXPAND, arange(m, backend=be), shape=(n, m)))
    return _finish(run_kernel(K.CAST, mask, dtype=to_dtype(dtype or get_default_dtype())), requires_grad)


METHODS = {}

__all__ = ["tensor", "full", "zeros", "ones", "empty", "zeros_like", "ones_like", "full_like", "arange",
           "linspace", "eye"]
