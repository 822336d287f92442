"""Where a compiled step's tensors live: its *places*, found afresh at every call.

A place is a spot that holds a tensor (or None) and that a step may read or rebind: an argument,
a parameter, a parameter's ``.grad``, a module's buffer, an entry of an optimizer's per-parameter
state. ``find_places`` walks from the function's arguments, its closure and the globals it names
to the modules, optimizers and LR schedulers it can reach, and lists the places in a fixed order,
with the guard key of the call: what a plan traced before must match to be replayed (shapes,
dtypes, backends, which places hold a tensor, grad mode, autocast, the default dtype, training flags,
optimizer options, plain Python arguments and the plain Python values the function names).

>>> import webgrad as wg
>>> m = wg.nn.Linear(2, 1)
>>> [p.kind for p in find_places(m, (wg.ones(2),), {}).places]
['arg', 'param', 'grad', 'param', 'grad']
"""
from __future__ import annotations

import types
from typing import NamedTuple

from .. import dtypes
from ..amp import state as _autocast
from ..engine import _mode
from ..nn.module import Module
from ..optim.optimizer import Optimizer
from ..optim.sched_base import LRScheduler
from ..tensor import Tensor

_SCALARS = (int, float, str, bool, type(None))
_UNGUARDED_OPTIONS = ("params", "lr", "param_names")   # lr: read again at each replay (see webgrad.per_step),
# by the optimizers whose per_step_numbers say so (for the others it is guarded: [::2] leaves it out)


class Place(NamedTuple):
    """A spot holding a tensor: ``kind`` ('arg', 'param', 'grad', 'buffer', 'state', 'fixed'),
    the object holding it (``owner``: a dict, a tensor, or None for an argument) and ``key``."""
    kind: str
    owner: object
    key: object

    def current(self, held):
        """What the place holds now (``held``: what it held when the call began)."""
        if self.kind == "grad":
            return self.owner.grad
        if self.kind in ("buffer", "state"):
            return self.owner.get(self.key)
        return held

    def set(self, value) -> None:
        if self.kind == "grad":
            self.owner.grad = value
        else:
            self.owner[self.key] = value


class Found(NamedTuple):
    """A call's places, the tensor each holds (or None), the call's guard key, and the optimizers,
    schedulers and modules it reaches."""
    places: list
    tensors: list
    key: tuple
    optimizers: list = []
    schedulers: list = []
    modules: list = []


def _signature(t) -> tuple:
    if t is None:
        return None
    return (t._data.shape, t._dtype, t._backend.name, t.requires_grad, t.grad_fn is not None, t._view is not None)


