"""Fusion: chains of elementwise steps of a plan become one kernel where the backend can fuse them.

A backend that fuses offers ``fusible(name, attrs, dtypes)``, ``fused_kernel(ops, out_shape)`` and
``fusion_max_inputs`` (the GPU backends: one generated WGSL kernel per chain, ``backends/gpu/fused.py``).
Steps are grouped in plan order: an elementwise step joins the groups that made its inputs when
each such input has this step as its only reader (so no other step, write-back or output needs
it) and has the step's output shape (broadcasting happens only on the chain's own inputs). A group
of two or more steps becomes one step, placed where its last member was.

>>> fuse_plan  # doctest: +ELLIPSIS
<function fuse_plan at ...>
"""
from __future__ import annotations

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


def _groups(plan: Plan, be) -> list:
    """Lists of step indices, each a chain to fuse (two steps or more)."""
    readers, group_of, groups = _readers(plan), {}, {}
    for i, step in enumerate(plan.steps):
        if not _fusible(plan, step, be):
            continue
        shape = plan.meta[step.outs[0]][0]
        joined = {group_of[s] for s in step.ins
                  if s in group_of and readers.get(s) == 1 and plan.meta[s][0] == shape}
        members = [i] + [k for g in joined for k in groups.pop(g)]
        inputs = {s for k in members for s in plan.steps[k].ins} - {plan.steps[k].outs[0] for k in members}
        if len(inputs) > be.fusion_max_inputs:      # too many buffers: start afresh from this step
            for g in joined:
                groups[g] = [k for k in members if k != i and group_of[plan.steps[k].outs[0]] == g]
            members = [i]
        groups[i] = sorted(members)
        for k in members:
            group_of[plan.steps[k].outs[0]] = i
    return [g for g in groups.values() if len(g) > 1]


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


def _fused_step(plan: Plan, members: list, be) -> Step:
    steps = [plan.steps[k] for k in members]
    made = {s.outs[0]: j for j, s in enumerate(steps)}
    inputs, ops = [], []
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
    fn = be.fused_kernel(ops, *plan.meta[out])
    if hasattr(be, "capture"):
        fn = CapturedOnFirstCall(fn, be)
    return Step("Fused[" + "+".join(s.name for s in steps) + "]", fn, tuple(inputs), {}, {}, (out,), False)


def fuse_plan(plan: Plan) -> list:
    """Fuse ``plan``'s elementwise chains in place where its backend can; returns the fused steps' names."""
    be = plan.backend
    if not hasattr(be, "fused_kernel"):
        return []
    groups = _groups(plan, be)
    if not groups:
        return []
    last = {g[-1]: g for g in groups}
    inside = {k for g in groups for k in g}
    steps, names = [], []
    for i, step in enumerate(plan.steps):
        if i in last:
            fused = _fused_step(plan, last[i], be)
            steps.append(fused)
            names.append(fused.name)
        elif i not in inside:
            steps.append(step)
    plan.steps = steps
    return names


__all__ = ["fuse_plan"]
