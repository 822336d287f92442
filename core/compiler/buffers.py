"""Where a plan's kernels write: into arrays that die, or that the plan keeps (backends with ``into_kernel``).

Eagerly every kernel returns a new array. A replay knows the whole step, so on a backend that
offers ``into_kernel`` (``cpu``: ``backends/cpu/into.py``) a step may write its result into:

* **an input that dies there** (``Add`` of a bias into the ``MatMul`` result it reads, ``Relu`` into
  that, ReLU's gradient into the incoming gradient): the input's array is the plan's own (a kernel
  that ``fresh_outputs`` made, or a result already written in place), no later step, write-back,
  output or saved value reads it or anything that may share its memory, and no other input of
  the step shares it;
* **an array the plan keeps from one replay to the next**: a fresh result whose memory (with what
  was written into it in place, and anything that may share it) is read only by the steps, never
  handed out (not written back, not an output, not saved for a backward).

What may share memory is tracked per slot: a fresh kernel's result is an array of its own (a
*root*); any other kernel's results may share the memory of its inputs (a view, the input itself).
The values are those of the eager kernels (``into_kernel``'s forms compute the same numbers).
The kept arrays belong to the replay running: a second replay of the same plan starting while one
runs (another thread) gets arrays of its own (``Kept``).

>>> place_buffers  # doctest: +ELLIPSIS
<function place_buffers at ...>
"""
from __future__ import annotations

from typing import NamedTuple

_NEEDED = float("inf")   # the last use of a slot that outlives the steps


class Kept:
    """The arrays a plan keeps across replays, lent to one replay at a time: ``take()`` hands them
    over (new ones while another replay holds them, or at the first), ``give()`` takes them back.

    >>> k = Kept([((2,), "f4")], lambda shape, dtype: [0] * shape[0])
    >>> a = k.take(); k.give(a); k.take() is a
    True
    """

    __slots__ = ("specs", "empty", "arrays")

    def __init__(self, specs: list, empty):
        self.specs, self.empty, self.arrays = specs, empty, None

    def take(self) -> list:
        arrays, self.arrays = self.arrays, None
        return arrays if arrays is not None else [self.empty(shape, dtype) for shape, dtype in self.specs]

    def give(self, arrays) -> None:
        self.arrays = arrays

    def nbytes(self) -> int:
        return sum(_size(shape) * dtype.itemsize for shape, dtype in self.specs)


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _last_reads(steps: list, needed) -> dict:
    """slot -> index of the last step reading it (``_NEEDED`` when it outlives the steps)."""
    last = {}
    for i, step in enumerate(steps):
        for s in step.ins:
            last[s] = i
    for s in needed:
        last[s] = _NEEDED
    return last


class Into(NamedTuple):
    """Where a step writes (``Step.into``): ``fn(*inputs, out=..., **attrs)`` with ``out`` input slot
    ``where``'s array (``kind`` "slot"), the plan's kept array ``where`` ("kept"), or input slot
    ``where``'s array where ``check`` (the backend's ``donated``) finds nothing else holding it, else a
    new one ("donate"); ``scratch``: indices of kept arrays passed as ``scratch=``."""
    fn: object
    kind: str
    where: int
    scratch: tuple = ()
    check: object = None


class _Memory:
    """Which slots may share memory with which roots (see the module's doc), built step by step."""

    def __init__(self, inputs):
        self.owner = {}     # slot -> its root, for a slot that is the root's array itself
        self.roots = {}     # slot -> the roots whose memory it may share
        self.members = {}   # root -> the slots that may share its memory
        for s in inputs:    # a place's data: a root the plan does not own (it may only be donated)
            self.fresh(s)

    def fresh(self, slot) -> None:
        self.owner[slot], self.roots[slot], self.members[slot] = slot, (slot,), [slot]

    def written(self, slot, root) -> None:
        self.owner[slot], self.roots[slot] = root, (root,)
        self.members[root].append(slot)

    def derived(self, slot, ins) -> None:
        roots = tuple({r for s in ins for r in self.roots.get(s, ())})
        self.roots[slot] = roots
        for r in roots:
            self.members[r].append(slot)


