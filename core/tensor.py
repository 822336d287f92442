"""The Tensor: a handle on backend data plus its place in the autograd graph.

Tensor methods and operators that are ops (``x.exp()``, ``x + y``) are attached from
the op modules' ``METHODS`` tables by ``webgrad.ops``; this file holds only what is
the tensor's own: data access, autograd state, and movement between backends/dtypes.
"""
from __future__ import annotations

import warnings
from weakref import WeakValueDictionary, ref

from . import engine, registry, views
from .devices import device, device_of
from .dtypes import DTYPES, DType, can_cast, to_dtype
from .engine import _mode, open_inference_scopes, record_function, run_kernel
from .host import as_host, is_array_like
from .printing import tensor_repr
from .shapes import numel
from .size import Size, size_of


class Tensor:
    """An n-dimensional array on one backend that can record its history for autograd.

    >>> import webgrad as wg
    >>> x = wg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad.tolist()
    [[2.0, 4.0], [6.0, 8.0]]
    """

    __slots__ = ("_data", "_backend", "_dtype", "requires_grad", "grad", "grad_fn", "_out_index", "_version",
                 "_hooks", "_modified_by", "_view", "_views", "__weakref__")
    __array_priority__ = 1000  # numpy defers binary operators to Tensor

    @classmethod
    def _wrap(cls, data, backend) -> "Tensor":
        t = object.__new__(cls)
        t._data, t._backend, t._dtype = data, backend, backend.dtype_of(data)
        t.requires_grad, t.grad, t.grad_fn, t._out_index, t._version = False, None, None, 0, 0
        t._hooks = t._modified_by = t._view = t._views = None
        if open_inference_scopes and _mode.inference:   # (the thread-local read only inside inference_mode)
            inference_tensors[id(t)] = t
        return t

    def __new__(cls, *args, device=None):
        """PyTorch's legacy constructor ``torch.Tensor(...)``, in the default dtype on the default device:
        ``Tensor(2, 3)`` is uninitialised, ``Tensor([1, 2])`` holds that data, ``Tensor(t)`` is an alias of t.
        New code makes tensors with ``wg.tensor``, ``wg.empty`` and the like.

        >>> import webgrad as wg
        >>> wg.Tensor(2, 3).shape, wg.Tensor([1, 2])
        (webgrad.Size([2, 3]), tensor([1., 2.]))
        """
        from .devices import device as to_device, get_default_device
        from .dtypes import get_default_dtype
        from .tensor_types import legacy_new   # (it imports this module)
        default = get_default_device()
        if device is not None and to_device(device) != default:
            raise RuntimeError(f"Tensor(): legacy constructor expects device type: {default.type} (the default "
                               f"device) but device type: {to_device(device).type} was passed")
        t = legacy_new(cls.__name__, get_default_dtype(), args, default)
        return t if cls is Tensor else cls._wrap(t._data, t._backend)

    # ------------------------------------------------------------ metadata
    @property
    def shape(self) -> Size:
        """The shape, a ``webgrad.Size`` (a tuple of ints), as PyTorch's ``torch.Size``.

        >>> import webgrad as wg
        >>> wg.zeros(2, 3).shape
        webgrad.Size([2, 3])
        """
        return size_of(self._data.shape)

    @property
    def dtype(self) -> DType:
        """The element type (``webgrad.float32``, ...)."""
        return self._dtype

    @property
    def device(self) -> device:
        """The device (backend) holding the data, a ``webgrad.device`` equal to its name:
        ``t.device == "cpu"``.

        >>> import webgrad as wg
        >>> wg.zeros(1).device
        device(type='cpu')
        """
        return device_of(self._backend.name)

    @property
    def backend(self) -> str:
        """Name of the backend holding the data."""
        return self._backend.name

    @property
    def is_cpu(self) -> bool:
        return self._backend.name == "cpu"

    @property
    def is_cuda(self) -> bool:
        """False: webgrad has no CUDA backend (its GPU backends are ``wgpu`` and ``webgpu``)."""
        return False

    def get_device(self) -> int:
        """-1 on ``cpu``, else the device index (0), as PyTorch's."""
        return -1 if self._backend.name == "cpu" else 0

    def cuda(self, device=None, non_blocking=False, memory_format=None) -> "Tensor":
        """Raises as PyTorch does without CUDA: webgrad's GPU backend is ``wgpu`` (``t.to("wgpu")``)."""
        return self.to("cuda")

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._data.shape)

    def dim(self) -> int:
        """Number of dimensions (PyTorch's ``dim()``)."""
        return len(self._data.shape)

    def size(self, dim=None):
        """The shape, or the size of one dimension.

        >>> import webgrad as wg
        >>> wg.zeros(2, 3).size(), wg.zeros(2, 3).size(-1)
        (webgrad.Size([2, 3]), 3)
        """
        shape = self._data.shape
        if dim is None:
            return size_of(shape)
        from .shapes import normalize_axis
        return shape[normalize_axis(dim, len(shape), "size")]

    def numel(self) -> int:
        """Number of elements."""
        return numel(self._data.shape)

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self._dtype.itemsize

    def stride(self, dim=None):
        """The strides (elements per step along each dim) of this tensor's storage, as PyTorch's:
        a view's are its base's rearranged.

        >>> import webgrad as wg
        >>> wg.zeros(2, 3).t().stride()
        (1, 3)
        """
        strides = views.layout_of(self).strides
        if dim is None:
            return strides
        from .shapes import normalize_axis
        return strides[normalize_axis(dim, self.ndim, "stride")]

    def storage_offset(self) -> int:
        """Where this tensor's first element sits in its storage (0 but for views that skip some)."""
        return views.layout_of(self).offset

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the elements lie in row-major order in the storage (False for some views, such as
        a transpose; ``contiguous()`` makes a copy that is).

        >>> import webgrad as wg
        >>> wg.zeros(2, 3).t().is_contiguous()
        False
        """
        return views.is_view_contiguous(self)

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op (user-created, or not requiring grad)."""
        return self.grad_fn is None

    def is_floating_point(self) -> bool:
        """True for the floating dtypes (float16, bfloat16, float32, float64; not the complex ones)."""
        return self._dtype.is_floating

    def __len__(self):
        shape = self._data.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        shape = self._data.shape
        if not shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(shape[0]))

    __hash__ = object.__hash__

    # ------------------------------------------------------------ data access
    def tolist(self):
        """The data as (nested) Python lists, or a Python scalar for a 0-d tensor.

        >>> import webgrad as wg
        >>> wg.tensor([1, 2]).tolist()
        [1, 2]
        """
        return self._backend.to_list(self._data)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(f"item: a Tensor with {self.numel()} elements cannot be converted to Scalar "
                               f"(shape {tuple(self.shape)})")
        v = self.tolist()
        while isinstance(v, list):
            v = v[0]
        return v

    async def read(self):
        """The data as (nested) Python lists, or a Python scalar for a 0-d tensor, read back
        asynchronously: ``await t.read()`` is the readback every browser allows (the synchronous
        ``tolist()``/``item()`` need JSPI there).

        >>> import asyncio, webgrad as wg
        >>> asyncio.run(wg.tensor([1.0]).read())
        [1.0]
        """
        read = getattr(self._backend, "read_async", None)
        if read is None:
            return self.tolist()
        return await read(self._data)

    def numpy(self, *, force=False):
        """A numpy array with the data (needs numpy): a snapshot, not shared with the tensor. Fails on
        tensors that require grad, as in PyTorch, unless ``force`` (which reads ``detach()``'s data)."""
        if self.requires_grad and not force:
            raise RuntimeError("numpy: can't call numpy() on a tensor that requires grad; use "
                               "tensor.detach().numpy()")
        return self._backend.to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        a = self._backend.to_numpy(self._data)
        return a.astype(dtype) if dtype is not None else a

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError(f"bool value of a tensor with {self.numel()} elements is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self._one_value("float"))

    def __int__(self):
        return int(self._one_value("int"))

    def _one_value(self, to: str):
        """The value of a one-element tensor for ``int()``/``float()`` (PyTorch's ValueError otherwise)."""
        if self.numel() != 1:
            raise ValueError(f"{to}(): only one element tensors can be converted to Python scalars, got shape "
                             f"{tuple(self.shape)}")
        return self.item()

    def __index__(self):
        if self._dtype.is_floating or self.numel() != 1:
            raise TypeError("only one-element integer tensors can be used as an index")
        return int(self.item())

    def __repr__(self):
        return tensor_repr(self)

    def __deepcopy__(self, memo: dict) -> "Tensor":
        """``copy.deepcopy``: a leaf's values in new storage (views of one storage stay views of one
        copy), with ``requires_grad`` and ``.grad``; a non-leaf raises, as in PyTorch."""
        from .copying import deepcopy_tensor
        return deepcopy_tensor(self, memo)

    def __format__(self, spec: str) -> str:
        """A 0-d tensor formats its value (``f"{loss:.4f}"``); any other tensor formats as ``str``
        with an empty spec, and raises TypeError given one, as in PyTorch."""
        if self.ndim == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    # ------------------------------------------------------------ autograd
    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place (only leaves; only floating dtypes can require grad)."""
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError("requires_grad_: you can only change requires_grad flags of leaf tensors; use "
                               "detach() to get a tensor that does not require grad")
        if requires_grad and not self._dtype.differentiable:
            raise RuntimeError(f"requires_grad_: only tensors of floating point and complex dtype can require "
                               f"gradients; this one is {self._dtype.name}")
        self.requires_grad = requires_grad
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on.

        >>> import webgrad as wg
        >>> x = wg.tensor(2.0, requires_grad=True)
        >>> (x ** 2).backward()
        >>> x.grad.item()
        4.0
        """
        _autograd.backward(self, None if gradient is None else [gradient], retain_graph, create_graph, inputs=inputs)

    def detach(self) -> "Tensor":
        """A view of the same storage, cut from the graph (does not require grad): an in-place
        change through either is seen by both, as in PyTorch.

        >>> import webgrad as wg
        >>> x = wg.zeros(2); _ = x.detach().fill_(3.0); x.tolist()
        [3.0, 3.0]
        """
        return views.alias(self, detached=True)

    @property
    def data(self) -> "Tensor":
        """PyTorch's ``.data``: a tensor sharing this one's storage that does not require grad and
        whose in-place changes autograd does not see (its version counter is its own). Assigning
        ``t.data = other`` makes ``t`` hold ``other``'s data. (The async readback is ``await t.read()``.)

        >>> import webgrad as wg
        >>> w = wg.ones(2, requires_grad=True)
        >>> _ = w.data.mul_(3); w.tolist()
        [3.0, 3.0]
        """
        return views.alias(self, detached=True, own_version=True)

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data: assigned value must be a Tensor, got {type(value).__name__}")
        views.set_data(self, value)

    def detach_(self) -> "Tensor":
        self.grad_fn, self.requires_grad = None, False
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: can't retain_grad on a tensor that has requires_grad=False")
        if self.grad_fn is None:
            return
        import weakref
        node = self.grad_fn
        node.retained = node.retained or {}
        node.retained[self._out_index] = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        node = self.grad_fn
        return bool(node is not None and node.retained and self._out_index in node.retained)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it.
        Returns a handle with ``remove()``.

        >>> import webgrad as wg
        >>> x = wg.tensor([1.0], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> (x * 3).sum().backward()
        >>> x.grad.tolist()
        [6.0]
        """
        if not self.requires_grad:
            raise RuntimeError("register_hook: cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            self._hooks = self._hooks or []
            hooks = self._hooks
        else:
            node = self.grad_fn
            node.hooks = node.hooks or {}
            hooks = node.hooks.setdefault(self._out_index, [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` on this leaf once a backward pass has accumulated its gradient into
        ``.grad``: as soon as that gradient is whole, while the rest of the pass still runs (as
        PyTorch's, which ``DistributedDataParallel`` uses to start all-reducing early). Returns a
        handle with ``remove()``.

        >>> import webgrad as wg
        >>> w, seen = wg.ones(2, requires_grad=True), []
        >>> h = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        >>> (w * 3).sum().backward(); seen
        [[3.0, 3.0]]
        """
        if not self.requires_grad:
            raise RuntimeError("register_post_accumulate_grad_hook: cannot register a hook on a tensor that "
                               "doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("register_post_accumulate_grad_hook: post accumulate grad hooks cannot be "
                               "registered on non-leaf tensors")
        entry = post_accumulate_hooks.get(id(self))
        if entry is None:
            entry = post_accumulate_hooks[id(self)] = (ref(self, _forget_hooks(id(self))), [])
        entry[1].append(hook)
        return _HookHandle(entry[1], hook)

    def _alias(self) -> "Tensor":
        t = Tensor._wrap(self._data, self._backend)
        t.requires_grad, t.grad_fn, t._out_index = self.requires_grad, self.grad_fn, self._out_index
        return t

    def _alias_detached(self) -> "Tensor":
        return Tensor._wrap(self._data, self._backend)

    # ------------------------------------------------------------ in-place
    def _assign(self, new: "Tensor", op: str) -> "Tensor":
        """Make this tensor hold ``new``'s value (in-place ops end here): checks, casts,
        rebinds the data, bumps the version counter and takes over ``new``'s graph position."""
        if _mode.enabled and self.requires_grad and self.grad_fn is None:
            raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an in-place operation; "
                               f"wrap it in `with webgrad.no_grad():` (e.g. for a parameter update)")
        if new._backend is not self._backend:
            raise RuntimeError(f"{op}: the new value is on {new._backend.name} but the tensor is on "
                               f"{self._backend.name}; move it first, e.g. value.to({self._backend.name!r})")
        if new._data.shape != self._data.shape:
            if new.ndim > self.ndim or any(n not in (1, s) for n, s in zip(new.shape[::-1], self.shape[::-1])):
                raise RuntimeError(f"{op}: the result of shape {tuple(new.shape)} cannot be written into a "
                                   f"tensor of shape {tuple(self.shape)}")
            new = run_kernel("Expand", new, shape=self._data.shape)
        if new._dtype is not self._dtype:
            if not can_cast(new._dtype, self._dtype):
                raise RuntimeError(f"{op}: result type {new._dtype.name} can't be cast to the desired output "
                                   f"type {self._dtype.name}")
            new = run_kernel("Cast", new, dtype=self._dtype)
        if self._view is not None:
            views.write(self, new, op)
            return self
        if new.requires_grad and new.grad_fn is None and _mode.enabled:   # a leaf: its copy gets a node
            new = run_kernel("Identity", new)
        elif self.requires_grad and not new.requires_grad and _mode.enabled:
            new = _overwritten(self, new, op)
        self._data = new._data
        if new.requires_grad and _mode.enabled:
            self.requires_grad, self.grad_fn, self._out_index = True, new.grad_fn, new._out_index
        views.changed(self, writer=self, op=op)
        return self

    # ------------------------------------------------------------ backends and dtypes
    def to(self, *args, **kwargs) -> "Tensor":
        """Convert dtype and/or move to another backend: ``t.to("wgpu")``, ``t.to(webgrad.float64)``,
        ``t.to(other)`` (matches ``other``'s backend and dtype). Differentiable.

        >>> import webgrad as wg
        >>> wg.tensor([1, 2]).to(wg.float32).tolist()
        [1.0, 2.0]
        """
        dest, dtype = to_args("to", args, kwargs)
        t = self
        if dest is not None and dest is not self._backend:
            t = _move(t, dest)
        if dtype is not None and to_dtype(dtype) is not t._dtype:
            dtype = to_dtype(dtype)
            if t._dtype.is_complex and not dtype.is_complex:
                warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
            t = run_kernel("Cast", t, dtype=dtype)
        return t

    def cpu(self, *, memory_format=None) -> "Tensor":
        """This tensor on the ``cpu`` backend (``memory_format`` accepted without effect, as in ``to``)."""
        return self.to("cpu", memory_format=memory_format)

    def type(self, dtype=None, non_blocking=False):
        """PyTorch's tensor type name (``'torch.FloatTensor'``, as scripts compare it) without ``dtype``;
        with one (a dtype or such a name), this tensor cast to it.

        >>> import webgrad as wg
        >>> wg.ones(1).type(), wg.ones(1).type("torch.LongTensor").dtype
        ('torch.FloatTensor', webgrad.int64)
        """
        if dtype is None:
            return TYPE_NAMES[self._dtype.name]
        if isinstance(dtype, str) and dtype in _TYPE_DTYPES:
            dtype = _TYPE_DTYPES[dtype]
        return self.to(dtype)

    def type_as(self, other) -> "Tensor":
        """This tensor cast to ``tensor``'s dtype (its device is not changed, as in PyTorch on one device).

        >>> import webgrad as wg
        >>> wg.tensor([1, 2]).type_as(wg.zeros(1)).tolist()
        [1.0, 2.0]
        """
        if not isinstance(other, Tensor):
            raise TypeError(f"type_as: expected a Tensor, got {type(other).__name__}")
        return self.to(other._dtype)

    def is_complex(self) -> bool:
        """True for complex64 and complex128 tensors.

        >>> import webgrad as wg
        >>> wg.tensor([1j]).is_complex(), wg.zeros(1).is_complex()
        (True, False)
        """
        return self._dtype.is_complex

    def __getattr__(self, name):
        """Only for names Tensor lacks: an AttributeError saying why when PyTorch has the name and
        webgrad refuses it (``t.to_dense()``: no sparse layouts), else pointing at docs/porting.md."""
        from .porting_table import missing_attribute
        raise missing_attribute("webgrad.Tensor", name, "'Tensor' object")


inference_tensors = WeakValueDictionary()   # id -> a tensor made inside inference_mode (Tensor.is_inference)

engine.Tensor, engine._wrap = Tensor, Tensor._wrap   # (engine cannot import this module: it is imported by it)


# PyTorch's legacy tensor type names, which ``type()`` returns and takes
TYPE_NAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "float16": "torch.HalfTensor",
              "bfloat16": "torch.BFloat16Tensor", "int32": "torch.IntTensor", "int64": "torch.LongTensor",
              "bool": "torch.BoolTensor", "uint8": "torch.ByteTensor", "int8": "torch.CharTensor",
              "int16": "torch.ShortTensor", "complex64": "torch.ComplexFloatTensor",
              "complex128": "torch.ComplexDoubleTensor"}
