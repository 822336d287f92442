"""The paths of a compiled function through its graph breaks: a trie of pieces.

A plan with graph breaks (``plan.Step.check``) replays piece by piece and reads a value back at
each break; it goes on only where the value is the traced one. When a call reads another value (``if
loss.item() > 1:`` goes the other way, a mask selects another number of elements), the Python after
the break may do something else: that call is traced again from the start, and its plan becomes
another *path* for the guard key. The paths of one key share their pieces up to where their tokens
differ: ``Paths`` keeps them, and a replay that missed at break ``k`` goes on with the path whose
first ``k + 1`` tokens are those read (each such hop gets at least one break further, so a call
runs at most one path per break). Nothing is written back before a path ran to its end; the
per-step functions a missed path ran are undone (``Undo``), so that the next path or trace sees the
state as it was. (A path whose plan cannot be replayed makes its whole key run eagerly, as a plan
without breaks does.)

>>> import webgrad as wg
>>> f = wg.compile(lambda x: x * 2 if (x > 0).all() else x * 3)
>>> [f(wg.full((2,), v)).tolist() for v in (1.0, -1.0, 2.0, -2.0)]
[[2.0, 2.0], [-3.0, -3.0], [4.0, 4.0], [-6.0, -6.0]]
>>> f.traces, f.replays
(2, 2)
"""
from __future__ import annotations

from ..random import Generator
from .replay import _MISS, Miss


class Undo:
    """What the per-step functions of some plans may change (their dict arguments: an optimizer's
    state and group; their generators), saved now; ``restore()`` puts it back."""

    def __init__(self, replays):
        self.saved, seen = [], set()
        for replay in replays:
            for _, args, _ in replay.plan.prologue:
                for a in args:
                    if id(a) in seen:
                        continue
                    seen.add(id(a))
                    if type(a) is dict:
                        self.saved.append((a, dict(a)))
                    elif isinstance(a, Generator):
                        self.saved.append((a, a._snapshot()))

    def restore(self) -> None:
        for obj, old in self.saved:
            if type(obj) is dict:
                obj.clear()
                obj.update(old)
            else:
                obj._restore(old)


class Paths:
    """The replayable plans (``replay.Replay``) of one guard key whose graph breaks split them.
    Calling it replays the path the values read at the breaks lead to, or returns ``_MISS``
    (with nothing changed) when no path traced so far goes where this call goes."""

    def __init__(self, first):
        self.paths = [first]   # the latest path that ran to its end first

    def __len__(self):
        return len(self.paths)

    def add(self, replay) -> None:
        self.paths.insert(0, replay)

    def find(self, read: tuple):
        """The first path whose tokens start with ``read``."""
        n = len(read)
        return next((p for p in self.paths if p.tokens[:n] == read), None)

    def __call__(self, found):
        if not self.paths:
            return _MISS
        undo, path = Undo(self.paths), self.paths[0]
        while path is not None:
            out = path(found)
            if out is _MISS:                 # a tensor it read weakly died: this path is traced again
                self.paths.remove(path)
                return out
            if type(out) is not Miss:
                if path is not self.paths[0]:
                    self.paths.remove(path)
                    self.paths.insert(0, path)
                return out
            undo.restore()
            path = self.find(out.read)
        return _MISS


__all__ = ["Paths", "Undo"]
