"""A plan: what a traced step computes, as kernel calls over numbered slots.

``build_plan`` turns a trace (``tracer.Tracer``) into a ``Plan``:

* **slots** name values. An input slot is the data of a place (an argument, a parameter, a
  ``.grad``, a buffer, an optimizer state tensor: ``places.find_places``) or of another tensor that
  was alive when the trace began and that the step read (held by a weak reference); a constant slot
  is data the step made without a kernel (a tensor made from Python data) or a kernel result that
  depends on constants alone (folded: computed once, at trace time); every other slot is the output
  of one step of the plan.
* **steps** are the kernel calls that remain after folding and after dropping those whose results
  nothing needs; an attribute that is a per-step number (``webgrad.per_step``, a generator's draws)
  is dynamic: each replay puts the new number there.
* **write-backs** say how the places and tensors the step changed take their new values: a tensor
  that kept its identity gets new data (and its version counter moves as eagerly); a place that got
  a new tensor (``.grad``, ``state["exp_avg"]``) gets one again, made around the slot; a place
  emptied (``zero_grad()``) is emptied.
* **outputs**: the function's result, with its tensors as slots.
* **autograd across the boundary** (``boundary``): where the function returns tensors still to be
  differentiated, the trace also holds their backward; ``seeds`` are the slots of the output
  gradients it started from, ``grads`` the slots of the gradients it reached, per place in ``wrt``
  (``grad_outputs``: which of the result's tensors they are the gradients of).
* **checks**: a graph break (``tracer.Check``) stays in the steps as a ``Break`` step: the steps
  between two breaks are the plan's *pieces*; a replay reads the value back at the break and goes
  on only if it is the traced one (``replay``), else it misses and the call traces a new path.

A plan that cannot be replayed says why in ``reasons`` (a step that made new places, Python state
the step changed that no per-step function recomputes...).
"""
from __future__ import annotations

from weakref import ref

from ..random import Generator
from ..tensor import Tensor
from .places import Found
from .tracer import Check, Tracer

_PLAIN = (int, float, str, bool, type(None))


class Step:
    """One kernel call of a plan: ``outs = fn(*ins, **attrs)``, its ``dynamic`` attributes
    ({attr: index among the per-step numbers}) filled in at each replay; ``captured``: ``fn`` replays
    the dispatches the call made when traced, and takes no attrs (they are in its prepared uniforms);
    ``check``: for a graph break (name ``Break``, no outputs), its ``tracer.Check``: ``fn(*ins)`` must
    give ``check.token`` again for the replay to go on; ``into``: None, or where a replay has it
    write its result (a ``buffers.Into``)."""

    __slots__ = ("name", "fn", "ins", "attrs", "dynamic", "outs", "multi", "captured", "check", "into")

    def __init__(self, name, fn, ins, attrs, dynamic, outs, multi, check=None):
        self.name, self.fn, self.ins, self.attrs, self.dynamic = name, fn, ins, attrs, dynamic
        self.outs, self.multi, self.captured, self.check, self.into = outs, multi, False, check, None


class Plan:
    """See the module's doc. ``inputs``: slot -> place index; ``extra``: slot -> weak reference to a
    tensor; ``consts``: slot -> data; ``prologue``: (fn, args, count) per ``per_step`` call;
    ``writes``: (kind, target, slot, detail); ``outputs``: the result's structure."""

    def __init__(self):
        self.inputs, self.extra, self.consts = {}, {}, {}
        self.steps, self.prologue, self.writes = [], [], []
        self.outputs = None
        self.breaks, self.reasons = [], []
        self.backend = None
        self.seeds, self.grads, self.wrt, self.grad_outputs = [], [], [], []   # see boundary
        self.saved_places = []         # the places the backward reads (the CompiledBackward node saves them)
        self.meta = {}                 # slot -> (shape, dtype) of what the steps make
        self.place_kinds = []          # (kind, key) of each place (the write-backs set grads and dict entries)
        self.n_slots = 0
        self.traced_calls = self.folded = self.dropped = self.uploads = 0

    @property
    def replayable(self) -> bool:
        return not self.reasons


