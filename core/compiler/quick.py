"""The quick guard: a call's places and key without walking again, when nothing they depend on moved.

``find_places`` walks from a function to the modules, optimizers, closures and globals it reaches at
every call (tens of microseconds; several times that under Pyodide). ``watch`` walks as it does and
also notes every container the walk read, as the identities of what it held (the objects are kept
alive, so an identity cannot be reused): a module's submodules, parameters and buffer names and its
training flag, an optimizer's groups, their guarded options and parameters, each parameter's state
(its keys and the kinds of its values), the function's closure cells, defaults and the globals its
code names, the arguments' types and their non-tensor values, the modes. ``quick(fn, args, kwargs)``
reads those again, and the tensors of the places (re-read from their owners: a step hands out new
``.grad`` and state tensors) with their shapes, dtypes, backends and autograd flags and which of them
share data; when all agree it returns the last walk's places and key with the tensors read now, or
None (then the call walks). It is stricter than the key (an identity where the key holds a value), so
it never accepts a call the walk would give another key or other places.

>>> import webgrad as wg
>>> m = wg.nn.Linear(2, 1)
>>> found, quick = watch(m, (wg.ones(2),), {})
>>> quick(m, (wg.zeros(2),), {}).key == found.key
True
>>> _ = m.weight.requires_grad_(False)
>>> quick(m, (wg.zeros(2),), {}) is None     # the walk gives another key now
True
"""
from __future__ import annotations

import types
from itertools import repeat
from operator import attrgetter, call, itemgetter

from .. import dtypes
from ..amp import state as _autocast
from ..engine import _mode
from ..nn.module import Module
from ..tensor import Tensor
from ..optim.optimizer import Optimizer
from ..optim.sched_base import LRScheduler
from .places import _UNGUARDED_OPTIONS, Found, _flatten, _names, _Walk, find_places

_ABSENT = object()
_GRAD, _DATA, _CONTENTS = attrgetter("grad"), attrgetter("_data"), attrgetter("cell_contents")
_SIGNATURE = attrgetter("_data.shape", "_dtype", "_backend", "requires_grad", "grad_fn", "_view")


def _ids(values) -> tuple:
    return tuple(map(id, values))


def _module(m) -> tuple:
    """What ``find_places`` reads of one module (its children, training flag, parameters, buffer names)."""
    return _ids(m._modules.values()), m.training, _ids(m._parameters.values()), tuple(m._buffers)


def _cells(closure) -> tuple:   # (a function's __closure__ tuple is fixed; its cells' contents are not)
    return _ids(map(_CONTENTS, closure))   # (an empty cell raises ValueError: the call walks)


def _modes() -> tuple:
    return (_mode.enabled, _mode.inference, dtypes.default_float,
            tuple(sorted((name, d.name) for name, d in _autocast.dtypes.items())))


def _picker(keys):
    """A function giving the identities of a dict's values at ``keys``."""
    if not keys:
        return lambda d: ()
    get = itemgetter(*keys)
    return (lambda d: (id(get(d)),)) if len(keys) == 1 else (lambda d: _ids(get(d)))


