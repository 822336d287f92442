"""More creation ops in PyTorch's names: ``logspace``, the deprecated inclusive ``range``, and tensors
with given strides (``empty_strided``, ``Tensor.new_empty_strided``: a view of a zero-filled storage
just large enough, so ``stride()`` is the one asked for).

>>> import webgrad as wg
>>> wg.logspace(0, 2, 3).tolist()
[1.0, 10.0, 100.0]
"""
from __future__ import annotations

import builtins
import math
import warnings

from .. import kernel_names as K
from ..dtypes import float32, float64, get_default_dtype, to_dtype
from ..engine import run_kernel
from ..layouts import check_factory
from ..tensor import Tensor, tensor
from . import movement as M
from .creation import _backend, _finish, _new_like, linspace, zeros
from .restriding import as_strided


def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False) -> Tensor:
    """``steps`` values ``base ** e`` for ``e`` evenly spaced from ``start`` to ``end`` (computed in float64
    where the backend holds it, then rounded to ``dtype``).

    >>> import webgrad as wg
    >>> wg.logspace(0, 3, 4, base=2).tolist()
    [1.0, 2.0, 4.0, 8.0]
    """
    check_factory("logspace", layout, pin_memory)
    be, dtype = _backend(None, device), to_dtype(dtype or get_default_dtype())
    work = float64 if float64 in be.dtypes else float32
    powers = linspace(start, end, steps, dtype=work, device=be)
    return _finish(run_kernel(K.CAST, float(base) ** powers, dtype=dtype), requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False) -> Tensor:   # noqa: A001  (torch.range)
    """PyTorch's deprecated ``torch.range``: ``start`` to ``end`` *inclusive* by ``step``, in the default
    float dtype unless given, with PyTorch's warning (``arange`` is the replacement).

    >>> import warnings, webgrad as wg
    >>> with warnings.catch_warnings(record=True):
    ...     wg.range(1, 3).tolist()
    [1.0, 2.0, 3.0]
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    check_factory("range", layout, pin_memory)
    if end is None:
        raise TypeError("range() missing required argument 'end'")
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"range: upper bound {end} and lower bound {start} are inconsistent with the sign of "
                           f"step {step}")
    size = math.floor((end - start) / step) + 1
    dt = to_dtype(dtype or get_default_dtype())
    t = run_kernel(K.ARANGE, backend=_backend(None, device), start=start, step=step, size=size, dtype=dt)
    return _finish(t, requires_grad)


def _strided(op, size, stride, dtype, device, requires_grad):
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"{op}: mismatch in length of strides and shape: size {size}, stride {stride}")
    need = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    storage = zeros(need, dtype=dtype, device=device)
    return _finish(as_strided(storage, size, stride), requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """A tensor of ``size`` whose ``stride()`` is ``stride``, over a storage just large enough (webgrad
    fills it with zeros; PyTorch leaves it uninitialised).

    >>> import webgrad as wg
    >>> wg.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    check_factory("empty_strided", layout, pin_memory)
    return _strided("empty_strided", size, stride, to_dtype(dtype or get_default_dtype()), _backend(None, device),
                    requires_grad)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                      requires_grad=False) -> Tensor:
    """``empty_strided`` with this tensor's dtype and device unless given.

    >>> import webgrad as wg
    >>> wg.zeros(1, dtype=wg.int64).new_empty_strided((2,), (2,)).dtype
    webgrad.int64
    """
    like = _new_like("new_empty_strided", self, dtype, device, layout, pin_memory)
    return _strided("new_empty_strided", size, stride, like["dtype"], like["device"], requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, pin_memory=False,
                   requires_grad=False) -> Tensor:
    """A tensor of ``size`` whose storage holds its dims in the order ``physical_layout`` (outermost
    first), so its strides are those of that order (zeros here; PyTorch leaves it uninitialised).

    >>> import webgrad as wg
    >>> wg.empty_permuted((2, 3, 4), (2, 0, 1)).stride()
    (3, 1, 6)
    """
    check_factory("empty_permuted", layout, pin_memory)
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError(f"empty_permuted: physical_layout {order} must be a permutation of the dims of size "
                           f"{size}")
    stored = zeros(tuple(size[d] for d in order), dtype=to_dtype(dtype or get_default_dtype()),
                   device=_backend(None, device))
    return _finish(M.permute(stored, tuple(order.index(d) for d in builtins.range(len(size)))), requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """``obj`` as a tensor: a tensor itself when no dtype or device change is asked and ``copy`` is not
    True (sharing its storage, as PyTorch), else a converted copy (``copy=False`` then raises); other
    objects (numbers, sequences, buffers, numpy arrays) are read into a new tensor (PyTorch shares a numpy
    array's or a buffer's memory; the values are the same).

    >>> import webgrad as wg
    >>> x = wg.ones(2); wg.asarray(x) is x, wg.asarray([1, 2], dtype=wg.float32).tolist()
    (True, [1.0, 2.0])
    """
    if isinstance(obj, Tensor):
        be = obj._backend if device is None else _backend(None, device)
        dt = obj.dtype if dtype is None else to_dtype(dtype)
        same = be is obj._backend and dt is obj.dtype
        if not same and copy is False:
            raise ValueError(f"asarray: can't alias the tensor ({obj.dtype.name} on {obj._backend.name}) as "
                             f"{dt.name} on {be.name} with copy=False")
        out = obj if same and not copy else M.clone(obj.to(be.name).to(dt)) if copy else obj.to(be.name).to(dt)
    else:
        out = tensor(obj, dtype=dtype, device=device)
    return out.requires_grad_() if requires_grad else out


_BUFFER_FORMATS = {"float32": "f", "float64": "d", "float16": "e", "int32": "i", "int64": "q", "int16": "h", "int8": "b",
                   "uint8": "B", "bool": "?"}


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor:
    """A 1-d tensor of ``dtype`` read from the bytes of an object with the buffer protocol, from byte
    ``offset``, ``count`` elements (all that fit when -1). webgrad copies the bytes (PyTorch shares them).

    >>> import array, webgrad as wg
    >>> wg.frombuffer(array.array("i", [1, 2, 3]), dtype=wg.int32, offset=4).tolist()
    [2, 3]
    """
    dt = to_dtype(dtype)
    fmt = _BUFFER_FORMATS.get(dt.name)
    if fmt is None:
        raise TypeError(f"frombuffer: dtype {dt.name} cannot be read from a buffer here (no host format for it)")
    data = memoryview(buffer).cast("B")
    if not 0 <= offset <= len(data):
        raise ValueError(f"frombuffer: offset ({offset} bytes) must be non-negative and no greater than buffer "
                         f"length ({len(data)} bytes)")
    n = (len(data) - offset) // dt.itemsize if count == -1 else count
    if n <= 0 or offset + n * dt.itemsize > len(data):
        raise ValueError(f"frombuffer: {len(data)} bytes from offset {offset} do not hold count={count} elements "
                         f"of {dt.itemsize} bytes (both must be positive)")
    values = data[offset:offset + n * dt.itemsize].cast(fmt).tolist()
    return _finish(tensor(values, dtype=dt, device="cpu"), requires_grad)


METHODS = {"new_empty_strided": new_empty_strided}

__all__ = ["logspace", "range", "empty_strided", "empty_permuted", "asarray", "frombuffer"]
