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
_SIGNATURE = attrgetter("_data.shape", "_dtype", "_backend", "requires_grad", "grad_fn")
_OWN_VIEWS = ("param", "fixed")   # places that are their tensors: the guard compares their views by identity


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
                if type(s) is dict and not s:   # (an empty state, e.g. SGD's without momentum: that it stays so)
                    self.read(len, s)
                elif s is not None:
                    keys = [k for k, v in s.items() if not isinstance(v, (Tensor, float))]
                    self.read(lambda d, v=_picker(keys): (tuple(d), tuple(map(type, d.values())), v(d)), s,
                              [s[k] for k in keys])   # (not the state's tensors: each replay replaces them)
        super().optimizer(opt)

    def arguments(self, args, kwargs) -> None:
        self.plain = not kwargs and all(type(a) not in (list, tuple, dict) for a in args)   # (as _check's simple)
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
        self.own_views = self.held([p.kind in _OWN_VIEWS for p in found.places])
        self.views = _views(self.own_views, self.held(found.tensors))
        self.modes = _modes()
        self._check = _generated(self, walk, found.tensors) or self._check

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

    def __call__(self, fn, args, kwargs):
        try:
            return self._check(args, kwargs)
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
        if _views(self.own_views, held) != self.views:
            return None
        return Found(self.places, tensors, self.key, *self.reached)


def _views(own, held) -> list:
    """What the guard compares of the places' views: a parameter's or fixed tensor's ``ViewInfo`` itself (the
    same root and layout; the place holds that tensor anyway), whether any other place's tensor is a view (as
    the key notes it: a new argument or ``.grad`` is a new tensor, and the guard keeps none of their roots alive)."""
    return [t._view if o else t._view is None for o, t in zip(own, held)]


def _generated(q: Quick, walk: _Watch, tensors: list):
    """``q._check`` as one generated function of straight-line comparisons (``guard_source``), for a walk
    over plain positional arguments (no keywords, no containers); None otherwise (the general check)."""
    if not walk.plain:
        return None
    text, namespace = guard_source(q, tensors)
    exec(compile(text, "<webgrad.compile quick guard>", "exec"), namespace)
    fn = namespace["check"]
    fn.source = text
    return fn


def _tensor_expression(place, k: int, tensor_args: list) -> str:
    """Where place ``k``'s tensor is read at a call (its owner ``O<k>``, a ``.grad``, a dict entry, an argument)."""
    kind = place[0]
    if kind in ("param", "fixed"):
        return f"O{k}"
    if kind == "grad":
        return f"O{k}.grad"
    if kind in ("buffer", "state"):
        return f"O{k}.get(K{k})"
    return f"a{tensor_args[place[2]]}"


def guard_source(q: Quick, tensors: list) -> tuple:
    """(the text of ``check(args, kwargs)``, its namespace): the quick guard's comparisons for a walk over
    plain positional arguments that found ``tensors`` (their signatures are written in, not the tensors,
    which the guard does not keep), one per line in the order ``Quick._check`` makes them: the arguments'
    count and types (non-tensor ones by identity), each read of the walk, the modes, each place's tensor
    (its type; where it holds one, its signature) and that no two places share data; it returns the
    ``Found`` or None. Identities stand where ``_check`` compares values (``is`` for dtypes, backends,
    flags): at least as strict, never looser.

    >>> import webgrad as wg
    >>> found, quick = watch(wg.nn.Linear(2, 1), (wg.ones(2),), {})
    >>> print(quick._check.source.splitlines()[1])
        if kwargs or len(args) != 1:
    """
    ns = {"Found": Found, "_mode": _mode, "dtypes": dtypes, "_autocast": _autocast, "_modes": _modes,
          "PLACES": q.places, "KEY": q.key, "REACHED": q.reached}
    tests = _argument_tests(q, ns) + _read_tests(q, ns) + _mode_tests(q, ns)
    loads, place_tests = _place_tests(q, tensors, ns)
    n = len(q.arg_kinds)
    lines = ["def check(args, kwargs):", f"    if kwargs or len(args) != {n}:", "        return None"]
    if n:
        lines.append(f"    {', '.join(f'a{i}' for i in range(n))}{',' if n == 1 else ''} = args")
    for load, test in [(None, t) for t in tests] + place_tests:
        if load is not None:
            lines.append(f"    {load}")
        lines += [f"    if {test}:", "        return None"]
    lines.append(f"    return Found(PLACES, [{', '.join(loads)}], KEY, *REACHED)")
    return "\n".join(lines), ns