class _Watch(_Walk):
    """``find_places``' walk, noting each read as (function, argument, what it gave) and the objects whose
    identities those hold (``kept``)."""

    def __init__(self):
        super().__init__()
        self.reads, self.kept = [], []

    def read(self, fn, arg, *objects) -> None:
        self.reads.append((fn, arg, fn(arg)))
        self.kept.append(objects)

    def visit(self, obj, depth: int = 0) -> None:
        if id(obj) not in self.seen:
            kind = type(obj)
            if isinstance(obj, LRScheduler):
                self.read(_optimizer_id, obj, obj.optimizer)
            elif depth < 2 and kind in (list, tuple):
                self.read(_ids, obj, list(obj))
            elif depth < 2 and kind is dict:
                self.read(_value_ids, obj, list(obj.values()))
        super().visit(obj, depth)

    def module(self, m) -> None:
        for mod in m.modules():
            self.read(_module, mod, list(mod._modules.values()), list(mod._parameters.values()))
        super().module(m)

    def optimizer(self, opt) -> None:
        free = _UNGUARDED_OPTIONS if getattr(opt, "per_step_numbers", False) else _UNGUARDED_OPTIONS[::2]
        self.read(_groups, opt, list(opt.param_groups))
        state = opt.state
        for group in opt.param_groups:
            guarded = _picker([k for k in group if k not in free])
            self.read(lambda g, v=guarded: (tuple(g), v(g), _ids(g["params"])), group, list(group.values()),
                      list(group["params"]))
            params = group["params"]
            self.read(lambda ps, o=opt: _ids(map(o.state.get, ps)), params, [state.get(p) for p in params])
            for p in params:
                s = state.get(p)
                if s is not None:
                    keys = [k for k, v in s.items() if not isinstance(v, (Tensor, float))]
                    self.read(lambda d, v=_picker(keys): (tuple(d), tuple(map(type, d.values())), v(d)), s,
                              [s[k] for k in keys])   # (not the state's tensors: each replay replaces them)
        super().optimizer(opt)

    def arguments(self, args, kwargs) -> None:
        self.n_args = None if kwargs or any(type(a) in (list, tuple, dict) for a in args) else len(args)
        flat = _flatten((args, kwargs))
        self.arg_kinds = tuple(map(type, flat))
        self.arg_values = [a for a in flat if not isinstance(a, Tensor)]
        super().arguments(args, kwargs)

    def function(self, fn) -> None:
        target = getattr(fn, "__self__", None)
        if target is not None and not isinstance(target, (types.ModuleType, Module, Optimizer)):
            self.read(_attribute_ids, target, list(getattr(target, "__dict__", {}).values()))
        f = getattr(fn, "__func__", fn)
        if not isinstance(f, Module):
            code = getattr(f, "__code__", None)
            self.read(_code, f, code, getattr(f, "__defaults__", None), getattr(f, "__kwdefaults__", None))
            closure = getattr(f, "__closure__", None) or ()
            if closure and all(map(_full, closure)):
                self.read(_cells, closure, [c.cell_contents for c in closure])
            elif closure:             # an empty cell (a name bound later): such a function always walks
                self.reads.append((_never, closure, None))
            kw = getattr(f, "__kwdefaults__", None)
            if kw:
                self.read(_value_ids, kw, list(kw.values()))
            names = getattr(f, "__globals__", None)
            if code is not None and names is not None:
                used = tuple(_names(code))
                fetch = names.get
                self.read(lambda u: _ids(map(fetch, u, repeat(_ABSENT))), used, [fetch(n, _ABSENT) for n in used])
        super().function(fn)


def _never(_):
    """A read that never gives what it gave (a closure with an empty cell: the call walks)."""
    return _never


def _value_ids(d) -> tuple:
    return _ids(d.values())


def _optimizer_id(scheduler) -> int:
    return id(scheduler.optimizer)


def _groups(opt) -> tuple:
    return getattr(opt, "per_step_numbers", False), _ids(opt.param_groups)


def _attribute_ids(obj) -> tuple:
    return _ids(getattr(obj, "__dict__", {}).values())


def _code(f) -> tuple:
    return (id(getattr(f, "__code__", None)), id(getattr(f, "__defaults__", None)),
            id(getattr(f, "__kwdefaults__", None)))


