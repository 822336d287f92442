"""Replaying a plan: its steps as one generated Python function, then its write-backs and outputs.

The steps become straight-line code over local variables, one line per kernel call with its
attributes written in (the dynamic ones read from the per-step numbers), e.g.::

    def steps(T, D):
        s0 = T[0]._data
        s7 = k3(s0, s5)                      # MatMul
        s8 = k4(value=D[0], shape=(), dtype=c8)
        del s7
        return s8, s9

so a replay runs no ``Tensor``, ``Node`` or op code: only the kernel functions, which on ``cpu`` are
numpy calls and on the GPU backends record their prepared dispatches. ``source`` holds the text (it
is what ``explain()`` shows). Backends that replay differently (``gpu_replay``) build on the same plan.
"""
from __future__ import annotations

from .. import engine
from ..tensor import Tensor
from ..views import live_views, refresh
from .fusion import fuse_plan
from .plan import Plan

_LITERALS = (int, bool, str, type(None))
_wrap = Tensor._wrap


def _literal(v) -> bool:
    """Whether ``repr(v)`` evaluates back to ``v`` exactly (ints, strings, finite floats, tuples of them)."""
    if type(v) in _LITERALS:
        return True
    if type(v) is float:
        return v == v and v not in (float("inf"), float("-inf"))
    return type(v) is tuple and all(_literal(x) for x in v)


class Source:
    """Builds the generated function: names for kernels and constants, and its lines."""

    def __init__(self, plan: Plan):
        self.plan, self.names, self.lines = plan, {}, []
        self.namespace = {}

    def name(self, obj, prefix: str) -> str:
        key = (prefix, id(obj))
        n = self.names.get(key)
        if n is None:
            n = self.names[key] = f"{prefix}{len(self.names)}"
            self.namespace[n] = obj
        return n

    def value(self, slot) -> str:
        return self.name(self.plan.consts[slot], "c") if slot in self.plan.consts else f"s{slot}"

    def call(self, step) -> str:
        args = [self.value(s) for s in step.ins]
        for k, v in () if step.captured else step.attrs.items():
            if k in step.dynamic:
                args.append(f"{k}=D[{step.dynamic[k]}]")
            else:
                args.append(f"{k}={v!r}" if _literal(v) else f"{k}={self.name(v, 'a')}")
        outs = ["_" if s is None else f"s{s}" for s in step.outs]
        target = ", ".join(outs) + ("," if step.multi and len(outs) == 1 else "")
        return f"    {target} = {self.name(step.fn, 'k')}({', '.join(args)})   # {step.name}"


def _last_uses(plan: Plan) -> dict:
    """step index -> the slots whose last reader it is (deleted after it, freeing memory early)."""
    last = {}
    for i, step in enumerate(plan.steps):
        for s in step.ins:
            last[s] = i
    out = {}
    for s, i in last.items():
        out.setdefault(i, []).append(s)
    return out


def steps_source(plan: Plan, needed: list) -> Source:
    """The generated function ``steps(T, X, D)`` returning the ``needed`` slots: ``T`` the places'
    tensors, ``X`` the extra input tensors, ``D`` the per-step numbers."""
    src = Source(plan)
    lines = ["def steps(T, X, D):"]
    for slot, i in plan.inputs.items():
        lines.append(f"    s{slot} = T[{i}]._data")
    for k, slot in enumerate(plan.extra):
        lines.append(f"    s{slot} = X[{k}]._data")
    keep = set(needed) | set(plan.inputs) | set(plan.extra)
    last = _last_uses(plan)
    for i, step in enumerate(plan.steps):
        lines.append(src.call(step))
        dead = [f"s{s}" for s in last.get(i, ()) if s not in keep and s not in plan.consts]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    values = [src.value(s) for s in needed]
    lines.append(f"    return ({', '.join(values)}{',' if len(values) == 1 else ''})")
    src.lines = lines
    return src


class Replay:
    """A replayable plan: ``__call__(found)`` runs the per-step functions, the steps, the
    write-backs, and returns the function's result (None when a weakly held input died: trace again)."""

    def __init__(self, plan: Plan, fuse: bool = True):
        self.plan = plan
        self.fused = fuse_plan(plan) if fuse else []
        self.needed = sorted({s for _, _, s, _ in plan.writes if s is not None} | _output_slots(plan.outputs))
        self.index = {s: k for k, s in enumerate(self.needed)}
        src = steps_source(plan, self.needed)
        self.source = "\n".join(src.lines)
        exec(compile(self.source, "<webgrad.compile plan>", "exec"), src.namespace)
        self.steps = src.namespace["steps"]
        self.extra = [(r, r()._data.shape, r()._dtype) for r in plan.extra.values()]
        scope = getattr(plan.backend, "gradient_scope", None)
        self.scope = scope

    def numbers(self) -> list:
        out = []
        for fn, args, count in self.plan.prologue:
            v = fn(*args)
            if count == 1 and type(v) is not tuple:
                out.append(v)
            else:
                out.extend(v)
        return out

    def extras(self):
        out = []
        for r, shape, dtype in self.extra:
            t = r()
            if t is None or t._data.shape != shape or t._dtype is not dtype:
                return None
            out.append(t)
        return out

    def __call__(self, found):
        extra = self.extras()
        if extra is None:
            return _MISS
        numbers = self.numbers()
        if self.scope is not None:
            with self.scope():
                values = self.steps(found.tensors, extra, numbers)
        else:
            values = self.steps(found.tensors, extra, numbers)
        self.write(found, values)
        return self.output(self.plan.outputs, found, values)

    def write(self, found, values) -> None:
        index, changed = self.index, False
        for kind, target, slot, detail in self.plan.writes:
            if kind == "data":
                t = found.tensors[target] if type(target) is int else target
                _set_data(t, values[index[slot]], detail)
                changed = True
            elif kind == "fixed":
                t = target()
                if t is not None:
                    _set_data(t, values[index[slot]], detail)
                    changed = True
            elif kind == "new":
                t = _wrap(values[index[slot]], self.plan.backend)
                t.requires_grad = detail
                found.places[target].set(t)
            else:
                found.places[target].set(None)
        if changed:
            engine._last_change[0] = engine._next_order()

    def output(self, node, found, values):
        kind = node[0]
        if kind == "tensor":
            return _wrap(values[self.index[node[1]]], node[2])
        if kind == "place":
            return found.places[node[1]].current(found.tensors[node[1]])
        if kind in ("list", "tuple"):
            out = [self.output(n, found, values) for n in node[1]]
            return out if kind == "list" else tuple(out)
        if kind == "dict":
            return {k: self.output(n, found, values) for k, n in node[1]}
        return node[1]


_MISS = object()


def _set_data(t, data, version_delta: int) -> None:
    t._data = data
    if version_delta:
        t._version += version_delta
    if t._views:
        for v in live_views(t):
            refresh(v, False)


def _output_slots(node) -> set:
    kind = node[0]
    if kind == "tensor":
        return {node[1]}
    if kind in ("list", "tuple"):
        return set().union(*[_output_slots(n) for n in node[1]]) if node[1] else set()
    if kind == "dict":
        return set().union(*[_output_slots(n) for _, n in node[1]]) if node[1] else set()
    return set()


__all__ = ["Replay", "steps_source", "Source"]