def _argument_tests(q: Quick, ns: dict) -> list:
    """The arguments' types, and the non-tensor ones' identities (``a<i>``: argument i)."""
    tests = []
    for i, kind in enumerate(q.arg_kinds):
        ns[f"A{i}"] = kind
        tests.append(f"type(a{i}) is not A{i}")
    plain = [i for i, kind in enumerate(q.arg_kinds) if not issubclass(kind, Tensor)]
    for i, v in zip(plain, q.arg_values):
        ns[f"V{i}"] = v
        tests.append(f"a{i} is not V{i}")
    return tests


def _read_tests(q: Quick, ns: dict) -> list:
    """Each read of the walk made again and compared with what it gave."""
    for j, (fn, obj, got) in enumerate(zip(q.fns, q.objs, q.got)):
        ns[f"R{j}"], ns[f"B{j}"], ns[f"G{j}"] = fn, obj, got
    return [f"R{j}(B{j}) != G{j}" for j in range(len(q.fns))]


def _mode_tests(q: Quick, ns: dict) -> list:
    """Grad mode, inference mode, the default dtype and autocast (``_modes``), as they were."""
    enabled, inference, default_float, autocast = q.modes
    ns.update(ME=enabled, MI=inference, MF=default_float, MODES=q.modes)
    return ["_mode.enabled is not ME or _mode.inference is not MI or dtypes.default_float is not MF",
            "_modes() != MODES" if autocast else "_autocast.dtypes and _modes() != MODES"]


def _place_tests(q: Quick, tensors: list, ns: dict) -> tuple:
    """(the names the places' tensors are loaded into, [(a load or None, a test)]): per place its tensor's
    type; where it holds one, its signature; then that no two of them share data."""
    tensor_args = [i for i, kind in enumerate(q.arg_kinds) if issubclass(kind, Tensor)]
    out, datas = [], []
    for k, place in enumerate(q.places):
        ns[f"O{k}"], ns[f"K{k}"], ns[f"T{k}"] = place.owner, place.key, q.types[k]
        out.append((f"t{k} = {_tensor_expression(place, k, tensor_args)}", f"type(t{k}) is not T{k}"))
        t = tensors[k]
        if t is not None:
            ns[f"S{k}"], ns[f"D{k}"], ns[f"E{k}"], ns[f"F{k}"] = t._data.shape, t._dtype, t._backend, t.requires_grad
            out.append((f"d{k} = t{k}._data", f"d{k}.shape != S{k} or t{k}._dtype is not D{k} or t{k}._backend is not "
                        f"E{k} or t{k}.requires_grad is not F{k} or t{k}.grad_fn is not None or {_view_test(place, t, k, ns)}"))
            datas.append(f"id(d{k})")
    if len(datas) > 1:
        out.append((None, f"len({{{', '.join(datas)}}}) != {len(datas)}"))
    return [f"t{k}" for k in range(len(q.places))], out


def _view_test(place, t, k: int, ns: dict) -> str:
    """The generated guard's test of place ``k``'s view (as ``_views`` compares it), ``t`` its tensor at the walk."""
    if t._view is None:
        return f"t{k}._view is not None"
    if place.kind in _OWN_VIEWS:
        ns[f"W{k}"] = t._view
        return f"t{k}._view is not W{k}"
    return f"t{k}._view is None"


def _positions(indices):
    """A function giving the tuple of a sequence's items at ``indices``."""
    if not indices:
        return lambda seq: ()
    get = itemgetter(*indices)
    return (lambda seq: (get(seq),)) if len(indices) == 1 else get


def watch(fn, args, kwargs) -> tuple:
    """(``find_places(fn, args, kwargs)``, its ``Quick`` guard or None where a quick guard cannot stand for
    the walk: two places sharing data, an argument that is a leaf requiring grad (its ``.grad`` place is
    owned by the argument), a place holding a tensor with a ``grad_fn``)."""
    walk = _Watch()
    found = find_places(fn, args, kwargs, walk)
    held = [t for t in found.tensors if t is not None]
    if len({id(t._data) for t in held}) != len(held) or any(p.kind == "grad" and p.owner is a for p in found.places
                                                            for a in walk.flat_args) \
            or any(t.grad_fn is not None for t in held):   # (a guard holding them would keep their graphs alive)
        return found, None
    return found, Quick(walk, found)


__all__ = ["Quick", "watch", "guard_source"]