def _full(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


class Quick:
    """The quick guard of one walk (see the module's doc): ``quick(fn, args, kwargs)`` -> Found or None.
    The tensors of the places are read in a few C-level passes: the parameters' and fixed tensors' (the
    places are the tensors), the ``.grad`` of the grad places' owners, the dict entries of buffers and
    state, the argument tensors; then put in the places' order, and their types and signatures compared."""

    def __init__(self, walk: _Watch, found: Found):
        self.places, self.key = found.places, found.key     # (not the tensors: they are read at each call)
        self.reached = (found.optimizers, found.schedulers, found.modules)
        self.fns, self.objs, self.got = (list(part) for part in zip(*walk.reads)) if walk.reads else ([], [], [])
        self.kept = walk.kept
        self.entry = None                                  # the plan kept for the key (CompiledFunction sets it)
        self.arg_kinds, self.arg_values = walk.arg_kinds, walk.arg_values
        self.arg_ids = _ids(walk.arg_values)
        self._layout(found.places)
        self.types = tuple(map(type, found.tensors))
        self.held = _positions([i for i, t in enumerate(found.tensors) if t is not None])
        self.signatures = list(map(_SIGNATURE, self.held(found.tensors)))
        self.modes = _modes()
        self.check = None if walk.n_args is None else self._generated(walk.n_args, found.tensors)

    def _layout(self, places) -> None:
        """Where each place's tensor comes from: owners (parameters, fixed tensors), ``.grad`` of owners,
        dict entries, argument tensors, concatenated in that order; ``order`` puts them in the places'."""
        same, grads, dicts, keys, args, at = [], [], [], [], [], {}
        for i, (kind, owner, key) in enumerate(places):
            group = {"param": same, "fixed": same, "grad": grads, "buffer": dicts, "state": dicts}.get(kind, args)
            at[i] = (group, len(group))
            group.append(key if kind == "arg" else owner)
            if group is dicts:
                keys.append(key)
        start = {id(same): 0, id(grads): len(same), id(dicts): len(same) + len(grads),
                 id(args): len(same) + len(grads) + len(dicts)}
        self.same, self.grads, self.dicts, self.keys, self.args = same, grads, dicts, keys, args
        self.order = _positions([start[id(g)] + k for g, k in (at[i] for i in range(len(places)))])

    def _generated(self, n_args: int, tensors):
        """``_check`` for calls with ``n_args`` plain positional arguments, as one generated function
        (``check_source``): each read, kind and signature compared in turn, the places' tensors read
        straight from their owners."""
        namespace = {"Found": Found, "reached": self.reached, "places": self.places, "key": self.key,
                     "sig": _SIGNATURE, "mode": _mode, "dtypes": dtypes, "autocast": _autocast}
        self.source = check_source(self, n_args, tensors, namespace)
        exec(compile(self.source, "<webgrad quick guard>", "exec"), namespace)
        return namespace["check"]

    def __call__(self, fn, args, kwargs):
        try:
            return (self._check if self.check is None else self.check)(args, kwargs)
        except (AttributeError, KeyError, TypeError, ValueError, IndexError):   # a container the walk read
            return None                                    # changed its shape: the call walks (and sees what)

    def _check(self, args, kwargs):
        simple = not kwargs and all(type(a) not in (list, tuple, dict) for a in args)
        flat = args if simple else _flatten((args, kwargs))
        if tuple(map(type, flat)) != self.arg_kinds:
            return None
        if self.arg_values and _ids([a for a in flat if not isinstance(a, Tensor)]) != self.arg_ids:
            return None
        if list(map(call, self.fns, self.objs)) != self.got:     # every read again, in one pass
            return None
        if _modes() != self.modes:
            return None
        flat_tensors = [a for a in flat if isinstance(a, Tensor)]
        tensors = list(self.order(self.same + list(map(_GRAD, self.grads)) + list(map(dict.get, self.dicts, self.keys))
                                  + [flat_tensors[k] for k in self.args]))
        if tuple(map(type, tensors)) != self.types:
            return None
        held = self.held(tensors)
        if list(map(_SIGNATURE, held)) != self.signatures or len(set(map(id, map(_DATA, held)))) != len(held):
            return None                                  # (two places sharing data: the key notes which)
        return Found(self.places, tensors, self.key, *self.reached)


def check_source(q: Quick, n_args: int, tensors, namespace: dict) -> str:
    """The text of ``q``'s check for calls with ``n_args`` plain positional arguments (see ``Quick._check``;
    the names it uses are put in ``namespace``), e.g.::

        def check(args, kwargs):
            if kwargs or len(args) != 2: return None
            a0, a1 = args
            if type(a0) is not k0 or type(a1) is not k1: return None
            if r0(o0) != g0 or r1(o1) != g1: return None
            if mode.enabled is not m0 or ...: return None
            t0 = a0; t1 = a1; t2 = p2; t3 = p2.grad
            if type(t0) is not y0 or ...: return None
            if sig(t0) != s0 or ...: return None
            if len({id(t0._data), ...}) != 3: return None
            return Found(places, [t0, t1, t2, t3], key, *reached)
    """
    def name(prefix, k, value):
        namespace[f"{prefix}{k}"] = value
        return f"{prefix}{k}"

    def fails(tests):
        return [f"    if {' or '.join(tests)}: return None"] if tests else []
    a = [f"a{k}" for k in range(n_args)]
    lines = ["def check(args, kwargs):", f"    if kwargs or len(args) != {n_args}: return None"]
    if a:
        lines.append(f"    {', '.join(a)}{',' if n_args == 1 else ''} = args")
    lines += fails([f"type(a{k}) is not {name('k', k, kind)}" for k, kind in enumerate(q.arg_kinds)])
    values = [k for k, kind in enumerate(q.arg_kinds) if not issubclass(kind, Tensor)]
    lines += fails([f"id(a{k}) != {i}" for k, i in zip(values, q.arg_ids)])
    lines += fails([f"{name('r', k, fn)}({name('o', k, obj)}) != {name('g', k, got)}"
                    for k, (fn, obj, got) in enumerate(zip(q.fns, q.objs, q.got))])
    enabled, inference, default, _ = q.modes
    lines += fails([f"mode.enabled is not {name('m', 2, enabled)}", f"mode.inference is not {name('m', 3, inference)}",
                    f"dtypes.default_float is not {name('m', 0, default)}",
                    f"autocast.dtypes != {name('m', 1, dict(_autocast.dtypes))}"])
    args = [k for k, kind in enumerate(q.arg_kinds) if issubclass(kind, Tensor)]
    reads = []
    for i, (kind, owner, key) in enumerate(q.places):
        if kind == "arg":
            reads.append(f"a{args[key]}")
        elif kind in ("param", "fixed"):
            reads.append(name("p", i, owner))
        elif kind == "grad":
            reads.append(f"{name('p', i, owner)}.grad")
        else:    # a buffer's or a state's dict entry
            reads.append(f"{name('p', i, owner)}.get({name('q', i, key)})")
    lines += [f"    t{i} = {r}" for i, r in enumerate(reads)]
    lines += fails([f"type(t{i}) is not {name('y', i, kind)}" for i, kind in enumerate(q.types)])
    held = [i for i, t in enumerate(tensors) if t is not None]
    lines += fails([f"sig(t{i}) != {name('s', i, sig)}" for i, sig in zip(held, q.signatures)])
    if len(held) > 1:
        lines += fails([f"len({{{', '.join(f'id(t{i}._data)' for i in held)}}}) != {len(held)}"])
    lines.append(f"    return Found(places, [{', '.join(f't{i}' for i in range(len(reads)))}], key, *reached)")
    return "\n".join(lines) + "\n"


def _positions(indices):
    """A function giving the tuple of a sequence's items at ``indices``."""
    if not indices:
        return lambda seq: ()
    get = itemgetter(*indices)
    return (lambda seq: (get(seq),)) if len(indices) == 1 else get


def watch(fn, args, kwargs) -> tuple:
    """(``find_places(fn, args, kwargs)``, its ``Quick`` guard or None where a quick guard cannot stand for
    the walk: two places sharing data, an argument that is a leaf requiring grad (its ``.grad`` place is
    owned by the argument), a place holding a view or a tensor with a ``grad_fn``)."""
    walk = _Watch()
    found = find_places(fn, args, kwargs, walk)
    held = [t for t in found.tensors if t is not None]
    if len({id(t._data) for t in held}) != len(held) or any(p.kind == "grad" and p.owner is a for p in found.places
                                                            for a in walk.flat_args) \
            or any(t.grad_fn is not None or t._view is not None for t in held):   # (a guard holding them would
        return found, None                                                        # keep their graphs alive)
    return found, Quick(walk, found)


__all__ = ["Quick", "watch"]
