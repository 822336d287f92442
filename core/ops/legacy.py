"""PyTorch's small queries and legacy entry points: ``is_inference``, ``is_neg``/``resolve_neg`` (no lazy negation here),
``get_device``, ``typename``, ``is_nonzero``, the deprecated ``set_default_tensor_type``, the legacy
``Tensor.new`` constructor, and ``apply_``/``map_``, which run a Python callable on each element of a
``cpu`` tensor (only there, as in PyTorch).

>>> import webgrad as wg
>>> wg.typename(wg.ones(1)), wg.ones(2).apply_(lambda v: v * 3).tolist()
('torch.FloatTensor', [3.0, 3.0])
"""
from __future__ import annotations

import warnings

from ..dtypes import set_default_dtype, to_dtype
from ..engine import no_grad
from ..size import Size
from ..tensor import TYPE_NAMES, Tensor, inference_tensors, tensor
from . import movement as M
from .common import check_tensor
from .creation import zeros


def is_neg(input) -> bool:
    """False: webgrad has no lazily negated views (PyTorch's negative bit, set by ``conj`` of complex views).

    >>> import webgrad as wg
    >>> wg.is_neg(-wg.ones(1))
    False
    """
    check_tensor("is_neg", input)
    return False


def resolve_neg(input) -> Tensor:
    """``input`` itself: nothing is lazily negated here (see ``is_neg``).

    >>> import webgrad as wg
    >>> x = wg.ones(1); wg.resolve_neg(x) is x
    True
    """
    return check_tensor("resolve_neg", input)


def get_device(input) -> int:
    """``input.get_device()``: -1 on ``cpu``, else the device index (0).

    >>> import webgrad as wg
    >>> wg.get_device(wg.ones(1, device="cpu"))
    -1
    """
    return check_tensor("get_device", input).get_device()