class _Walk:
    """One pass over what a call can reach: places in order, and the parts of the guard key."""

    def __init__(self):
        self.places, self.tensors, self.key = [], [], []
        self.seen, self.datas = set(), {}   # ids of what was visited; data id -> the first place holding it
        self.flat_args, self.optimizers, self.schedulers, self.modules = [], [], [], []

    def add(self, place: Place, t) -> None:
        """Add ``place`` holding ``t``; the key notes which earlier place holds the same data (aliasing)."""
        shared = None if t is None else self.datas.setdefault(id(t._data), len(self.places))
        self.places.append(place)
        self.tensors.append(t)
        self.key.append((place.kind, id(place.owner) if place.kind != "arg" else None, place.key, _signature(t),
                         shared))

    def visit(self, obj, depth: int = 0) -> None:
        """Add what ``obj`` holds: a tensor (as a fixed place), a module, an optimizer, a scheduler,
        or the members of a list, tuple or dict (two levels down)."""
        if id(obj) in self.seen:
            return
        kind = type(obj)
        if kind is Tensor or isinstance(obj, Tensor):
            self.seen.add(id(obj))
            self.add(Place("fixed", obj, None), obj)
            self.grad_of(obj)
        elif isinstance(obj, Module):
            self.seen.add(id(obj))
            self.module(obj)
        elif isinstance(obj, Optimizer):
            self.seen.add(id(obj))
            self.optimizer(obj)
        elif isinstance(obj, LRScheduler):
            self.seen.add(id(obj))
            self.schedulers.append(obj)
            self.visit(obj.optimizer, depth)
        elif depth < 2 and kind in (list, tuple):
            for o in obj:
                self.visit(o, depth + 1)
        elif depth < 2 and kind is dict:
            for o in obj.values():
                self.visit(o, depth + 1)

    def grad_of(self, t) -> None:
        """The ``.grad`` of a leaf that requires grad is a place (a backward pass fills it)."""
        if t.requires_grad and t.grad_fn is None:
            self.add(Place("grad", t, "grad"), t.grad)

    def param(self, p) -> None:
        if id(p) in self.seen:
            return
        self.seen.add(id(p))
        self.add(Place("param", p, None), p)
        self.add(Place("grad", p, "grad"), p.grad)

    def module(self, m) -> None:
        for mod in m.modules():
            self.modules.append(mod)
            self.key.append(("training", id(mod), mod.training))
            for p in mod._parameters.values():
                if p is not None:
                    self.param(p)
            buffers = mod._buffers
            for name in buffers:
                self.add(Place("buffer", buffers, name), buffers[name])

    def optimizer(self, opt) -> None:
        self.optimizers.append(opt)
        free = _UNGUARDED_OPTIONS if getattr(opt, "per_step_numbers", False) else _UNGUARDED_OPTIONS[::2]
        for group in opt.param_groups:
            self.key.append(("options", id(group), tuple([(k, _frozen(v)) for k, v in group.items()
                                                          if k not in free])))
            for p in group["params"]:
                self.param(p)
        state = opt.state
        for group in opt.param_groups:
            for p in group["params"]:
                s = state.get(p)
                if s is None:
                    self.key.append(("no state", id(p)))
                    continue
                for k in s:
                    v = s[k]
                    if isinstance(v, Tensor):
                        self.add(Place("state", s, k), v)
                    elif not isinstance(v, float):   # floats (a step count) are advanced by per_step functions
                        self.key.append(("state", id(s), k, _frozen(v)))

    def arguments(self, args, kwargs) -> None:
        """Tensors among the arguments become 'arg' places (by position in the flattened arguments);
        plain Python values join the guard key; modules and optimizers are walked."""
        for i, a in enumerate(_flatten((args, kwargs))):
            if isinstance(a, Tensor):
                self.flat_args.append(a)
                self.add(Place("arg", None, len(self.flat_args) - 1), a)
                self.grad_of(a)
            elif isinstance(a, _SCALARS):
                self.key.append(("value", i, type(a), a))
            else:
                self.key.append(("object", i, type(a)))
                self.visit(a)

    def function(self, fn) -> None:
        """What ``fn`` reaches: its bound object, its closure cells and the globals its code names."""
        target = getattr(fn, "__self__", None)
        if target is not None and not isinstance(target, types.ModuleType):
            self.visit(target)
            if not isinstance(target, (Module, Optimizer)):
                for v in getattr(target, "__dict__", {}).values():
                    self.visit(v, 1)
        fn = getattr(fn, "__func__", fn)
        if isinstance(fn, Module):
            return
        code = getattr(fn, "__code__", None)
        for name, cell in zip(code.co_freevars if code is not None else (), getattr(fn, "__closure__", None) or ()):
            try:
                self.reached(name, cell.cell_contents)
            except ValueError:   # an empty cell
                pass
        keyword_defaults = getattr(fn, "__kwdefaults__", None) or {}
        for value in (getattr(fn, "__defaults__", None) or ()) + tuple(keyword_defaults.values()):
            self.visit(value)
        names = getattr(fn, "__globals__", {})
        for name in _names(code) if code is not None else ():
            if name in names:
                self.reached(name, names[name])

    def reached(self, name: str, value) -> None:
        """A value ``fn`` names: plain Python values join the guard key (a change traces again)."""
        if isinstance(value, _SCALARS):
            self.key.append(("name", name, type(value), value))
        else:
            self.visit(value)


def _names(code) -> list:
    """The global names ``code`` and the code objects nested in it use."""
    out = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out += _names(c)
    return out


def _flatten(obj, out=None) -> list:
    out = [] if out is None else out
    if type(obj) in (list, tuple):
        for o in obj:
            _flatten(o, out)
    elif type(obj) is dict:
        for k, o in obj.items():
            out.append(k)
            _flatten(o, out)
    else:
        out.append(obj)
    return out


def _frozen(v):
    if isinstance(v, (list, tuple)):
        return tuple([_frozen(x) for x in v])
    if isinstance(v, Tensor):
        return ("tensor", id(v))
    return v if isinstance(v, _SCALARS) else (type(v).__name__, id(v))


def find_places(fn, args, kwargs, walk=None) -> Found:
    """The places of a call of ``fn(*args, **kwargs)`` and its guard key (``walk``: the ``_Walk`` to
    use, e.g. ``quick``'s, which notes what it reads)."""
    walk = _Walk() if walk is None else walk
    walk.arguments(args, kwargs)
    walk.function(fn)
    if isinstance(fn, Module):
        walk.visit(fn)
    walk.key.append(("modes", _mode.enabled, _mode.inference, dtypes.default_float.name,
                     tuple(sorted((name, d.name) for name, d in _autocast.dtypes.items()))))
    return Found(walk.places, walk.tensors, tuple(walk.key), walk.optimizers, walk.schedulers, walk.modules)


__all__ = ["Place", "Found", "find_places"]
