"""``CompiledFunction``: a function (or module) that traces itself once per guard set and replays.

Each call finds its places and guard key (``places.find_places``). A plan traced for that key is
replayed; otherwise the call runs eagerly under the tracer (so its results *are* the eager ones)
and its plan is kept for the next call with that key: PyTorch's recompiles. A trace that made new
state (an optimizer's first step) is not kept: the next call traces again. A plan that cannot be
replayed (a graph break, Python state it would miss) makes its key run eagerly. Past
``RECOMPILE_LIMIT`` plans, new keys run eagerly, with a warning, as PyTorch's ``recompile_limit``.
"""
from __future__ import annotations

import warnings

from .. import per_step as step_numbers
from .explain import describe
from .places import find_places
from .plan import build_plan
from .python_state import PythonState
from .replay import _MISS, Replay
from .tracer import GraphBreak, Tracer, live_tensors

RECOMPILE_LIMIT = 8   # torch._dynamo.config.recompile_limit
_WARM_UP = "the step made new state"


class Eager:
    """A guard key whose plan cannot be replayed: its calls run eagerly (``plan`` says why)."""

    def __init__(self, plan):
        self.plan = plan


class CompiledFunction:
    """``fn`` compiled: call it as ``fn``. ``explain()`` describes the plans traced so far.

    >>> import webgrad as wg
    >>> f = CompiledFunction(lambda x: (x * 2).exp())
    >>> x = wg.ones(3)
    >>> f(x).tolist() == f(x).tolist() == (x * 2).exp().tolist()
    True
    """

    def __init__(self, fn, *, fullgraph: bool = False, debug: bool = False):
        self.fn, self.fullgraph, self.debug = fn, fullgraph, debug
        self.plans: dict = {}          # guard key -> Replay or Eager
        self.traces = self.replays = 0
        self.last = None               # the Replay or Eager of the latest trace
        self._limit_warned = False

    def __call__(self, *args, **kwargs):
        if step_numbers._recorder[0] is not None:   # inside another compiled function's trace: be part of it
            return self.fn(*args, **kwargs)
        found = find_places(self.fn, args, kwargs)
        entry = self.plans.get(found.key)
        if type(entry) is Replay:
            out = entry(found)
            if out is not _MISS:
                self.replays += 1
                return out
        elif entry is not None:
            return self.fn(*args, **kwargs)
        if len(self.plans) >= RECOMPILE_LIMIT:
            self._warn_limit()
            return self.fn(*args, **kwargs)
        return self._trace(found, args, kwargs)

    def _trace(self, found, args, kwargs):
        state, live = PythonState(found), live_tensors()
        try:
            with Tracer(self.fullgraph) as tracer:
                result = self.fn(*args, **kwargs)
        except GraphBreak:
            state.restore(live)
            raise
        plan = build_plan(tracer, found, find_places(self.fn, args, kwargs), live, result)
        plan.reasons += state.unreplayable_changes()
        del tracer, live
        self.traces += 1
        entry = Replay(plan) if plan.replayable else Eager(plan)
        if not any(r.startswith(_WARM_UP) for r in plan.reasons):
            self.plans[found.key] = entry
        self.last = entry
        if self.debug:
            print(self.explain())
        return result

    def _warn_limit(self):
        if not self._limit_warned:
            self._limit_warned = True
            warnings.warn(f"compile: {getattr(self.fn, '__name__', type(self.fn).__name__)} was traced for "
                          f"{RECOMPILE_LIMIT} different guard sets (recompile_limit); calls with new shapes, dtypes "
                          f"or arguments run eagerly from now on", stacklevel=3)

    def explain(self) -> str:
        """The plans traced so far: per guard set, its kernels (fused ones marked), constants folded,
        per-step numbers, write-backs, and graph breaks or why it runs eagerly."""
        parts = [f"compiled {getattr(self.fn, '__qualname__', type(self.fn).__name__)}: {self.traces} trace(s), "
                 f"{len(self.plans)} plan(s) kept, {self.replays} replay(s)"]
        entries = list(self.plans.values())
        if self.last is not None and all(e is not self.last for e in entries):
            entries.append(self.last)
        for k, entry in enumerate(entries):
            parts.append(describe(k, entry))
        return "\n".join(parts)


__all__ = ["CompiledFunction", "RECOMPILE_LIMIT"]
