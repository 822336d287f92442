"""``explain()``'s text: a plan as its kernels, per-step numbers, write-backs and graph breaks."""
from __future__ import annotations

from collections import Counter

from .buffers import describe_buffers
from .plan import pieces


def _step_line(step) -> str:
    if step.check is not None:
        c = step.check
        return (f"    --- graph break: {c.what} at {c.where}; read {c.seen} (the next piece runs where a call "
                f"reads that)")
    ins = ", ".join(f"s{s}" for s in step.ins)
    dyn = "".join(f", {k}=<per-step #{i}>" for k, i in step.dynamic.items())
    outs = ", ".join("_" if s is None else f"s{s}" for s in step.outs)
    into = "" if step.into is None else {"kept": f" -> into kept array #{step.into.where}",
                                         "slot": f" -> into s{step.into.where}",
                                         "donate": f" -> into s{step.into.where} if nothing else holds it"}[step.into.kind]
    rows = None if step.into is None else getattr(step.into.fn, "rows", None)   # (a long chain: backends/cpu/fused.py)
    into += "" if rows is None else f", in blocks of {rows} rows"
    return f"    {outs} = {step.name}({ins}{dyn}){into}"


def _write_line(write) -> str:
    kind, target, slot, detail = write
    where = f"place #{target}" if type(target) is int else "a tensor held elsewhere"
    return {"data": f"    {where} <- s{slot}", "fixed": f"    {where} <- s{slot}",
            "new": f"    {where} = new tensor(s{slot})", "none": f"    {where} = None"}[kind]


def describe(k: int, entry) -> str:
    """The text of one kept plan (a ``Replay``) or eager entry (an ``Eager``)."""
    plan = entry.plan
    head = (f"plan {k}: {len(plan.steps)} kernel calls (traced {plan.traced_calls}, {plan.folded} folded into "
            f"constants, {plan.dropped} unused dropped), {len(plan.inputs) + len(plan.extra)} inputs, "
            f"{len(plan.consts)} constants, {sum(c for _, _, c in plan.prologue)} per-step numbers, "
            f"backend {getattr(plan.backend, 'name', None)}, {pieces(plan)} piece(s)")
    lines = [head]
    if plan.uploads:
        lines.append(f"  {plan.uploads} tensor(s) made from Python data inside the step: constants of the plan")
    if not plan.replayable:
        lines.append("  runs eagerly:")
        lines += [f"    {r}" for r in plan.reasons]
    fused = getattr(entry, "fused", None)
    if fused:
        counts = Counter(fused)
        chains = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in counts.items())
        lines.append(f"  fused: {len(fused)} chains: {chains}")
    written = describe_buffers(plan.steps, getattr(entry, "kept", None))
    if written:
        lines.append(written)
    state = getattr(getattr(entry, "run_steps", None), "state", None)   # a GPU plan the device holds
    if state:
        lines.append(f"  {state}")
    backward = getattr(entry, "backward", None) or []
    later = {id(s) for s in backward}
    lines.append("  kernels:")
    lines += [_step_line(s) for s in plan.steps if id(s) not in later]
    if backward:
        lines.append(f"  backward kernels (run by the outputs' CompiledBackward node at backward(), from "
                     f"{len(entry.saved)} saved values):")
        lines += [_step_line(s) for s in backward]
    if plan.writes:
        lines.append("  write-backs:")
        lines += [_write_line(w) for w in plan.writes]
    if plan.breaks and not plan.replayable:
        lines.append("  graph breaks:")
        lines += [f"    {what} at {where}" for what, where in plan.breaks]
    return "\n".join(lines)


__all__ = ["describe"]