class _Slots:
    """Slot numbers by the identity of the objects the trace saw (held by the tracer, so ids stay unique)."""

    def __init__(self, plan: Plan, start_data: dict):
        self.plan, self.start_data, self.of, self.objects = plan, start_data, {}, {}

    def new(self, obj) -> int:
        s = self.of[id(obj)] = self.plan.n_slots
        self.objects[s] = obj
        self.plan.n_slots += 1
        return s

    def read(self, obj) -> int:
        """The slot of an input object: known, or data of a tensor alive at the start, or a constant."""
        s = self.of.get(id(obj))
        if s is not None:
            return s
        s = self.new(obj)
        holder = self.start_data.get(id(obj))
        if holder is not None:
            self.plan.extra[s] = ref(holder)
        else:
            self.plan.consts[s] = obj
        return s


def build_plan(tracer: Tracer, start: Found, end: Found, start_live: dict, result, backward=None) -> Plan:
    """The plan of a finished trace: ``start``/``end`` are the places before and after the call,
    ``start_live`` every live tensor before it (``tracer.live_tensors``), ``result`` what it returned,
    ``backward`` the traced backward of its outputs (``boundary.trace_backward``) or None."""
    plan = Plan()
    plan.breaks, plan.prologue = list(tracer.breaks), list(tracer.prologue)
    plan.traced_calls, plan.uploads = len(tracer.calls), tracer.uploads
    plan.place_kinds = [(p.kind, p.key) for p in start.places]
    plan.reasons += tracer.unreplayable
    placed = {id(t) for t in start.tensors if t is not None}
    start_data = {id(d): t for t, d, _ in start_live.values() if id(t) not in placed}
    slots = _Slots(plan, start_data)
    for i, t in enumerate(start.tensors):
        data = None if t is None else start_live[id(t)][1]   # its data when the step began
        if data is not None and id(data) not in slots.of:
            plan.inputs[slots.new(data)] = i
    backends = {t._backend for t in start.tensors + end.tensors if t is not None}
    plan.backend = next(iter(backends)) if len(backends) == 1 else None
    joint = backward is not None and backward.reason is None
    if joint:
        plan.seeds = [slots.new(t._data) for t in backward.seeds]
    bound = set()
    for call in tracer.calls:
        ins = tuple([slots.read(a) for a in call.inputs])
        if type(call) is Check:
            plan.steps.append(Step(call.name, call.fn, ins, {}, {}, (), False, call))
            continue
        if all(o is None or id(o) in slots.of for o in call.outputs):   # it handed back what it got (AddGrad)
            continue
        outs = tuple([None if o is None else (slots.of[id(o)] if id(o) in slots.of else slots.new(o))
                      for o in call.outputs])
        dynamic = _dynamic_attrs(call.attrs, tracer.dynamic)
        bound.update(dynamic.values())
        step = Step(call.name, call.fn, ins, call.attrs, dynamic, outs, call.multi)
        if call.replay is not None and not dynamic:   # its dispatches, prepared once: no kernel Python
            step.fn, step.captured = call.replay, True
        plan.steps.append(step)
        _note_meta(plan, slots, ins + outs)
    _check_numbers(plan, tracer, bound)
    _write_backs(plan, slots, start, end, start_live)
    before = _place_ids(start)
    at_start = {id(t): before[(p.kind, id(p.owner), p.key)] for p, t in zip(end.places, end.tensors)
                if t is not None and (p.kind, id(p.owner), p.key) in before}
    plan.outputs = _structure(result, slots, at_start)
    if joint:
        plan.grads = [None if g is None else slots.read(g._data) for g in backward.grads]
        plan.wrt, plan.grad_outputs = list(backward.wrt), list(backward.outs)
    elif backward is not None:
        plan.reasons.append(f"the function returns tensors whose graph is still to be differentiated, and "
                            f"{backward.reason}")
    _fold(plan, slots.objects)
    _drop_unused(plan)
    if len(backends) > 1:
        plan.reasons.append(f"the step uses several backends ({', '.join(sorted(b.name for b in backends))})")
    return plan


def _note_meta(plan: Plan, slots: _Slots, used) -> None:
    """Remember the shape and dtype of the slots ``used`` (fusion reads them)."""
    dtype_of = getattr(plan.backend, "dtype_of", None)
    for s in used:
        if s is not None and s not in plan.meta and dtype_of is not None:
            o = slots.objects[s]
            try:
                plan.meta[s] = (tuple(o.shape), dtype_of(o))
            except (AttributeError, KeyError, TypeError):
                pass


def _dynamic_attrs(attrs: dict, dynamic: dict) -> dict:
    return {k: dynamic[id(v)] for k, v in attrs.items() if id(v) in dynamic}


