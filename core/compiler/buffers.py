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


class _Memory:
    """Which slots may share memory with which roots (see the module's doc), built step by step."""

    def __init__(self):
        self.owner = {}     # slot -> its root, for a slot that is the root's array itself
        self.roots = {}     # slot -> the roots whose memory it may share
        self.members = {}   # root -> the slots that may share its memory

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
    """(fn, inplace positions) of ``step`` written into a given array, or None."""
    if step.check is not None or step.captured or len(step.outs) != 1 or not plan.meta.get(step.outs[0], ((),))[0]:
        return None   # (a 0-d result may be a numpy scalar, and there is nothing to save on it)
    return into_kernel(step.name, step.attrs, [plan.meta.get(s) for s in step.ins], plan.meta[step.outs[0]])


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


def place_buffers(plan, steps: list, needed) -> Kept | None:
    """Set ``into`` on the ``steps`` (a replay's, in order) that write into a dying input's array or
    into one the plan keeps; returns the ``Kept`` arrays (None when there are none). ``needed``: the
    slots that outlive the steps (write-backs, outputs, saved values)."""
    be = plan.backend
    into_kernel = getattr(be, "into_kernel", None)
    if into_kernel is None:
        return None
    last, memory, made = _last_reads(steps, needed), _Memory(), {}
    for i, step in enumerate(steps):
        form = _form(plan, step, into_kernel)
        target = None if form is None else _dying_input(plan, step, i, form[1], memory, last)
        if target is not None:
            step.into = (form[0], "slot", target)
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
    specs = []
    for root, (step, form) in made.items():
        if form is not None and all(last.get(v, -1) != _NEEDED for v in memory.members[root]):
            step.into = (form[0], "kept", len(specs))
            specs.append(plan.meta[root])
    return Kept(specs, be.empty_buffer) if specs else None


def describe_buffers(steps: list, kept: Kept | None) -> str | None:
    """explain()'s line on where the steps write (None when every kernel returns a new array)."""
    inplace = sum(1 for s in steps if s.into is not None and s.into[1] == "slot")
    if not inplace and kept is None:
        return None
    held = f"{len(kept.specs)} into arrays the plan keeps across replays ({kept.nbytes() / 1024:.0f} KiB)" if kept else ""
    return (f"  written in place: {inplace} kernel(s) into an input that dies there"
            + (f", {held}" if held else ""))


__all__ = ["place_buffers", "describe_buffers", "Kept"]