def _form(plan, step, into_kernel):
    """The backend's ``Form`` of ``step`` written into a given array, or None."""
    if step.check is not None or step.captured or len(step.outs) != 1 or not plan.meta.get(step.outs[0], ((),))[0]:
        return None   # (a 0-d result may be a numpy scalar, and there is nothing to save on it)
    metas = [plan.meta.get(s) for s in step.ins]
    return into_kernel(step.name, step.attrs, metas, plan.meta[step.outs[0]], fn=step.fn)


def _dying_input(plan, step, i, inplace, memory, last):
    """The input of step ``i`` it may write into (see the module's doc), or None."""
    for k in inplace:
        s = step.ins[k]
        root = memory.owner.get(s)
        if root is None or plan.meta.get(s) != plan.meta[step.outs[0]]:
            continue
        if any(last.get(v, -1) > i for v in memory.members[root]):
            continue
        if any(root in memory.roots.get(t, ()) for j, t in enumerate(step.ins) if j != k):
            continue
        return s
    return None


def _donatable(plan, steps: list) -> set:
    """The input slots a step may write into when nothing else holds them at that time (``donated``):
    a place's data that the plan replaces (a "data" write-back: a parameter an optimizer updates), in a
    plan without graph breaks (a replay that stops at one writes nothing back) -- and only at a step
    after which no kernel can raise (``be.never_raises``), so that an error leaves no place half-updated."""
    if any(step.check is not None for step in steps):
        return set()
    replaced = {target for kind, target, _, _ in plan.writes if kind == "data" and type(target) is int}
    return {s for s, place in plan.inputs.items() if place in replaced}


def _safe_tail(steps: list, be) -> int:
    """The first index from which every step is one that ``be.never_raises``."""
    i = len(steps)
    while i and be.never_raises(steps[i - 1].name):
        i -= 1
    return i


def place_buffers(plan, steps: list, needed) -> Kept | None:
    """Set ``into`` on the ``steps`` (a replay's, in order) that write into a dying input's array, a
    donated place's data or an array the plan keeps; returns the ``Kept`` arrays (None when there are
    none). ``needed``: the slots that outlive the steps (write-backs, outputs, saved values)."""
    be = plan.backend
    into_kernel = getattr(be, "into_kernel", None)
    if into_kernel is None:
        return None
    last, memory, made, specs = _last_reads(steps, needed), _Memory(plan.inputs), {}, []
    donatable, safe_from = _donatable(plan, steps), _safe_tail(steps, be)
    for i, step in enumerate(steps):
        form = _form(plan, step, into_kernel)
        target = None if form is None else _dying_input(plan, step, i, form.inplace, memory, last)
        if target is not None and memory.owner[target] in plan.inputs:
            target = target if target in donatable and i >= safe_from else None
        if target is not None:
            scratch = tuple(range(len(specs), len(specs) + len(form.scratch)))
            specs += form.scratch
            kind = "donate" if target in plan.inputs else "slot"
            step.into = Into(form.fn, kind, target, scratch, be.donated if kind == "donate" else None)
            memory.written(step.outs[0], memory.owner[target])
        elif be.fresh_outputs(step.name):
            for o in step.outs:
                if o is not None:
                    memory.fresh(o)
                    made[o] = (step, form)
        else:
            for o in step.outs:
                if o is not None:
                    memory.derived(o, step.ins)
    for root, (step, form) in made.items():
        if form is not None and all(last.get(v, -1) != _NEEDED for v in memory.members[root]):
            scratch = tuple(range(len(specs) + 1, len(specs) + 1 + len(form.scratch)))
            step.into = Into(form.fn, "kept", len(specs), scratch)
            specs += (plan.meta[root],) + form.scratch
    return Kept(specs, be.empty_buffer) if specs else None


def describe_buffers(steps: list, kept: Kept | None) -> str | None:
    """explain()'s line on where the steps write (None when every kernel returns a new array)."""
    kinds = [s.into.kind for s in steps if s.into is not None]
    if not kinds:
        return None
    held = f"; it keeps {len(kept.specs)} array(s) across replays ({kept.nbytes() / 1024:.0f} KiB)" if kept else ""
    return (f"  written in place: {kinds.count('slot')} kernel(s) into an input that dies there, "
            f"{kinds.count('donate')} into a place's data nothing else holds, {kinds.count('kept')} into "
            f"arrays the plan keeps{held}")


__all__ = ["place_buffers", "describe_buffers", "Kept", "Into"]
