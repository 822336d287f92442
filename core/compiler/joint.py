"""Joint steps: a kernel and its backward kernel computed by one kernel where the backend has one.

A training step's plan often holds a kernel and, later, its backward kernel over the same inputs: the
loss ``SoftmaxCrossEntropy(logits, target)`` and ``SoftmaxCrossEntropyGrad(dy, logits, target)``.
Eagerly the backward kernel starts over from the saved inputs (the softmax again). A backend with
``joint_kernel(name)`` (``cpu``: ``backends/cpu/joint.py``) gives a kernel computing both, with the
same numbers as each alone; where the gradient's ``dy`` is known when the forward runs (a
constant: ``loss.backward()``'s seed, or a value made before it), the two steps become one, at the
forward's place. A gradient still to come (a compiled model whose loss is differentiated outside)
keeps its own step.

>>> join_plan  # doctest: +ELLIPSIS
<function join_plan at ...>
"""
from __future__ import annotations

from .plan import Plan, Step

_GRAD = "Grad"   # a backward kernel is named for its kernel (core/kernel_names.py)
_BACKWARD_ATTRS = ("needs", "shapes", "dtypes")   # what a backward kernel gets besides the forward's attrs


def _ready_before(plan: Plan, slot, made_at: dict, i: int) -> bool:
    """Whether ``slot`` holds its value before step ``i`` runs."""
    return slot in plan.consts or slot in plan.inputs or slot in plan.extra or made_at.get(slot, i) < i


def _partner(plan: Plan, grad: Step, j: int, made_at: dict, first: dict):
    """The index of the forward step that backward kernel ``grad`` (step ``j``) is the gradient of,
    when they can become one step (a one-output forward: one dy, then the saved inputs); else None."""
    dy, saved = grad.ins[0], grad.ins[1:]
    i = first.get((grad.name[:-len(_GRAD)], saved))
    if i is None or i >= j:
        return None
    fwd = plan.steps[i]
    if fwd.dynamic or grad.dynamic or not _ready_before(plan, dy, made_at, i):
        return None
    own = {k: v for k, v in grad.attrs.items() if k not in _BACKWARD_ATTRS}   # the forward's attrs
    return i if own == fwd.attrs else None


def join_plan(plan: Plan) -> list:
    """Join ``plan``'s kernels and their gradients in place where its backend can; returns the joint
    steps' names."""
    joint_kernel = getattr(plan.backend, "joint_kernel", None)
    if joint_kernel is None:
        return []
    made_at = {o: i for i, step in enumerate(plan.steps) for o in step.outs if o is not None}
    first = {}
    for i, step in enumerate(plan.steps):
        if step.check is None and len(step.outs) == 1:
            first.setdefault((step.name, step.ins), i)
    joined, gone = {}, set()
    for j, step in enumerate(plan.steps):
        if step.check is not None or not step.name.endswith(_GRAD):
            continue
        i = _partner(plan, step, j, made_at, first)
        fn = None if i is None or i in joined else joint_kernel(plan.steps[i].name)
        if fn is None:
            continue
        fwd = plan.steps[i]
        joined[i] = Step(f"{fwd.name}+{step.name}", fn, fwd.ins + step.ins[:1], fwd.attrs, {},
                         fwd.outs + step.outs, True)
        gone.add(j)
    plan.steps = [joined.get(i, s) for i, s in enumerate(plan.steps) if i not in gone]
    return [s.name for s in joined.values()]


__all__ = ["join_plan"]
