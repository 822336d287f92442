"""``Module``: the base class of every layer and model (PyTorch's ``torch.nn.Module``).

A module owns parameters, buffers and child modules, registered by assigning them as
attributes; everything else (traversal, ``state_dict``, ``to``, ``train``/``eval``)
walks those three dicts.
"""
from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import TypeVar

from ..engine import is_grad_enabled, no_grad
from ..tensor import Tensor, to_args
from . import module_state
from .backward_hooks import BackwardHooks
from .parameter import Buffer, Parameter


class _Handle:
    """What ``register_forward_hook`` returns: ``remove()`` takes the hook away."""

    def __init__(self, hooks: dict, key: int):
        self.hooks, self.key = hooks, key

    def remove(self):
        self.hooks.pop(self.key, None)


class Module:
    """Base class for layers and models: subclass it, assign layers and ``Parameter``\\ s
    in ``__init__``, and write ``forward``.

    >>> import webgrad as wg
    >>> class TwoLayer(wg.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc1, self.fc2 = wg.nn.Linear(4, 8), wg.nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.fc2(self.fc1(x).relu())
    >>> m = TwoLayer()
    >>> m(wg.ones(3, 4)).shape, len(list(m.parameters()))
    (webgrad.Size([3, 2]), 4)
    """

    training: bool
    _hook_id = 0
    call_super_init = False    # PyTorch's class attributes, read by some subclasses
    dump_patches = False
    T_destination = TypeVar("T_destination", bound=dict)

    def __init__(self):
        d = self.__dict__
        d["training"] = True
        d["_parameters"], d["_buffers"], d["_modules"] = OrderedDict(), OrderedDict(), OrderedDict()
        d["_non_persistent"] = set()
        d["_forward_hooks"], d["_forward_pre_hooks"] = OrderedDict(), OrderedDict()
        d["_backward_hooks"], d["_backward_pre_hooks"] = OrderedDict(), OrderedDict()

    def forward(self, *input):
        raise NotImplementedError(f"{type(self).__name__} is missing the required forward() method")

    def __call__(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            new = hook(self, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
        backward = self._backward_hook_points()
        if backward is not None:
            args = backward.wrap_inputs(args)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            new = hook(self, args, out)
            if new is not None:
                out = new
        return out if backward is None else backward.wrap_outputs(out)

    def _backward_hook_points(self):
        """This call's backward hook points, when backward hooks are registered and grad is on."""
        d = self.__dict__
        hooks, pre_hooks = d.get("_backward_hooks"), d.get("_backward_pre_hooks")
        if not (hooks or pre_hooks) or not is_grad_enabled():
            return None
        return BackwardHooks(self, pre_hooks.values(), hooks.values())

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's calls in place (``webgrad.compile``'s arguments), as PyTorch's
        ``Module.compile``: the module stays itself (its ``state_dict`` keys do not change).

        >>> import webgrad as wg
        >>> m = wg.nn.Linear(2, 1); m.compile()
        >>> m(wg.ones(3, 2)).shape
        webgrad.Size([3, 1])
        """
        from ..compiler import compile
        self.__dict__["_compiled_call_impl"] = compile(self._call_impl, *args, **kwargs)

    # ------------------------------------------------------------ registration
    def __setattr__(self, name, value):
        d = self.__dict__
        if "_parameters" not in d:
            if isinstance(value, (Parameter, Module)):
                raise AttributeError(f"cannot assign {type(value).__name__} '{name}' before Module.__init__() call")
            return object.__setattr__(self, name, value)
        if isinstance(value, Buffer) and name not in d["_parameters"] and name not in d["_modules"]:
            # PyTorch 2.5's nn.Buffer: assigning one registers it
            return self.register_buffer(name, value, value.persistent)
        kind = "_parameters" if isinstance(value, Parameter) else "_modules" if isinstance(value, Module) else None
        if kind is not None:
            d.pop(name, None)
            for table in ("_parameters", "_buffers", "_modules"):
                d[table].pop(name, None)
            d[kind][name] = value
            return
        for table, what in (("_parameters", "Parameter"), ("_modules", "Module"), ("_buffers", "Tensor")):
            if name in d[table]:
                if value is not None and not (table == "_buffers" and isinstance(value, Tensor)):
                    raise TypeError(f"cannot assign {type(value).__name__} as {table[1:-1]} '{name}' "
                                    f"(a {what} or None expected)")
                d[table][name] = value
                return
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(table, {}):
                del self.__dict__[table][name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param) -> None:
        """Add ``param`` (a Parameter or None) under ``name``."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: '{name}' must be a Parameter or None, got {type(param).__name__}")
        self.__dict__.pop(name, None)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (e.g. BatchNorm's running mean);
        it moves with ``to()`` and, when ``persistent``, is part of ``state_dict``.

        >>> import webgrad as wg
        >>> m = wg.nn.Module(); m.register_buffer("count", wg.zeros(1))
        >>> list(m.state_dict())
        ['count']
        """
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: '{name}' must be a Tensor or None, got {type(tensor).__name__}")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        (self._non_persistent.discard if persistent else self._non_persistent.add)(name)

    def add_module(self, name: str, module) -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: '{name}' must be a Module or None, got {type(module).__name__}")
        self.__dict__.pop(name, None)
        self._modules[name] = module

    register_module = add_module

    def register_forward_hook(self, hook):
        """Call ``hook(module, args, output)`` after every forward; a returned value replaces the output.

        >>> import webgrad as wg
        >>> m = wg.nn.Identity(); h = m.register_forward_hook(lambda mod, args, out: out * 2)
        >>> m(wg.ones(1)).tolist()
        [2.0]
        """
        return self._add_hook(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook):
        """Call ``hook(module, args)`` before every forward; a returned value replaces the args."""
        return self._add_hook(self._forward_pre_hooks, hook)

    def register_full_backward_hook(self, hook):
        """Call ``hook(module, grad_input, grad_output)`` when the gradients with respect to this
        module's inputs are computed (``None`` for inputs that need none); a returned tuple
        replaces ``grad_input``. See ``webgrad.nn.backward_hooks``."""
        return self._add_hook(self.__dict__.setdefault("_backward_hooks", OrderedDict()), hook)

    def register_full_backward_pre_hook(self, hook):
        """Call ``hook(module, grad_output)`` when the gradients with respect to this module's
        outputs are computed; a returned tuple replaces ``grad_output``."""
        return self._add_hook(self.__dict__.setdefault("_backward_pre_hooks", OrderedDict()), hook)

    def register_backward_hook(self, hook):
        """PyTorch's deprecated backward hook, run here as ``register_full_backward_hook``: its
        ``grad_input`` holds the gradients with respect to the module's inputs. (PyTorch's passes the
        last autograd node's input gradients instead, which include a layer's weight and bias
        gradients and, for a module of several nodes, miss the module's inputs; a FutureWarning says so.)"""
        warnings.warn("register_backward_hook is deprecated: webgrad runs the hook as register_full_backward_hook "
                      "would (grad_input: the gradients with respect to the module's inputs); use "
                      "register_full_backward_hook", FutureWarning, stacklevel=2)
        return self.register_full_backward_hook(hook)

    def _add_hook(self, table, hook):
        Module._hook_id += 1
        table[Module._hook_id] = hook
        return _Handle(table, Module._hook_id)

    # ------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix: str = ""):
        """(name, module) for this module and every descendant, each once."""
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, f"{prefix}.{name}" if prefix else name)

    def modules(self):
        """This module and every descendant."""
        return (m for _, m in self.named_modules())

    def named_children(self):
        """(name, module) for the direct children."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        """The direct child modules."""
        return (m for _, m in self.named_children())

    def _named_members(self, table, prefix, recurse):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, t in getattr(mod, table).items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), t

    def named_parameters(self, prefix: str = "", recurse: bool = True):
        """(dotted name, Parameter) pairs, each parameter once (shared ones are not repeated).

        >>> import webgrad as wg
        >>> [n for n, _ in wg.nn.Linear(2, 3).named_parameters()]
        ['weight', 'bias']
        """
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True):
        """The parameters, each once."""
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        """(dotted name, buffer) pairs."""
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True):
        """The buffers."""
        return (b for _, b in self.named_buffers(recurse=recurse))

    def get_submodule(self, target: str) -> "Module":
        """The descendant at dotted path ``target`` (``""`` is this module)."""
        mod = self
        for part in target.split(".") if target else ():
            if part not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{part}` (looking up '{target}')")
            mod = mod._modules[part]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``.

        >>> import webgrad as wg
        >>> wg.nn.Sequential(wg.nn.Linear(2, 3)).get_parameter("0.bias").shape
        webgrad.Size([3])
        """
        mod, name = self._owner_of(target)
        if not isinstance(getattr(mod, name), Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return getattr(mod, name)

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        mod, name = self._owner_of(target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    def _owner_of(self, target: str):
        """(the module holding dotted path ``target``'s last name, that name)."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        return mod, name

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target`` (its parent must exist; with ``strict``, so must it)."""
        if not target:
            raise ValueError("set_submodule: cannot set the submodule without a target name")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def apply(self, fn) -> "Module":
        """Call ``fn(m)`` on every child (recursively), then on this module; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ modes and gradients
    def train(self, mode: bool = True) -> "Module":
        """Set training mode (Dropout drops, BatchNorm uses batch statistics) here and below."""
        for m in self.modules():
            m.__dict__["training"] = bool(mode)
        return self

    def eval(self) -> "Module":
        """Set evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set ``requires_grad`` on every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's ``.grad`` (to None by default, or to zeros)."""
        for p in self.parameters():
            _clear_grad(p, set_to_none)

    # ------------------------------------------------------------ moving
    def to(self, *args, **kwargs) -> "Module":
        """Move parameters and buffers to a backend and/or floating dtype, in place (parameters
        keep their identity, so an optimizer made before still holds them).

        >>> import webgrad as wg
        >>> wg.nn.Linear(2, 2).to(wg.float64).weight.dtype
        webgrad.float64
        """
        dest, dtype = to_args("Module.to", args, kwargs)

        def convert(t):   # as PyTorch's ``param.data = fn(param.data)``: views of the old storage keep it
            moved = t.detach()
            moved = moved.to(dest) if dest is not None else moved
            moved = moved.to(dtype) if dtype is not None and t.dtype.is_floating else moved
            t.data = moved
            if t.grad is not None:
                convert(t.grad)
        with no_grad():
            for t in list(self.parameters()) + list(self.buffers()):
                convert(t)
        return self

    def cpu(self) -> "Module":
        return self.to("cpu")

    def to_empty(self, *, device, recurse: bool = True) -> "Module":
        """Move parameters and buffers to ``device`` leaving their values unspecified (here: kept)."""
        return self.to(device)

    def type(self, dst_type) -> "Module":
        """Cast every parameter and buffer (integer ones too) to ``dst_type``, in place."""
        with no_grad():
            for t in list(self.parameters()) + list(self.buffers()):
                t.data = t.detach().to(dst_type)
        return self

    def share_memory(self) -> "Module":
        """No effect (returns the module): webgrad shares no tensors between processes."""
        return self

    def cuda(self, device=None) -> "Module":
        """Raises as PyTorch does without CUDA: webgrad's GPU backend is ``wgpu`` (``module.to("wgpu")``)."""
        return self.to("cuda")

    def xpu(self, device=None) -> "Module":
        """Raises as PyTorch does without an XPU (Intel GPU); webgrad's GPU backend is ``wgpu``."""
        return self.to("xpu")

    def ipu(self, device=None) -> "Module":
        """Raises as PyTorch does without an IPU; webgrad's GPU backend is ``wgpu``."""
        return self.to("ipu")

    def mtia(self, device=None) -> "Module":
        """Raises as PyTorch does without an MTIA device; webgrad's GPU backend is ``wgpu``."""
        return self.to("mtia")

    def float(self) -> "Module":
        from ..dtypes import float32
        return self.to(float32)

    def double(self) -> "Module":
        from ..dtypes import float64
        return self.to(float64)

    def half(self) -> "Module":
        """Floating parameters and buffers in float16 (on a GPU backend, where its device has WebGPU's
        shader-f16 feature).

        >>> import webgrad as wg
        >>> wg.nn.Linear(2, 2).half().weight.dtype
        webgrad.float16
        """
        from ..dtypes import float16
        return self.to(float16)

    def bfloat16(self) -> "Module":
        """Floating parameters and buffers in bfloat16 (cpu only: WGSL has no bfloat16 type)."""
        from ..dtypes import bfloat16
        return self.to(bfloat16)

    # ------------------------------------------------------------ state (core/nn/module_state.py)
    _version = 1   # recorded in a state dict's metadata, as PyTorch's

    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False) -> "OrderedDict":
        """Parameters, persistent buffers and extra state by dotted name (detached unless ``keep_vars``).

        >>> import webgrad as wg
        >>> list(wg.nn.Sequential(wg.nn.Linear(2, 2)).state_dict())
        ['0.weight', '0.bias']
        """
        return module_state.state_dict(self, destination, prefix, keep_vars)

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        """This module's own entries (not its children's); subclasses may override it, as in PyTorch."""
        module_state.save_own(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy values from ``state_dict`` into this module's parameters and buffers (in place, cast to
        each one's dtype and backend; with ``assign``, the given tensors become them). With ``strict``,
        missing or unexpected keys raise; returns ``(missing_keys, unexpected_keys)``.

        >>> import webgrad as wg
        >>> a, b = wg.nn.Linear(2, 2), wg.nn.Linear(2, 2)
        >>> _ = b.load_state_dict(a.state_dict())
        >>> b.weight.tolist() == a.weight.tolist()
        True
        """
        return module_state.load_state_dict(self, state_dict, strict, assign)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        """Load this module's own entries (those under ``prefix``); subclasses may override it, as in PyTorch."""
        module_state.load_own(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs)

    def get_extra_state(self):
        """What a module puts in its state dict beyond parameters and buffers, under ``"_extra_state"``:
        override it (and ``set_extra_state``) to use it."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called: "
                           "override get_extra_state() in your module to add extra state to its state dict")

    def set_extra_state(self, state) -> None:
        """Take back what ``get_extra_state`` gave (override both)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called: "
                           "override set_extra_state() in your module to load extra state from a state dict")

    def register_state_dict_pre_hook(self, hook):
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        return self._add_hook(self.__dict__.setdefault("_state_dict_pre_hooks", OrderedDict()), hook)

    def register_state_dict_post_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict`` saved this module
        and its children (it may change ``state_dict`` in place, and must return None)."""
        return self._add_hook(self.__dict__.setdefault("_state_dict_hooks", OrderedDict()), (hook, False))

    def _register_state_dict_hook(self, hook):
        """PyTorch's older form of ``register_state_dict_post_hook``: the hook may return a new state dict."""
        return self._add_hook(self.__dict__.setdefault("_state_dict_hooks", OrderedDict()), (hook, True))

    def register_load_state_dict_pre_hook(self, hook):
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` before this module loads its entries (it may rename keys in ``state_dict``)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        """PyTorch's older form: ``hook(state_dict, prefix, ...)``, the module first ``with_module``."""
        def call(*args):
            return hook(self, *args) if with_module else hook(*args)
        return self._add_hook(self.__dict__.setdefault("_load_state_dict_pre_hooks", OrderedDict()), call)

    def register_load_state_dict_post_hook(self, hook):
        """Call ``hook(module, incompatible_keys)`` after this module and its children loaded (it may
        clear keys from ``incompatible_keys.missing_keys``/``unexpected_keys`` in place)."""
        return self._add_hook(self.__dict__.setdefault("_load_state_dict_post_hooks", OrderedDict()), hook)

    # ------------------------------------------------------------ repr
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in its repr (layers override it)."""
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            body = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        if not lines:
            return f"{type(self).__name__}()"
        if len(lines) == 1 and not self._modules:
            return f"{type(self).__name__}({lines[0]})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))


def _clear_grad(p, set_to_none):
    if p.grad is None:
        return
    if set_to_none:
        p.grad = None
    else:
        from ..ops.creation import zeros_like
        p.grad = zeros_like(p.grad)


class _IncompatibleKeys(tuple):
    """``(missing_keys, unexpected_keys)`` with those names as attributes."""

    def __new__(cls, missing, unexpected):
        return super().__new__(cls, (missing, unexpected))

    missing_keys = property(lambda self: self[0])
    unexpected_keys = property(lambda self: self[1])

    def __repr__(self):
        return "<All keys matched successfully>" if not self[0] and not self[1] else \
            f"_IncompatibleKeys(missing_keys={self[0]}, unexpected_keys={self[1]})"


__all__ = ["Module"]
