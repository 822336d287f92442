"""Fusion: chains of elementwise steps of a plan become one kernel where the backend can fuse them.

A backend that fuses offers ``fusible(name, attrs, dtypes)``, ``fused_kernel(ops, out_shape)`` and
``fusion_max_inputs`` (the GPU backends: one generated WGSL kernel per chain, ``backends/gpu/fused.py``).
Steps are grouped in plan order: an elementwise step joins the groups that made its inputs when
each such input has this step as its only reader (so no other step, write-back or output needs
it) and has the step's output shape (broadcasting happens only on the chain's own inputs). A group
of two or more steps becomes one step, placed where its last member was.

A chain may also start at a *head*: a kernel that can pass its results through the chain before
storing them (the GPU backends' MatMul: a layer's bias add and activation become its epilogue, one
dispatch instead of two or three). A backend offering that has ``fusible_head(name, attrs, metas)``
and ``epilogue_fits(shape, out_shape)`` (whether a chain input of ``shape`` can be read in the
head's epilogue), and its ``fused_kernel`` takes ``head=(name, attrs)``: the chain's input 0 is then
the head's result, and the kernel takes the head's inputs first.

>>> fuse_plan  # doctest: +ELLIPSIS
<function fuse_plan at ...>
"""
from __future__ import annotations

from .. import kernel_names as K
from ..registry import get_kernel
from .plan import Plan, Step, needed_slots


def _readers(plan: Plan) -> dict:
    """slot -> how many steps read it (a step reading it twice counts once), plus one if it is needed
    after the steps (a write-back or an output)."""
    count = {}
    for step in plan.steps:
        for s in set(step.ins):
            count[s] = count.get(s, 0) + 1
    for s in needed_slots(plan):
        count[s] = count.get(s, 0) + 1
    return count


def _fusible(plan: Plan, step: Step, be) -> bool:
    if step.multi or step.dynamic or len(step.outs) != 1 or step.outs[0] not in plan.meta:
        return False
    metas = [plan.meta.get(s) for s in step.ins]
    return None not in metas and be.fusible(step.name, step.attrs, [m[1] for m in metas])


def _head(plan: Plan, step: Step, be) -> bool:
    """Whether ``step`` can start a chain as its head (see the module's doc)."""
    if not hasattr(be, "fusible_head") or step.multi or step.dynamic or len(step.outs) != 1:
        return False
    metas = [plan.meta.get(s) for s in step.ins]
    return step.outs[0] in plan.meta and None not in metas and be.fusible_head(step.name, step.attrs, metas)


def _with_head(plan: Plan, be, groups: dict, heads: set, joined: set, step: Step) -> set:
    """``joined`` less the groups with a head that ``step`` cannot join: two heads, or a chain input
    the head's epilogue cannot read."""
    with_head = [g for g in joined if heads & set(groups[g])]
    if not with_head:
        return joined
    members = [k for g in joined for k in groups[g]]
    head = next(k for k in members if k in heads)
    chain = [step] + [plan.steps[k] for k in members if k != head]
    outer = {s for c in chain for s in c.ins} - {plan.steps[k].outs[0] for k in members}
    out_shape = plan.meta[plan.steps[head].outs[0]][0]
    if len(with_head) == 1 and all(be.epilogue_fits(plan.meta[s][0], out_shape) for s in outer):
        return joined
    return joined - set(with_head)


def _groups(plan: Plan, be) -> tuple:
    """(lists of step indices, each a chain to fuse (two steps or more), the indices of heads)."""
    readers, group_of, groups, heads = _readers(plan), {}, {}, set()
    for i, step in enumerate(plan.steps):
        if _head(plan, step, be):
            groups[i], group_of[step.outs[0]] = [i], i
            heads.add(i)
            continue
        if not _fusible(plan, step, be):
            continue
        shape = plan.meta[step.outs[0]][0]
        joined = {group_of[s] for s in step.ins
                  if s in group_of and readers.get(s) == 1 and plan.meta[s][0] == shape}
        joined = _with_head(plan, be, groups, heads, joined, step)
        members = [i] + [k for g in joined for k in groups.pop(g)]
        inputs = {s for k in members for s in plan.steps[k].ins} - {plan.steps[k].outs[0] for k in members}
        if len(inputs) > be.fusion_max_inputs:      # too many buffers: start afresh from this step
            for g in joined:
                groups[g] = [k for k in members if k != i and group_of[plan.steps[k].outs[0]] == g]
            members = [i]
        groups[i] = sorted(members)
        for k in members:
            group_of[plan.steps[k].outs[0]] = i
    return [g for g in groups.values() if len(g) > 1], heads


