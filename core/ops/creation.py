"""Creation ops: constant and range tensors (random ones live in ``ops/random.py``)."""
from __future__ import annotations

import math

from .. import kernel_names as K
from .. import registry
from ..dtypes import default_int, float32, float64, get_default_dtype, int64, scalar_dtype, to_dtype
from ..engine import run_kernel
from ..layouts import check_factory, check_memory_format
from ..host import int_fill, is_array_like
from ..tensor import Tensor, tensor
from .common import check_tensor


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


def sizes_from(op, args, size) -> tuple:
    """The shape from ``op(2, 3)``, ``op((2, 3))`` or ``op(size=(2, 3))``."""
    if size is not None:
        if args:
            raise TypeError(f"{op}: give the size positionally or as size=, not both (got {args} and size={size})")
        args = (size,)
    if not args:
        raise TypeError(f"{op}: missing the size, e.g. {op}(2, 3) or {op}((2, 3))")
    return _shape(args, op)


def full(size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
         backend=None) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``.

    >>> import webgrad as wg
    >>> wg.full((2,), 7).tolist()
    [7, 7]
    """
    check_factory("full", layout, pin_memory)
    size = _shape((size,) if isinstance(size, int) else size, "full")
    dt = to_dtype(dtype) if dtype is not None else scalar_dtype(fill_value)
    t = run_kernel(K.FILL, backend=_backend(backend, device), shape=size, value=int_fill(fill_value, dt, "full"), dtype=dt)
    return _finish(t, requires_grad)


def _filled(op, value, args, size, dtype, layout, device, requires_grad, pin_memory, backend):
    check_factory(op, layout, pin_memory)
    shape = () if not args and size is None else sizes_from(op, args, size)   # op() is 0-d here (torch refuses)
    return full(shape, value, dtype=dtype or get_default_dtype(), requires_grad=requires_grad,
                backend=backend, device=device)


def zeros(*args, size=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          backend=None) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``.

    >>> import webgrad as wg
    >>> wg.zeros(2).tolist()
    [0.0, 0.0]
    """
    return _filled("zeros", 0.0, args, size, dtype, layout, device, requires_grad, pin_memory, backend)


def ones(*args, size=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
         backend=None) -> Tensor:
    """A tensor of ones: ``ones(2, 3)``, ``ones((2, 3))`` or ``ones(size=(2, 3))``.

    >>> import webgrad as wg
    >>> wg.ones(2).tolist()
    [1.0, 1.0]
    """
    return _filled("ones", 1.0, args, size, dtype, layout, device, requires_grad, pin_memory, backend)


def empty(*args, size=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, backend=None) -> Tensor:
    """An uninitialised tensor (webgrad fills it with zeros).

    >>> import webgrad as wg
    >>> wg.empty(2, 2).shape
    webgrad.Size([2, 2])
    """
    check_memory_format("empty", memory_format)
    return _filled("empty", 0.0, args, size, dtype, layout, device, requires_grad, pin_memory, backend)


def _like(x, dtype, backend, device):
    return dict(dtype=dtype or x.dtype, backend=backend or device or x._backend)


