"""Per-step Python numbers: what a compiled step recomputes on every replay.

A compiled plan replays kernels, not Python. The Python numbers a step feeds its kernels and that
change from step to step (an optimizer's step count and bias corrections, the learning rate a
scheduler sets; a generator's draws, host arrays) are computed by small functions that the step calls through
``per_step``: while a step is traced, the tracer notes the function, its arguments and the number
objects it returned; every kernel attribute that *is* one of those objects becomes a dynamic
attribute of the plan, and each replay first calls the noted functions again, in the same order,
and hands their new numbers to those attributes. Outside a trace ``per_step(fn, *args)`` is
``fn(*args)``.

>>> per_step(lambda a, b: (a + b, a * b), 2.0, 3.0)
(5.0, 6.0)
"""
from __future__ import annotations

_recorder = [None]   # the tracer's note(fn, args, values) while a step is traced


def per_step(fn, *args):
    """``fn(*args)``: Python numbers (one, or a tuple) that a compiled step recomputes at each replay.
    ``fn`` may update Python state (a step count) as it must happen once per step."""
    values = fn(*args)
    note = _recorder[0]
    return values if note is None else note(fn, args, values)


__all__ = ["per_step"]
