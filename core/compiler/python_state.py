"""Python state around a traced step: what a plan cannot replay, and how to undo a refused trace.

A plan replays kernels and the numbers of ``per_step`` functions, not the rest of a step's Python.
So a trace checks, afterwards, that the Python state it can see did not change in ways a replay
would miss: an optimizer's options (an LR scheduler stepped *inside* the compiled function), an
optimizer's Python numbers that no ``per_step`` function recomputes (an optimizer class without
``per_step_numbers``), a scheduler's epoch, a module's training flag. ``restore`` puts the state
back as it was (after ``fullgraph=True`` refused a step, nothing is left half-updated).
"""
from __future__ import annotations

from .. import random as _random


def _floats(opt) -> dict:
    return {(id(p), k): v for p, s in opt.state.items() for k, v in s.items() if isinstance(v, float)}


class PythonState:
    """A snapshot of the Python state a call of the step can reach (``places.Found``)."""

    def __init__(self, found):
        self.found = found
        self.groups = [(g, {k: v for k, v in g.items() if k != "params"}) for o in found.optimizers
                       for g in o.param_groups]
        self.states = [(o, {p: dict(s) for p, s in o.state.items()}) for o in found.optimizers]
        self.floats = [(o, _floats(o)) for o in found.optimizers]
        self.epochs = [(s, getattr(s, "last_epoch", None)) for s in found.schedulers]
        self.training = [(m, m.training) for m in found.modules]
        self.generator = _random.default_generator._snapshot()

    def unreplayable_changes(self) -> list:
        """Why a replay would differ from running the step: the changes a plan does not replay."""
        reasons = []
        if any({k: v for k, v in g.items() if k != "params"} != old for g, old in self.groups):
            reasons.append("the step changed an optimizer's options (an LR scheduler's step() inside the compiled "
                           "function? call it outside)")
        for opt, old in self.floats:
            if not getattr(opt, "per_step_numbers", False) and _floats(opt) != old:
                reasons.append(f"{type(opt).__name__} keeps Python numbers that its step changes (only optimizers "
                               f"with per_step_numbers replay them: SGD, Adam, AdamW, Adamax, Adagrad, RMSprop)")
        if any(getattr(s, "last_epoch", None) != e for s, e in self.epochs):
            reasons.append("an LR scheduler stepped inside the compiled function (call it outside)")
        if any(m.training != t for m, t in self.training):
            reasons.append("the step changed a module's training flag (train()/eval() inside the compiled function)")
        return reasons

    def restore(self, live: dict) -> None:
        """Put back the tensors' data and versions (``live``: ``tracer.live_tensors()`` from before),
        the places, the optimizers' state and options, the default generator and training flags."""
        for t, data, version in live.values():
            t._data, t._version = data, version
        for place, t in zip(self.found.places, self.found.tensors):
            if place.kind in ("grad", "buffer", "state"):
                place.set(t)
        for g, old in self.groups:
            g.update(old)
        for opt, old in self.states:
            opt.state.clear()
            for p, s in old.items():
                opt.state[p].update(s)
        for m, t in self.training:
            m.training = t
        _random.default_generator._restore(self.generator)


__all__ = ["PythonState"]