def _filled_like(op, input, value, dtype, layout, device, requires_grad, memory_format, backend, pin_memory=False):
    check_tensor(op, input)
    check_factory(op, layout, pin_memory, memory_format)
    return full(input.shape, value, requires_grad=requires_grad, **_like(input, dtype, backend, device))


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               pin_memory=False, backend=None) -> Tensor:
    """Zeros with ``input``'s shape, dtype and backend.

    >>> import webgrad as wg
    >>> wg.zeros_like(wg.ones(2)).tolist()
    [0.0, 0.0]
    """
    return _filled_like("zeros_like", input, 0, dtype, layout, device, requires_grad, memory_format, backend,
                        pin_memory)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              pin_memory=False, backend=None) -> Tensor:
    """Ones with ``input``'s shape, dtype and backend.

    >>> import webgrad as wg
    >>> wg.ones_like(wg.zeros(2)).tolist()
    [1.0, 1.0]
    """
    return _filled_like("ones_like", input, 1, dtype, layout, device, requires_grad, memory_format, backend,
                        pin_memory)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               pin_memory=False, backend=None) -> Tensor:
    """An uninitialised tensor with ``input``'s shape, dtype and backend (webgrad fills it with zeros).

    >>> import webgrad as wg
    >>> wg.empty_like(wg.ones(2, 3)).shape
    webgrad.Size([2, 3])
    """
    return _filled_like("empty_like", input, 0, dtype, layout, device, requires_grad, memory_format, backend,
                        pin_memory)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              pin_memory=False, backend=None) -> Tensor:
    """``fill_value`` with ``input``'s shape, dtype and backend.

    >>> import webgrad as wg
    >>> wg.full_like(wg.zeros(2), 3).tolist()
    [3.0, 3.0]
    """
    return _filled_like("full_like", input, fill_value, dtype, layout, device, requires_grad, memory_format, backend,
                        pin_memory)


def arange(start=None, end=None, step=1, *, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False, backend=None) -> Tensor:
    """Values from ``start`` (0 by default) to ``end`` (exclusive) by ``step``; int64 when all are ints.
    ``arange(5)`` and ``arange(end=5)`` are ``arange(0, 5)``.

    >>> import webgrad as wg
    >>> wg.arange(5).tolist(), wg.arange(end=3).tolist()
    ([0, 1, 2, 3, 4], [0, 1, 2])
    """
    check_factory("arange", layout, pin_memory)
    if end is None:
        if start is None:
            raise TypeError("arange() missing the end, e.g. arange(5) or arange(0, 5)")
        start, end = 0, start
    elif start is None:
        start = 0
    dt = to_dtype(dtype) if dtype is not None else (
        default_int if all(isinstance(v, int) for v in (start, end, step)) else get_default_dtype())
    given = (start, end, step)
    if dt.kind == "i":   # PyTorch's: the arguments truncated to integers, and the count from those for int64
        start, end, step = int(start), int(end), int(step)   # but from the ones given for int32
    counted = (start, end, step) if dt is int64 or dt.kind != "i" else given
    if given[2] == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (given[1] - given[0]) * given[2] < 0:
        raise RuntimeError(f"arange: upper bound {given[1]} and lower bound {given[0]} are inconsistent with the "
                           f"sign of step {given[2]}")
    if counted[2] == 0:   # int64's step truncated to 0 (PyTorch's ValueError; int32 repeats start)
        raise ValueError(f"arange: step must be nonzero (step {given[2]} truncated to an integer for {dt.name})")
    size = max(0, math.ceil((counted[1] - counted[0]) / counted[2]))
    t = run_kernel(K.ARANGE, backend=_backend(backend, device), start=start, step=step, size=size, dtype=dt)
    return _finish(t, requires_grad)


def linspace(start, end, steps, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
             backend=None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    >>> import webgrad as wg
    >>> wg.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    check_factory("linspace", layout, pin_memory)
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"linspace: steps must be a non-negative int, got {steps!r}")
    be, dtype = _backend(backend, device), to_dtype(dtype or get_default_dtype())
    if dtype.kind == "i":   # PyTorch's: the ends as integers, the values between them truncated
        start, end = int(int_fill(start, dtype, "linspace")), int(int_fill(end, dtype, "linspace"))
    t = run_kernel(K.LINSPACE, backend=be, start=float(start), end=float(end), steps=steps, dtype=dtype)
    return _finish(t, requires_grad)