_TYPE_DTYPES = {name: dtype for dtype, name in TYPE_NAMES.items()}


# id(leaf) -> (weak reference to the leaf, [hook(leaf)]): register_post_accumulate_grad_hook's, by identity
# (a WeakKeyDictionary would compare tensors with ==, an op); an entry goes when its leaf dies
post_accumulate_hooks = {}


def _forget_hooks(key, hooks=post_accumulate_hooks):
    return lambda _: hooks.pop(key, None)   # (the dict itself: module globals may be gone at interpreter exit)


class _HookHandle:
    def __init__(self, hooks, fn):
        self.hooks, self.fn = hooks, fn

    def remove(self):
        if self.fn in self.hooks:
            self.hooks.remove(self.fn)


_TO_KEYWORDS = ("device", "dtype", "non_blocking", "copy", "memory_format")


def to_args(op: str, args, kwargs):
    """(backend object or None, dtype or None) from PyTorch's ``to()`` arguments: a device (or device
    string), a dtype, a tensor (its device and dtype), and the keywords ``device``, ``dtype``,
    ``non_blocking``, ``copy`` and ``memory_format`` (these three accepted: nothing here depends on them)."""
    unknown = set(kwargs) - set(_TO_KEYWORDS) - {"backend"}
    if unknown:
        raise TypeError(f"{op}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    dest, dtype = kwargs.get("device", kwargs.get("backend")), kwargs.get("dtype")
    for a in args:
        if isinstance(a, Tensor):
            dest, dtype = a._backend, a._dtype
        elif isinstance(a, str) and a in DTYPES:
            dtype = a
        elif isinstance(a, (str, device)) or hasattr(a, "dtype_of"):   # a device, or a backend object
            dest = a
        elif isinstance(a, bool) or a is None:
            continue   # PyTorch's positional non_blocking/copy
        else:
            dtype = a
    return (None if dest is None else registry.resolve(dest)), (None if dtype is None else to_dtype(dtype))


def _transfer(t: Tensor, dest) -> Tensor:
    src = t._backend
    if hasattr(dest, "from_array") and hasattr(src, "to_numpy"):
        try:
            return Tensor._wrap(dest.from_array(src.to_numpy(t._data), t._dtype), dest)
        except ImportError:
            pass
    flat, shape, dtype = src.read(t._data)
    return Tensor._wrap(dest.upload(flat, shape, dtype), dest)


def _move(t: Tensor, dest) -> Tensor:
    out = _transfer(t, dest)
    src = t._backend
    record_function("To", lambda dy, saved, attrs: (_move(dy, src),), [t], (out,))
    return out


def _overwritten(old: Tensor, new: Tensor, op: str) -> Tensor:
    """``new`` (a value that needs no gradient: ``y.zero_()``, ``y.fill_(3)``, ``y[:] = 0``) as the new
    value of ``old``, which did: recorded as a node that gives ``old``'s history a zero gradient, as
    PyTorch's in-place overwrites do (so the result still requires grad, and nothing flows through)."""
    out = Tensor._wrap(new._data, new._backend)
    record_function(op, _zero_gradient, [old._alias()], (out,))
    return out


def _zero_gradient(dy, saved, attrs):
    return (run_kernel("Fill", backend=dy._backend, shape=dy._data.shape, value=0, dtype=dy._dtype),)


def tensor(data, dtype=None, requires_grad=False, backend=None, device=None, pin_memory=False) -> Tensor:
    """Create a tensor from a Python scalar, nested lists, ``array.array``/buffer, a numpy array,
    or another tensor (copied). Floats default to float32, ints to int64, as in PyTorch.
    ``pin_memory`` is accepted without effect (GPU uploads need no pinned memory).

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2], [3, 4]], dtype=wg.float32).shape
    webgrad.Size([2, 2])
    """
    if not isinstance(pin_memory, bool):
        raise TypeError(f"tensor: pin_memory must be a bool, got {type(pin_memory).__name__}")
    be = registry.resolve(backend if backend is not None else device)
    dt = None if dtype is None else to_dtype(dtype)
    if isinstance(data, Tensor):
        t = data.detach().to(be.name)
        t = t.to(dt) if dt is not None else run_kernel("Identity", t)
    elif is_array_like(data) and not isinstance(data, (memoryview, bytes, bytearray)):
        t = Tensor._wrap(_from_array(be, data, dt), be)
    else:
        flat, shape, dt = as_host(data, dt)
        t = Tensor._wrap(be.upload(flat, shape, dt), be)
    if requires_grad:
        t.requires_grad_()
    return t


def _from_array(be, data, dt):
    if hasattr(be, "from_array"):
        return be.from_array(data, dt)
    flat, shape, dt = as_host(data.tolist(), dt or to_dtype(data.dtype))
    return be.upload(flat, shape, dt)


from . import autograd as _autograd  # noqa: E402  (it imports Tensor and tensor: bound last, once they exist)