class CapturedOnFirstCall:
    """A kernel function that, on a backend that captures dispatches, runs once under ``capture`` and
    from then on replays what it recorded (as the traced steps do; see ``tracer``)."""

    __slots__ = ("fn", "be", "replay")

    def __init__(self, fn, be):
        self.fn, self.be, self.replay = fn, be, None

    def __call__(self, *arrays):
        if self.replay is not None:
            return self.replay(*arrays)
        with self.be.capture() as dispatches:
            out = self.fn(*arrays)
        self.replay = dispatches.replayer(arrays, out) or self.fn
        return out


def _fused_step(plan: Plan, members: list, be, heads: set) -> Step:
    head = next((plan.steps[k] for k in members if k in heads), None)
    steps = [plan.steps[k] for k in members if k not in heads]
    made = {s.outs[0]: j for j, s in enumerate(steps)}
    inputs, ops = ([], []) if head is None else ([head.outs[0]], [])   # a head's result: the chain's input 0
    for s in steps:
        operands = []
        for slot in s.ins:
            if slot in made:
                operands.append(("op", made[slot]))
            else:
                if slot not in inputs:
                    inputs.append(slot)
                operands.append(("in", inputs.index(slot)))
        ops.append((s.name, tuple(operands)))
    out = steps[-1].outs[0]
    if head is None:
        fn = be.fused_kernel(ops, *plan.meta[out])
    else:
        fn = be.fused_kernel(ops, *plan.meta[out], head=(head.name, head.attrs))
        inputs = list(head.ins) + inputs[1:]
        steps = [head] + steps
    if hasattr(be, "capture"):
        fn = CapturedOnFirstCall(fn, be)
    return Step("Fused[" + "+".join(s.name for s in steps) + "]", fn, tuple(inputs), {}, {}, (out,), False)


def swaps_last_two(perm) -> bool:
    """Whether a Transpose's ``perm`` swaps the last two dimensions only (a matrix transpose).

    >>> swaps_last_two((1, 0)), swaps_last_two((0, 2, 1)), swaps_last_two((2, 1, 0))
    (True, True, False)
    """
    n = len(perm)
    return n >= 2 and tuple(perm) == tuple(range(n - 2)) + (n - 1, n - 2)


def fold_transposes(plan: Plan) -> int:
    """On a backend whose MatMul reads transposed operands through its flags (``matmul_reads_transposed``),
    a MatMul reading a matrix Transpose's result reads the Transpose's input instead, its flag flipped;
    a Transpose nothing else reads goes. Returns how many operands were folded."""
    be = plan.backend
    if not getattr(be, "matmul_reads_transposed", False):
        return 0
    made = {s.outs[0]: s for s in plan.steps
            if s.name == K.TRANSPOSE and len(s.outs) == 1 and not s.dynamic and swaps_last_two(s.attrs["perm"])}
    folded = 0
    for step in plan.steps:
        if step.name != K.MATMUL or step.dynamic or not made.keys() & set(step.ins):
            continue
        ins, attrs = list(step.ins), dict(step.attrs)
        for i, flag in ((0, "transpose_a"), (1, "transpose_b")):
            if ins[i] in made:
                ins[i], attrs[flag] = made[ins[i]].ins[0], not attrs.get(flag, False)
                folded += 1
        step.ins, step.attrs = tuple(ins), attrs
        step.fn, step.captured = get_kernel(K.MATMUL, be.name), False     # the kernel, called with the new flags
    readers = _readers(plan)
    plan.steps = [s for s in plan.steps if not (s.name == K.TRANSPOSE and s.outs[0] in made and not readers.get(s.outs[0]))]
    return folded


def fuse_plan(plan: Plan) -> list:
    """Fuse ``plan``'s elementwise chains in place where its backend can (after folding matrix transposes
    into the MatMuls that read them); returns the fused steps' names."""
    be = plan.backend
    fold_transposes(plan)
    if not hasattr(be, "fused_kernel"):
        return []
    groups, heads = _groups(plan, be)
    if not groups:
        return []
    last = {g[-1]: g for g in groups}
    inside = {k for g in groups for k in g}
    steps, names = [], []
    for i, step in enumerate(plan.steps):
        if i in last:
            fused = _fused_step(plan, last[i], be, heads)
            steps.append(fused)
            names.append(fused.name)
        elif i not in inside:
            steps.append(step)
    plan.steps = steps
    return names


__all__ = ["fold_transposes", "fuse_plan", "swaps_last_two"]