def eye(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
        backend=None) -> Tensor:
    """The ``n`` x ``m`` identity matrix.

    >>> import webgrad as wg
    >>> wg.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    check_factory("eye", layout, pin_memory)
    be = _backend(backend, device)
    m = n if m is None else m
    rows = run_kernel(K.RESHAPE, arange(n, backend=be), shape=(n, 1))
    mask = run_kernel(K.EQUAL, run_kernel(K.EXPAND, rows, shape=(n, m)),
                      run_kernel(K.EXPAND, arange(m, backend=be), shape=(n, m)))
    return _finish(run_kernel(K.CAST, mask, dtype=to_dtype(dtype or get_default_dtype())), requires_grad)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype`` is given.

    >>> import webgrad as wg
    >>> wg.scalar_tensor(3).tolist(), wg.scalar_tensor(3).dtype
    (3.0, webgrad.float32)
    """
    check_factory("scalar_tensor", layout, pin_memory)
    return full((), s, dtype=dtype or get_default_dtype(), device=device, requires_grad=requires_grad)


# ---------------------------------------------------------------- from other data


def from_numpy(ndarray) -> Tensor:
    """A ``cpu`` tensor with a numpy array's values and dtype (float64 stays float64; unsigned and
    narrow ints become int64). Unlike PyTorch's, it copies: later changes to the array are not seen
    by the tensor, nor the other way round.

    >>> import numpy as np, webgrad as wg
    >>> wg.from_numpy(np.array([1.5, 2.0])).dtype
    webgrad.float64
    """
    if not any(c.__name__ == "ndarray" for c in type(ndarray).__mro__) or not is_array_like(ndarray):   # (memmap too)
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(ndarray).__name__})")
    return tensor(ndarray, device="cpu")


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor: a tensor already of that dtype and device is returned itself (else
    converted, keeping autograd), anything else is copied as ``tensor(data)`` does.

    >>> import webgrad as wg
    >>> t = wg.ones(2); wg.as_tensor(t) is t, wg.as_tensor([1, 2], dtype=wg.float64).dtype
    (True, webgrad.float64)
    """
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


# ---------------------------------------------------------------- new_* methods: self's dtype and device


def _new_like(op, self, dtype, device, layout, pin_memory):
    check_tensor(op, self, "self")
    check_factory(op, layout, pin_memory)
    return dict(dtype=dtype or self._dtype, device=device or self._backend)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``, with this tensor's dtype and device
    unless given.

    >>> import webgrad as wg
    >>> wg.zeros(1, dtype=wg.float64).new_full((2,), 3).tolist()
    [3.0, 3.0]
    """
    like = _new_like("new_full", self, dtype, device, layout, pin_memory)
    return full(size, fill_value, requires_grad=requires_grad, **like)


def _new_filled(op, value):
    def method(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        like = _new_like(op, self, dtype, device, layout, pin_memory)
        return full(sizes_from(op, args, size), value, requires_grad=requires_grad, **like)
    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"""A tensor of {"zeros" if op == "new_empty" else op[4:]} of the given size (``x.{op}(2, 3)`` or
    ``x.{op}((2, 3))``), with this tensor's dtype and device unless given{
        " (webgrad fills it with zeros)" if op == "new_empty" else ""}.

    >>> import webgrad as wg
    >>> wg.tensor([1, 2]).{op}(2).tolist()
    {[1 if op == "new_ones" else 0] * 2}
    """
    return method


new_zeros = _new_filled("new_zeros", 0)
new_ones = _new_filled("new_ones", 1)
new_empty = _new_filled("new_empty", 0)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False) -> Tensor:
    """A copy of ``data`` as a new tensor (detached), with this tensor's dtype and device unless given.

    >>> import webgrad as wg
    >>> wg.zeros(1, dtype=wg.float64).new_tensor([1, 2]).dtype
    webgrad.float64
    """
    like = _new_like("new_tensor", self, dtype, device, layout, pin_memory)
    return tensor(data.detach() if isinstance(data, Tensor) else data, requires_grad=requires_grad, **like)


METHODS = {"new_full": new_full, "new_zeros": new_zeros, "new_ones": new_ones, "new_empty": new_empty,
           "new_tensor": new_tensor}

__all__ = ["tensor", "full", "zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like", "full_like",
           "arange", "linspace", "eye", "from_numpy", "as_tensor", "scalar_tensor"]
