"""Capturing a GPU kernel call's dispatches, for compiled plans: a replay then records the same
prepared dispatches (pipelines and packed uniforms made once, at trace time) on new buffers, without
running the kernel function's Python again.

While a ``Capture`` is active, the backend's ``alloc`` and ``record`` are logged; a kernel that does
anything else with the device (an upload, an index check, a readback) is not capturable, and its
plan step keeps calling the kernel function. ``Capture.replayer(inputs, outputs)`` maps every array
the dispatches touch to a call input, a buffer the call allocates, a view of one of those (same
storage, another shape), or a constant, and returns ``fn(*inputs) -> outputs`` (None when it cannot).
"""
from __future__ import annotations

from .runtime import GpuArray

_FORBIDDEN = ("upload_bytes", "index_flags", "read_bytes", "read_bytes_async")


class Capture:
    """Context manager logging one kernel call's allocations and dispatches on backend ``be``."""

    def __init__(self, be):
        self.be, self.allocs, self.records, self.ok = be, [], [], True

    def __enter__(self):
        be, alloc, record = self.be, self.be.alloc, self.be.record
        self.saved = {name: be.__dict__.get(name) for name in ("alloc", "record", *_FORBIDDEN)}

        def logged_alloc(shape, dtype, upload=False):
            out = alloc(shape, dtype, upload)
            self.allocs.append(out)
            self.ok = self.ok and not upload
            return out

        def logged_record(call, arrays):
            self.records.append((call, list(arrays)))
            return record(call, arrays)

        def refused(name, fn):
            def run(*args, **kwargs):
                self.ok = False
                return fn(*args, **kwargs)
            return run
        be.alloc, be.record = logged_alloc, logged_record
        for name in _FORBIDDEN:
            setattr(be, name, refused(name, getattr(be, name)))
        return self

    def __exit__(self, *exc):
        for name, fn in self.saved.items():     # what was there before (another logger's wrappers) comes back
            if fn is None:
                self.be.__dict__.pop(name, None)
            else:
                self.be.__dict__[name] = fn
        return False

    def replayer(self, inputs, outputs):
        """``fn(*inputs) -> outputs`` replaying the logged dispatches (a tuple when ``outputs`` is),
        or None when the call cannot be replayed so."""
        if not self.ok:
            return None
        refs = _Refs(inputs, self.allocs)
        records = [(call, [refs.of(a) for a in arrays]) for call, arrays in self.records]
        many = type(outputs) is tuple
        outs = [None if o is None else refs.of(o) for o in (outputs if many else (outputs,))]
        shapes = [(a.shape, a.dtype) for a in self.allocs]
        return _replayer(self.be, shapes, records, outs, many)


class _Refs:
    """How to find each array at replay: ('in', k), ('new', j), a view of either, or a constant."""

    def __init__(self, inputs, allocs):
        self.by_id = {id(a): ("in", k) for k, a in enumerate(inputs) if isinstance(a, GpuArray)}
        self.by_id.update({id(a): ("new", j) for j, a in enumerate(allocs)})
        self.by_storage = {id(a.storage): ref for a in (*inputs, *allocs) if isinstance(a, GpuArray)
                           for ref in (self.by_id[id(a)],)}

    def of(self, a):
        ref = self.by_id.get(id(a))
        if ref is not None:
            return ref
        base = self.by_storage.get(id(a.storage))
        return ("view", base, a.shape, a.dtype) if base is not None else ("const", a)


def _replayer(be, shapes, records, outs, many):
    def resolve(ref, ins, made):
        kind = ref[0]
        if kind == "in":
            return ins[ref[1]]
        if kind == "new":
            return made[ref[1]]
        if kind == "view":
            base = resolve(ref[1], ins, made)
            return GpuArray(base.storage, ref[2], ref[3])
        return ref[1]

    def run(*ins):
        alloc, record = be.alloc, be.record        # looked up now: a logger (resident.py) may wrap them
        made = [alloc(shape, dtype) for shape, dtype in shapes]
        for call, refs in records:
            record(call, [resolve(r, ins, made) for r in refs])
        got = [None if r is None else resolve(r, ins, made) for r in outs]
        return tuple(got) if many else got[0]
    return run


__all__ = ["Capture"]