def _check_numbers(plan: Plan, tracer: Tracer, bound: set) -> None:
    """A generator's draw used by host code (a sampler) rather than a kernel, or a per-step number that
    cannot be told apart from a constant (a small int) cannot be replayed."""
    index = 0
    draw_fn = Generator._draw
    for fn, _, count in tracer.prologue:
        if getattr(fn, "__name__", "") == draw_fn.__name__ and not set(range(index, index + count)) & bound:
            plan.reasons.append("random numbers drawn for Python code (a sampler) inside the step")
        index += count
    if tracer.unsafe:
        plan.reasons.append(f"per-step numbers that are small ints ({tracer.unsafe[:3]}) cannot be told apart "
                            f"from constants")


def _place_ids(found: Found) -> dict:
    return {(p.kind, id(p.owner), p.key): i for i, p in enumerate(found.places)}


def _write_backs(plan: Plan, slots: _Slots, start: Found, end: Found, start_live: dict) -> None:
    before = _place_ids(start)
    seen = set()
    for j, (place, t) in enumerate(zip(end.places, end.tensors)):
        i = before.get((place.kind, id(place.owner), place.key))
        if i is None:
            if t is not None:
                plan.reasons.append("the step made new state (an optimizer's first step, a new buffer): it is "
                                    "traced again at the next call")
            continue
        old = start.tensors[i]
        if t is not None:
            seen.add(id(t))
        if t is None:
            if old is not None:
                plan.writes.append(("none", i, None, None))
        elif t is old:
            if t._data is not start_live[id(t)][1]:
                plan.writes.append(("data", i, slots.read(t._data), t._version - start_live[id(t)][2]))
        elif t.grad_fn is not None:
            plan.reasons.append(f"a {place.kind} place holds a tensor with a grad_fn after the step")
        else:
            plan.writes.append(("new", i, slots.read(t._data), t.requires_grad))
    placed = {id(t) for t in start.tensors if t is not None}
    for t, data, version in start_live.values():
        if id(t) not in seen and id(t) not in placed and t._data is not data:
            plan.writes.append(("fixed", ref(t), slots.read(t._data), t._version - version))


def _structure(result, slots: _Slots, placed: dict):
    """``result`` with each tensor replaced by ('place', index at the call's start) when a place holds
    it after the step, else ('tensor', slot, backend)."""
    if isinstance(result, Tensor):
        i = placed.get(id(result))
        return ("place", i) if i is not None else ("tensor", slots.read(result._data), result._backend)
    if type(result) in (list, tuple):
        return (type(result).__name__, [_structure(r, slots, placed) for r in result])
    if type(result) is dict:
        return ("dict", [(k, _structure(v, slots, placed)) for k, v in result.items()])
    return ("value", result)


def _fold(plan: Plan, objects: dict) -> None:
    """Steps whose inputs are all constants and whose attributes are not dynamic become constants
    (their traced results); a break reading a constant always sees the traced value: it goes."""
    kept = []
    for step in plan.steps:
        if not step.dynamic and all(s in plan.consts for s in step.ins):
            for s in step.outs:
                if s is not None and s not in plan.consts:
                    plan.consts[s] = objects[s]
            plan.folded += 1
        else:
            kept.append(step)
    plan.steps = kept


def pieces(plan: Plan) -> int:
    """How many compiled pieces the plan's graph breaks split it into."""
    return 1 + sum(step.check is not None for step in plan.steps)


def needed_slots(plan: Plan) -> set:
    """The slots the write-backs, the outputs and the traced gradients read."""
    need = {s for _, _, s, _ in plan.writes if s is not None} | {s for s in plan.grads if s is not None}

    def walk(node):
        kind = node[0]
        if kind == "tensor":
            need.add(node[1])
        elif kind in ("list", "tuple"):
            for n in node[1]:
                walk(n)
        elif kind == "dict":
            for _, n in node[1]:
                walk(n)
    walk(plan.outputs)
    return need


def _drop_unused(plan: Plan) -> None:
    """Drop the steps whose outputs nothing needs (kernels are pure: their only effect is their result),
    and the constants and extra inputs that only they read."""
    need = needed_slots(plan)
    kept = []
    for step in reversed(plan.steps):
        if step.check is not None or any(s in need for s in step.outs if s is not None):
            kept.append(step)
            need.update(step.ins)
        else:
            plan.dropped += 1
    plan.steps = kept[::-1]
    plan.consts = {s: o for s, o in plan.consts.items() if s in need}
    plan.extra = {s: r for s, r in plan.extra.items() if s in need}   # (a backward past the boundary read some)


__all__ = ["Plan", "Step", "build_plan", "needed_slots", "pieces"]
