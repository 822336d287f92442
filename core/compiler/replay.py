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
numpy calls and on the GPU backends record their prepared dispatches. A graph break between two
pieces reads the value back and returns early when Python saw another value when traced::

    B.append(k5(s8))   # graph break: a readback (to_list: ...) at step.py:12 in f: if loss > 1:
    if B[-1] != c6: return None

(the call then misses: ``Miss`` holds the tokens read so far; nothing was written back). A plan
holding its outputs' backward (``boundary``) generates a second function, ``backward(G, S)``, that
their ``CompiledBackward`` node runs. ``source`` holds the text (it is what ``explain()`` shows).
Backends that replay differently (``gpu_replay``) build on the same plan. Before the text is made,
a backend that can (``cpu``) joins kernels with their gradients (``joint``) and says where each
kernel writes (``buffers``: ``k(..., out=s3)`` into a dying input, ``out=P[0]`` into an array the plan
keeps, taken at the start as ``P = h0.take()`` and given back at the end).
"""
from __future__ import annotations

from .. import engine
from ..size import Size
from ..tensor import Tensor
from ..views import live_views, refresh
from .boundary import attach, saved_places, split
from .buffers import place_buffers
from .fusion import fuse_plan
from .joint import join_plan
from .plan import Plan

_LITERALS = (int, bool, str, type(None))
_wrap = Tensor._wrap


def _literal(v) -> bool:
    """Whether ``_literal_text(v)`` evaluates back to ``v`` exactly (ints, strings, finite floats, tuples and
    ``Size``s of them)."""
    if type(v) in _LITERALS:
        return True
    if type(v) is float:
        return v == v and v not in (float("inf"), float("-inf"))
    return (type(v) is tuple or type(v) is Size) and all(_literal(x) for x in v)


def _literal_text(v) -> str:
    """The text of a ``_literal`` value: its ``repr``, with a ``Size`` written as its tuple (equal to it),
    so that generated code names no webgrad class.

    >>> _literal_text((Size([2, 3]), "a"))
    "((2, 3), 'a')"
    """
    return repr(_plain(v))


def _plain(v):
    return tuple([_plain(x) for x in v]) if isinstance(v, tuple) else v


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
        if step.check is not None:
            c = step.check
            return (f"    B.append({self.name(step.fn, 'k')}({args[0]}))   # graph break: {c.what} at {c.where}\n"
                    f"    if B[-1] != {self.name(c.token, 'c')}: return None")
        fn, before = step.fn, ""
        if step.into is not None:   # written into a given array (buffers)
            into = step.into
            fn = into.fn
            if into.kind == "donate":   # (asked before the call, whose arguments would hold the array too)
                before = f"    d = {self.name(into.check, 'k')}(s{into.where})\n"
            args.append("out=" + {"kept": f"P[{into.where}]", "slot": f"s{into.where}", "donate": "d"}[into.kind])
            if into.scratch:
                args.append(f"scratch=({''.join(f'P[{k}], ' for k in into.scratch)})")
        for k, v in () if step.captured else step.attrs.items():
            if k in step.dynamic:
                args.append(f"{k}=D[{step.dynamic[k]}]")
            else:
                args.append(f"{k}={_literal_text(v)}" if _literal(v) else f"{k}={self.name(v, 'a')}")
        outs = ["_" if s is None else f"s{s}" for s in step.outs]
        target = ", ".join(outs) + ("," if step.multi and len(outs) == 1 else "")
        return f"{before}    {target} = {self.name(fn, 'k')}({', '.join(args)})   # {step.name}"


def _last_uses(steps: list) -> dict:
    """step index -> the slots whose last reader it is (deleted after it, freeing memory early)."""
    last = {}
    for i, step in enumerate(steps):
        for s in step.ins:
            last[s] = i
    out = {}
    for s, i in last.items():
        out.setdefault(i, []).append(s)
    return out


def _source(plan: Plan, head: str, loads: list, steps: list, needed: list, kept=None) -> Source:
    """A generated function: ``head``, then ``s<slot> = <expression>`` per load, the steps (each slot
    deleted after its last reader), and the ``needed`` slots returned (None for a None). With
    ``kept`` (``buffers.Kept``), the steps writing into kept arrays find them in ``P``, taken at the
    start and given back at the end."""
    src = Source(plan)
    lines = [head] + [f"    s{slot} = {expression}" for slot, expression in loads]
    if kept is not None:
        lines.append(f"    P = {src.name(kept, 'h')}.take()")
    keep = set(needed) | {slot for slot, _ in loads}
    last = _last_uses(steps)
    for i, step in enumerate(steps):
        lines.append(src.call(step))
        dead = [f"s{s}" for s in last.get(i, ()) if s not in keep and s not in plan.consts]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    values = ["None" if s is None else src.value(s) for s in needed]
    if kept is not None:
        lines.append(f"    {src.name(kept, 'h')}.give(P)")
    lines.append(f"    return ({', '.join(values)}{',' if len(values) == 1 else ''})")
    src.lines = lines
    return src


def steps_source(plan: Plan, needed: list, steps=None, kept=None) -> Source:
    """The generated function ``steps(T, X, D, B)`` running ``steps`` (the plan's by default) and
    returning the ``needed`` slots: ``T`` the places' tensors, ``X`` the extra input tensors, ``D``
    the per-step numbers, ``B`` a list taking the tokens its graph breaks read (None returned at the
    first token that is not the traced one)."""
    loads = [(slot, f"T[{i}]._data") for slot, i in plan.inputs.items()]
    loads += [(slot, f"X[{k}]._data") for k, slot in enumerate(plan.extra)]
    return _source(plan, "def steps(T, X, D, B):", loads, plan.steps if steps is None else steps, needed, kept)


def backward_source(plan: Plan, steps: list, saved: list) -> Source:
    """The generated function ``backward(G, S)`` running a plan's backward ``steps`` (``boundary``) on
    ``G``, the gradients of its differentiable outputs, and ``S``, the ``saved`` values of the forward;
    it returns the gradients of the boundary's tensors (None where none reaches one)."""
    loads = [(slot, f"G[{k}]") for k, slot in enumerate(plan.seeds)]
    loads += [(slot, f"S[{k}]") for k, slot in enumerate(saved)]
    return _source(plan, "def backward(G, S):", loads, steps, plan.grads)


class Replay:
    """A replayable plan: ``__call__(found)`` runs the per-step functions, the steps, the
    write-backs, and returns the function's result (None when a weakly held input died: trace again)."""

    def __init__(self, plan: Plan, fuse: bool = True):
        self.plan = plan
        self.fused = fuse_plan(plan) if fuse else []
        self.joined = join_plan(plan)
        needed = {s for _, _, s, _ in plan.writes if s is not None} | _output_slots(plan.outputs)
        forward, self.backward, self.saved = split(plan, plan.steps) if plan.seeds else (plan.steps, None, [])
        plan.saved_places = saved_places(plan, self.saved)
        self.needed = sorted(needed | set(self.saved))
        self.index = {s: k for k, s in enumerate(self.needed)}
        resident = getattr(plan.backend, "resident_plan", None)   # the GPU backends: the device holds the plan
        self.kept = place_buffers(plan, forward, self.needed) if resident is None else None
        self.steps, self.source = _built(steps_source(plan, self.needed, forward, self.kept), "steps")
        replaced = {} if resident is None else replaced_data(plan, self.saved)
        self.run_steps = self.steps if resident is None else resident(plan, self.needed, self.steps, forward, replaced,
                                                                      replaced_grads(plan, self.saved),
                                                                      replaced_roots(plan, self.saved))
        self.backward_steps = None
        if self.backward is not None:
            self.backward_steps, source = _built(backward_source(plan, self.backward, self.saved), "backward")
            self.source += "\n\n" + source
        self.finish, source = _built(writes_source(plan, self.index, replaced), "write_back")
        self.source += "\n\n" + source
        self.extra = [(r, r()._data.shape, r()._dtype) for r in plan.extra.values()]
        self.tokens = tuple([step.check.token for step in plan.steps if step.check is not None])
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
        extra = self.extras() if self.extra else ()
        if extra is None:
            return _MISS
        numbers, read = self.numbers(), []
        if self.scope is not None:
            with self.scope():
                values = self.run_steps(found.tensors, extra, numbers, read)
        else:
            values = self.run_steps(found.tensors, extra, numbers, read)
        if values is None:
            return Miss(read)
        out = self.finish(found.tensors, found.places, values)   # the write-backs, then the result
        if self.backward_steps is not None:
            attach(out, found, self.plan, self.backward_steps, [values[self.index[s]] for s in self.saved], self.scope)
        return out


_MISS = object()


def _built(src: Source, name: str) -> tuple:
    """(the generated function ``name`` of ``src``, its text)."""
    text = "\n".join(src.lines)
    exec(compile(text, "<webgrad.compile plan>", "exec"), src.namespace)
    return src.namespace[name], text


class Miss:
    """A replay that stopped at a graph break where another value was read than the traced one:
    ``read`` holds the tokens of the breaks up to that one (the path to look for next)."""

    __slots__ = ("read",)

    def __init__(self, read):
        self.read = tuple(read)


def _refresh_views(t, written=()) -> None:
    """Let ``t``'s live views read their elements again, but those the write-backs write themselves (``written``:
    their values are the traced ones, which eager's refresh had given them)."""
    for v in live_views(t):
        if not any(v is w for w in written):
            refresh(v, False)


def writes_source(plan: Plan, index: dict, replaced=()) -> Source:
    """The generated function ``write_back(T, P, V)`` doing ``plan``'s write-backs, then returning the function's
    result (``output_text``), with ``T`` the places' tensors, ``P`` the places, ``V`` the returned values (slot ``s``
    at ``index[s]``): a tensor that kept
    its identity gets its new data (its version moves as eagerly, its views follow), a place that gets a
    new tensor gets one made around the value, an emptied place is emptied, e.g.::

        def write_back(T, P, V):
            t = T[2]; t._data = V[4]; t._version += 1
            if t._views: refresh_views(t)
            P[3].owner.grad = wrap(V[1], b0)
            engine._last_change[0] = engine._next_order()
            return wrap(V[0], b0)

    A ``replaced`` state or buffer entry whose value came back as the data of the tensor it held (the
    device wrote it into that tensor's buffer: ``replaced_data``) keeps that tensor, updated in place as
    PyTorch's optimizers and running statistics are (its version moves)."""
    src, lines, changed = Source(plan), ["def write_back(T, P, V):"], False
    src.namespace.update(wrap=_wrap, refresh_views=_refresh_views, engine=engine)
    backend = src.name(plan.backend, "b")
    written = [f"{src.name(target, 'r')}()" if kind == "fixed" else f"T[{target}]"
               for kind, target, _, _ in plan.writes if kind in ("data", "fixed")]
    refresh = f"refresh_views(t, ({''.join(w + ', ' for w in written)}))"
    for kind, target, slot, detail in plan.writes:
        if kind in ("data", "fixed"):
            held = kind == "fixed"            # a tensor held elsewhere, by a weak reference
            lines.append(f"    t = {src.name(target, 'r')}()" if held else f"    t = T[{target}]")
            indent = "    "
            if held:
                lines.append("    if t is not None:")
                indent = "        "
            lines.append(f"{indent}t._data = V[{index[slot]}]" + (f"; t._version += {detail}" if detail else ""))
            lines.append(f"{indent}if t._views: {refresh}")
            changed = True
            continue
        indent = "    "
        if kind == "new" and slot in replaced:
            lines += [f"    t = T[{target}]", f"    if t is not None and t._data is V[{index[slot]}]:",
                      "        t._version += 1", "        if t._views: refresh_views(t)", "    else:"]
            indent, changed = "        ", True
        if kind == "new":
            lines.append(f"{indent}n = wrap(V[{index[slot]}], {backend})" + ("; n.requires_grad = True" if detail else ""))
        value = "n" if kind == "new" else "None"
        place, key = plan.place_kinds[target]
        if place == "grad":
            lines.append(f"{indent}P[{target}].owner.grad = {value}")
        else:   # a buffer's or a state's dict entry
            name = _literal_text(key) if _literal(key) else src.name(key, "k")
            lines.append(f"{indent}P[{target}].owner[{name}] = {value}")
    if changed:
        lines.append("    engine._last_change[0] = engine._next_order()")
    lines.append(f"    return {output_text(src, plan.outputs, index)}")
    src.lines = lines
    return src


def output_text(src: Source, node, index: dict) -> str:
    """The expression of the function's result ``node`` (``plan.outputs``) in a generated function where ``V``
    holds the returned values (slot ``s`` at ``index[s]``), ``T`` the places' tensors and ``P`` the places: a new
    tensor around a value, what a place holds now, lists, tuples and dicts of those, anything else as it was.

    >>> output_text(Source(None), ("tuple", [("place", 2), ("list", [])]), {})
    '(P[2].current(T[2]), [], )'
    """
    kind = node[0]
    if kind == "tensor":
        return f"wrap(V[{index[node[1]]}], {src.name(node[2], 'b')})"
    if kind == "place":
        return f"P[{node[1]}].current(T[{node[1]}])"
    if kind in ("list", "tuple"):
        items = "".join(output_text(src, n, index) + ", " for n in node[1])
        return f"[{items}]" if kind == "list" else f"({items})"
    if kind == "dict":
        return "{" + "".join(f"{src.name(k, 'k')}: {output_text(src, n, index)}, " for k, n in node[1]) + "}"
    return src.name(node[1], "o")


def replaced_data(plan: Plan, saved) -> dict:
    """{slot: input slot}: the slots whose one use past the steps is to replace the data of a tensor the
    step read (a parameter's update: a ``"data"`` write-back; an optimizer's state or a module's buffer:
    a ``"new"`` tensor in its dict entry), neither returned nor saved for a backward, with the slot that
    read that tensor's data: a device holding the plan may write them into that tensor's own buffer, as
    PyTorch's in-place updates do.

    >>> replaced_data(step.last.plan, step.last.saved)   # doctest: +SKIP
    {45: 6, 48: 2, 51: 8, 54: 4}
    """
    uses = _uses(plan, saved)
    read = {i: slot for slot, i in plan.inputs.items()}
    kept = set(plan.saved_places)
    return {slot: read[place] for kind, place, slot, grad in plan.writes
            if place in read and place not in kept and uses.count(slot) == 1
            and (kind == "data" or kind == "new" and not grad and plan.place_kinds[place][0] != "grad")}


def replaced_grads(plan: Plan, saved) -> dict:
    """{slot: place}: the slots whose one use past the steps is to become the new ``.grad`` of a place that held
    one when the call began (``zero_grad`` emptied it, ``backward`` made another), neither returned nor saved for
    a backward: a device holding the plan may write them into the buffer of the ``.grad`` they replace, where
    nothing else holds it (that tensor dies with the call, as it does eagerly).

    >>> replaced_grads(step.last.plan, step.last.saved)   # doctest: +SKIP
    {41: 3, 35: 5, 42: 7, 36: 9}
    """
    uses = _uses(plan, saved)
    return {slot: place for kind, place, slot, _ in plan.writes
            if kind == "new" and plan.place_kinds[place][0] == "grad" and uses.count(slot) == 1}


def replaced_roots(plan: Plan, saved) -> dict:
    """{slot: weak reference}: the slots whose one use past the steps is to become the data of a tensor held
    elsewhere (the root of a view the step updated), neither returned nor saved for a backward: a device holding
    the plan may give such a root its view's own buffer at the root's shape, where the view is updated in place."""
    uses = _uses(plan, saved)
    return {slot: ref for kind, ref, slot, _ in plan.writes if kind == "fixed" and uses.count(slot) == 1}


def _uses(plan: Plan, saved) -> list:
    """Each use of a slot past the steps: a write-back, the result, a value saved for the backward."""
    return [s for _, _, s, _ in plan.writes] + sorted(_output_slots(plan.outputs)) + list(saved)


def _output_slots(node) -> set:
    kind = node[0]
    if kind == "tensor":
        return {node[1]}
    if kind in ("list", "tuple"):
        return set().union(*[_output_slots(n) for n in node[1]]) if node[1] else set()
    if kind == "dict":
        return set().union(*[_output_slots(n) for _, n in node[1]]) if node[1] else set()
    return set()


__all__ = ["Replay", "Miss", "steps_source", "Source", "replaced_data", "replaced_grads", "replaced_roots"]
