"""``CompiledFunction``: a function (or module) that traces itself once per guard set and replays.

Each call finds its places and guard key (``places.find_places``; while nothing the last walk read
has moved, ``quick`` gives them without walking). A plan traced for that key is
replayed; otherwise the call runs eagerly under the tracer (so its results *are* the eager ones)
and its plan is kept for the next call with that key: PyTorch's recompiles. A trace that made new
state (an optimizer's first step) is not kept: the next call traces again. A plan with graph breaks
replays piece by piece, checking the values read back at the breaks; a call that reads other
values traces another path for its key (``paths.Paths``). A plan that cannot be replayed (Python
state it would miss) makes its key run eagerly. Past ``RECOMPILE_LIMIT`` plans (a path counts as
one), new keys and paths run eagerly, with a warning, as PyTorch's ``recompile_limit``.
"""
from __future__ import annotations

import warnings

from .. import per_step as step_numbers
from ..autograd import anomaly_mode
from .boundary import trace_backward
from .explain import describe
from .paths import Paths
from .places import find_places
from .plan import build_plan
from .python_state import PythonState
from .quick import watch
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
        self.plans: dict = {}          # guard key -> Replay, Paths (a plan with graph breaks) or Eager
        self.traces = self.replays = 0
        self.last = None               # the Replay or Eager of the latest trace
        self._limit_warned = False
        self._quick = None             # the last walk's quick guard (``quick``): its places while nothing moved

    def __call__(self, *args, **kwargs):
        if step_numbers._recorder[0] is not None or anomaly_mode.state.enabled:
            return self.fn(*args, **kwargs)   # inside another's trace (be part of it), or checking every gradient
        quick = self._quick
        found = None if quick is None else quick(self.fn, args, kwargs)
        if found is None:                            # something the last walk read moved: walk again
            found, quick = watch(self.fn, args, kwargs)
            self._quick, entry = quick, self.plans.get(found.key)
            if quick is not None:
                quick.entry = entry
        else:
            entry = quick.entry
        if type(entry) is Replay or type(entry) is Paths:
            out = entry(found)
            if out is not _MISS:
                self.replays += 1
                return out
        elif entry is not None:
            return self.fn(*args, **kwargs)
        if self.kept() >= RECOMPILE_LIMIT:
            self._warn_limit()
            return self.fn(*args, **kwargs)
        return self._trace(found, args, kwargs)

    def _trace(self, found, args, kwargs):
        state, live = PythonState(found), live_tensors()
        try:
            with Tracer(self.fullgraph) as tracer:
                result = self.fn(*args, **kwargs)
                backward = trace_backward(tracer, result, found)   # its outputs' backward, if they have one
        except GraphBreak:
            state.restore(live)
            raise
        plan = build_plan(tracer, found, find_places(self.fn, args, kwargs), live, result, backward)
        del backward
        plan.reasons += state.unreplayable_changes()
        del tracer, live
        self.traces += 1
        entry = Replay(plan) if plan.replayable else Eager(plan)
        if not any(r.startswith(_WARM_UP) for r in plan.reasons):
            self._keep(found.key, entry)
        self.last = entry
        if self.debug:
            print(self.explain())
        return result

    def _keep(self, key, entry) -> None:
        """Keep ``entry`` for ``key``: a replayable plan with graph breaks is one more path of the key's.
        (The quick guard, which holds the plan of its key, is dropped: the next call walks.)"""
        self._quick = None
        held = self.plans.get(key)
        if type(entry) is not Replay or not entry.tokens:
            self.plans[key] = entry
        elif type(held) is Paths:
            held.add(entry)
        else:
            self.plans[key] = Paths(entry)

    def kept(self) -> int:
        """How many plans are kept (each path of a key with graph breaks counts)."""
        return sum(len(e) if type(e) is Paths else 1 for e in self.plans.values())

    def _warn_limit(self):
        if not self._limit_warned:
            self._limit_warned = True
            warnings.warn(f"compile: {getattr(self.fn, '__name__', type(self.fn).__name__)} was traced for "
                          f"{RECOMPILE_LIMIT} different guard sets or paths through its graph breaks "
                          f"(recompile_limit); calls with new shapes, dtypes, arguments or values read at a graph "
                          f"break run eagerly from now on", stacklevel=3)

    def explain(self) -> str:
        """The plans traced so far: per guard set, its kernels (fused ones marked), constants folded,
        per-step numbers, write-backs, and graph breaks or why it runs eagerly."""
        parts = [f"compiled {getattr(self.fn, '__qualname__', type(self.fn).__name__)}: {self.traces} trace(s), "
                 f"{self.kept()} plan(s) kept, {self.replays} replay(s)"]
        entries = [p for e in self.plans.values() for p in (e.paths if type(e) is Paths else (e,))]
        if self.last is not None and all(e is not self.last for e in entries):
            entries.append(self.last)
        for k, entry in enumerate(entries):
            parts.append(describe(k, entry))
        return "\n".join(parts)


__all__ = ["CompiledFunction", "RECOMPILE_LIMIT"]