def typename(obj, /) -> str:
    """The fully qualified name of ``obj``'s type (a tensor's legacy type name, ``'torch.FloatTensor'``, as
    PyTorch's).

    >>> import webgrad as wg
    >>> wg.typename(wg.zeros(1, dtype=wg.int64)), wg.typename(3)
    ('torch.LongTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


_TYPE_DTYPES = {name: dtype for dtype, name in TYPE_NAMES.items()}


def set_default_tensor_type(t, /) -> None:
    """PyTorch's deprecated ``set_default_tensor_type``: the default float dtype from a legacy type or its
    name (``'torch.DoubleTensor'``), with PyTorch's warning; ``set_default_dtype`` is the replacement.

    >>> import warnings, webgrad as wg
    >>> with warnings.catch_warnings(record=True):
    ...     wg.set_default_tensor_type("torch.DoubleTensor"); d = wg.get_default_dtype()
    ...     wg.set_default_tensor_type(wg.FloatTensor)
    >>> d
    webgrad.float64
    """
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    name = t if isinstance(t, str) else f"torch.{getattr(t, '__name__', type(t).__name__)}"
    dtype = _TYPE_DTYPES.get(name)
    if dtype is None:
        raise TypeError(f"set_default_tensor_type: type {name} not available (webgrad's types are "
                        f"{', '.join(_TYPE_DTYPES)}; no CUDA types)")
    if not to_dtype(dtype).is_floating:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(to_dtype(dtype))


def is_inference(input) -> bool:
    """Whether ``input`` was made inside ``inference_mode()`` (an inference tensor, as PyTorch's).

    >>> import webgrad as wg
    >>> with wg.inference_mode():
    ...     x = wg.ones(1)
    >>> wg.is_inference(x), (x + 1).is_inference(), wg.ones(1).is_inference()
    (True, False, False)
    """
    check_tensor("is_inference", input)
    return inference_tensors.get(id(input)) is input


def is_nonzero(input) -> bool:
    """Whether the one element of ``input`` is nonzero (a RuntimeError for none or more, as PyTorch's).

    >>> import webgrad as wg
    >>> wg.is_nonzero(wg.tensor([0.5])), wg.tensor(0).is_nonzero()
    (True, False)
    """
    check_tensor("is_nonzero", input)
    n = input.numel()
    if n != 1:
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {'no values' if not n else 'more than one value'}"
                           f" is ambiguous")
    return bool(input.item())


def new(self, *args, device=None) -> Tensor:
    """The legacy constructor ``x.new(...)``, with ``x``'s dtype (and device unless given): ``x.new()`` is
    empty, ``x.new(2, 3)`` or ``x.new(webgrad.Size([2, 3]))`` has that shape (zeros here; PyTorch leaves it
    uninitialised), ``x.new([1, 2])`` holds the data, ``x.new(other)`` shares ``other``'s storage.

    >>> import webgrad as wg
    >>> x = wg.zeros(1, dtype=wg.float64)
    >>> x.new().shape, x.new(2, 3).shape, x.new([1, 2]).dtype
    (webgrad.Size([0]), webgrad.Size([2, 3]), webgrad.float64)
    """
    device = self._backend if device is None else device
    if not args:
        return zeros(0, dtype=self.dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].detach()
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return zeros(*args, dtype=self.dtype, device=device)
    if len(args) == 1:
        return tensor(args[0], dtype=self.dtype, device=device)
    raise TypeError(f"new(): expected sizes (ints), a Size, a sequence of data or a tensor, got "
                    f"({', '.join(type(a).__name__ for a in args)})")


def map2_(self, x, y, callable) -> Tensor:
    """Replace each element ``v`` by ``callable(v, a, b)``, ``a`` and ``b`` the elements of ``x`` and ``y``
    (broadcast to this tensor's shape) at the same place (``cpu`` only, as PyTorch).

    >>> import webgrad as wg
    >>> wg.zeros(2).map2_(wg.tensor([1.0, 2.0]), wg.tensor(3.0), lambda v, a, b: a * b).tolist()
    [3.0, 6.0]
    """
    return _host_map("map2_", self, callable, (check_tensor("map2_", x, "x"), check_tensor("map2_", y, "y")))


def dim_order(self, *, ambiguity_check=False) -> tuple:
    """The dims from the largest stride to the smallest (ties keep their order): ``(0, 1, ..., n-1)`` for
    a row-major tensor, as PyTorch's ``dim_order``. ``ambiguity_check=True`` refuses a tensor whose
    strides allow more than one order (a dim of size 1, or equal strides).

    >>> import webgrad as wg
    >>> wg.zeros(2, 3).t().dim_order()
    (1, 0)
    """
    strides = self.stride()
    order = tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))
    if ambiguity_check is True and (1 in self.shape or len(set(strides)) < len(strides)):
        raise RuntimeError(f"dim_order: the tensor of shape {tuple(self.shape)} and strides {strides} has an "
                           f"ambiguous dim order")
    return order


def nonzero_static(input, *, size, fill_value=-1) -> Tensor:
    """``nonzero(input)`` as exactly ``size`` rows: cut, or padded with rows of ``fill_value``.

    >>> import webgrad as wg
    >>> wg.nonzero_static(wg.tensor([0, 3, 5]), size=3).tolist()
    [[1], [2], [-1]]
    """
    check_tensor("nonzero_static", input)
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be a non-negative integer, got {size}")
    found = input.nonzero()
    if found.shape[0] >= size:
        return found[:size]
    pad = zeros(size - found.shape[0], max(input.ndim, 0), dtype=found.dtype, device=found._backend) + fill_value
    return M.cat([found, pad])


def _host_map(op, self, fn, others=()):
    """``self`` with ``fn`` applied to each element (and the matching elements of ``others``), in place."""
    check_tensor(op, self, "self")
    if self._backend.name != "cpu":
        raise TypeError(f"{op} is only implemented on CPU tensors (this one is on {self._backend.name}); "
                        f"move it with .cpu() first")
    if self.requires_grad:
        raise RuntimeError(f"{op}: can't call {op}() on Variable that requires grad. Use var.detach().{op}() "
                           f"instead.")
    columns = [M.reshape(self, -1).tolist()] + [M.reshape(M.expand(o, tuple(self.shape)), -1).tolist()
                                               for o in others]
    values = [fn(*items) for items in zip(*columns)]
    with no_grad():
        self.copy_(M.reshape(tensor(values, dtype=self.dtype), tuple(self.shape)))
    return self


def apply_(self, callable) -> Tensor:
    """Replace each element ``v`` by ``callable(v)`` (a Python call per element; ``cpu`` only, as PyTorch).

    >>> import webgrad as wg
    >>> wg.tensor([1, 2]).apply_(lambda v: v + 10).tolist()
    [11, 12]
    """
    return _host_map("apply_", self, callable)


def map_(self, other, callable) -> Tensor:
    """Replace each element ``v`` by ``callable(v, w)``, ``w`` the element of ``other`` (broadcast to this
    tensor's shape) at the same place (``cpu`` only, as PyTorch).

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 2.0]).map_(wg.tensor([10.0]), lambda v, w: v * w).tolist()
    [10.0, 20.0]
    """
    return _host_map("map_", self, callable, (check_tensor("map_", other, "other"),))


METHODS = {"is_inference": is_inference, "is_neg": is_neg, "resolve_neg": resolve_neg, "is_nonzero": is_nonzero,
           "new": new, "apply_": apply_, "map_": map_, "map2_": map2_, "dim_order": dim_order,
           "nonzero_static": nonzero_static}

__all__ = ["is_inference", "is_neg", "resolve_neg", "get_device", "typename", "set_default_tensor_type", "is_nonzero",
           "nonzero_static"]
