"""A compiled plan held by the device: its dispatches described once, a replay one submit.

``wg.compile`` replays a plan's kernels as captured dispatches (``capture.py``), recorded again from
Python at each replay. ``resident_plan`` goes further on the GPU backends: the first replay of a
plan runs as before while a ``_Log`` notes every allocation, dispatch, upload and index check it
makes; from those, every buffer the dispatches touch is one of

* an **input** (the data of a place or of a tensor the step read, where a dispatch reads it): handed
  over at each replay;
* an **output** (what the write-backs and the function's result take): a new pooled buffer per
  replay, handed over with the inputs (they escape into tensors, so they cannot be reused) -- except
  where the output replaces the data of a tensor the step read (a parameter's update, an optimizer's
  state: ``replay.replaced_data``): the plan writes it into a buffer of its own and copies that into
  the tensor's buffer after its dispatches, so the tensor keeps its buffer, updated in place as
  PyTorch's are (a dispatch cannot read and write one buffer; where that tensor is a view, e.g. a parameter
  made by ``reshape``, its root's new data is the same buffer at the root's shape, as it was); and except
  where the output becomes the new
  ``.grad`` of a place whose old one nothing else holds (``replay.replaced_grads``; checked at each replay by
  reference counts): the plan writes it into that old ``.grad``'s buffer, which eagerly would go back to the pool
  as the old tensor dies;
* **fixed**: the plan's own intermediates and constants, leased for the plan's life.

The device then holds the plan (``device.create_plan``: in the browser gpu.js keeps it, with its
uniform blocks in a buffer of its own; natively a ``HostPlan``), and a replay is the inputs' and
outputs' buffers plus the per-step numbers (``webgrad.per_step``: a scheduled rate or Adagrad's decayed one, which the
step uploads as small ``Fill`` tensors; Adam's step size and bias correction, which ``AdamStep``'s uniforms
hold as they are; a generator's draws, e.g. a dropout mask, which ``RandomValues`` uploads) packed into bytes, submitted with the open batch in one
call (``GpuBackend.submit_plan``) by one generated function (``replay_source``). Bind groups are made once per set of buffers (the pool hands a
step's outputs back in a short cycle, so a few sets recur).

A replay that cannot run so (device timing on, an index check with another flags slot since the
last readback) runs the Python replay instead; a plan whose first replay did something else with
the device (a readback, an upload of a value the per-step numbers do not give) stays on it.

>>> resident_plan   # doctest: +ELLIPSIS
<function resident_plan at ...>
"""
from __future__ import annotations

import array
import struct
import sys

from .program import UNIFORM_SLOT
from .runtime import GpuArray

FIXED, EXT, UNIFORMS = 0, 1, 2      # where a buffer is: the plan's own, handed over per replay, its uniforms
_CODES = {"float32": "f", "int32": "i", "int64": "i", "bool": "I"}
_LOGGED = ("alloc", "record", "upload_bytes", "index_flags", "read_bytes", "read_bytes_async")


class _Log:
    """Context manager noting what a replay does with backend ``be`` (see the module's doc)."""

    def __init__(self, be):
        self.be, self.allocs, self.records, self.writes, self.checks = be, [], [], [], []
        self.step, self.ok = None, True

    def __enter__(self):
        be = self.be
        self.saved = {name: be.__dict__.get(name) for name in _LOGGED}
        alloc, record, upload, flags = be.alloc, be.record, be.upload_bytes, be.index_flags

        def logged_alloc(shape, dtype, upload=False):
            out = alloc(shape, dtype, upload)
            self.allocs.append((out, upload))
            return out

        def logged_record(call, arrays):
            self.records.append((call, list(arrays), self.step))
            return record(call, arrays)

        def logged_upload(data, shape, dtype):
            out = upload(data, shape, dtype)
            self.writes.append((self.step, out, bytes(data)))
            return out

        def logged_flags(label, size):
            out = flags(label, size)
            self.checks.append((label, size, out[1], out[0].storage))
            return out

        def refused(fn):
            def run(*args, **kwargs):
                self.ok = False
                return fn(*args, **kwargs)
            return run
        be.alloc, be.record, be.upload_bytes, be.index_flags = logged_alloc, logged_record, logged_upload, logged_flags
        be.read_bytes, be.read_bytes_async = refused(be.read_bytes), refused(be.read_bytes_async)
        return self

    def __exit__(self, *exc):
        for name, fn in self.saved.items():
            if fn is None:
                self.be.__dict__.pop(name, None)
            else:
                self.be.__dict__[name] = fn
        return False


def walk(plan, steps, tensors, extra, numbers, log: _Log):
    """Run ``steps`` of ``plan`` as its generated function does (``replay.steps_source``), noting in
    ``log.step`` the step running; returns every slot's value."""
    values = dict(plan.consts)
    for slot, i in plan.inputs.items():
        values[slot] = tensors[i]._data
    for k, slot in enumerate(plan.extra):
        values[slot] = extra[k]._data
    for k, step in enumerate(steps):
        log.step = k
        attrs = {} if step.captured else {name: numbers[step.dynamic[name]] if name in step.dynamic else v
                                           for name, v in step.attrs.items()}
        out = step.fn(*[values[s] for s in step.ins], **attrs)
        for s, o in zip(step.outs, out if step.multi else (out,)):
            if s is not None:
                values[s] = o
    return values


class Resident:
    """``plan``'s replay on backend ``be``: ``__call__(tensors, extra, numbers)`` returns the ``needed``
    slots' arrays, as the generated ``steps`` function (``fallback``) does.

    >>> step = wg.compile(train_step)          # doctest: +SKIP
    >>> for _ in range(3): step(x, y)          # doctest: +SKIP
    >>> step.last.run_steps.state              # doctest: +SKIP
    'held by the device: 29 dispatches submitted in one call per replay (1 so far)'
    """

    def __init__(self, be, plan, needed, fallback, steps, replaced=None, grads=None, roots=None):
        self.be, self.plan, self.needed, self.fallback, self.steps = be, plan, needed, fallback, steps
        self.replaced = replaced or {}    # {slot: input slot}: may be written into the input's buffer
        self.grads = grads or {}          # {slot: place}: may be written into the buffer of the .grad it replaces
        self.fixed_roots = roots or {}    # {slot: weak reference}: the new data of a root (replay.replaced_roots)
        self.handle, self.why, self.into, self.renew, self.roots = None, None, {}, {}, {}
        self.count = [0]                  # held replays (the generated replay counts them)

    @property
    def replays(self) -> int:
        """How many replays the device's plan ran."""
        return self.count[0]

    @property
    def state(self) -> str:
        """How this plan replays, for ``explain()``."""
        if self.handle is not None:
            written = f"; {len(self.into)} outputs written into their tensors' own buffers" if self.into else ""
            if self.renew:
                written += f"; {len(self.renew)} new .grad tensors in the buffers of those they replace"
            return (f"held by the device: {self.dispatches} dispatches submitted in one call per replay "
                    f"({self.replays} so far){written}")
        return f"replayed from Python: {self.why}" if self.why else "held by the device after its first replay"

    def __call__(self, tensors, extra, numbers, read):
        if self.handle is not None:
            out = self.replay(tensors, extra, numbers)   # (None: this call cannot run so)
            if out is not None:
                return out
        elif self.why is None and self.be._timing is None:
            return self.build(tensors, extra, numbers)
        return self.fallback(tensors, extra, numbers, read)

    # ------------------------------------------------------------ building, from one replay
    def build(self, tensors, extra, numbers):
        plan, log = self.plan, _Log(self.be)
        with log:
            values = walk(plan, self.steps, tensors, extra, numbers, log)
        self.why = self._describe(log, values, numbers, tensors) if log.ok else "a readback inside the step"
        return tuple([values[s] for s in self.needed])

    def _describe(self, log, values, numbers, tensors):
        """Make the device's plan from ``log``; None, or why it cannot be made."""
        plan = self.plan
        slots = list(plan.inputs) + list(plan.extra)
        kinds = [("place", i) for i in plan.inputs.values()] + [("extra", k) for k in range(len(plan.extra))]
        handed = {id(a.storage) for _, arrays, _ in log.records for a in arrays}   # (an input no dispatch reads
        handed |= {id(values[s].storage) for s in self.needed} | {id(a.storage) for _, a, _ in log.writes}   # stays)
        where, self.ins = {}, []
        for s, kind in zip(slots, kinds):
            key = id(values[s].storage)
            if key in handed and key not in where:
                where[key] = (EXT, len(self.ins))
                self.ins.append(kind)
        ins = [values[s] for s in slots]
        made = {id(a.storage): (a, upload) for a, upload in log.allocs}
        self.into, self.roots = _in_place(self.replaced, values, made, where, ins, self.needed, self.fixed_roots)
        self.into_ref = {s: where[id(values[i].storage)][1] for s, i in self.into.items()}
        self.renew = _renewable(self.grads, values, made, where, tensors, self.needed)
        self.outs, self.sizes = [], []                # (shape, dtype, upload), (size class, upload) of each output
        for s in [s for s in self.needed if s not in self.renew] + list(self.renew):   # (the renewable ones last)
            a = values[s]
            if id(a.storage) in made and id(a.storage) not in where and s not in self.into and s not in self.roots:
                where[id(a.storage)] = (EXT, len(self.ins) + len(self.outs))
                first, upload = made[id(a.storage)]
                self.outs.append((first.shape, first.dtype, upload))
                self.sizes.append((a.storage.size, upload))
        share = _shared(log, where, {id(values[s].storage) for s in self.into})   # (copied after the dispatches)
        own = {s: self.be.alloc(values[s].shape, values[s].dtype) for s in self.into}   # (this replay's become
        share.update({id(values[s].storage): a.storage for s, a in own.items()})     # the tensors' data)
        copies = [(_fixed(own[s].storage), where[id(values[i].storage)], _span(values[i])) for s, i in self.into.items()]
        self.keep = [a for a in [a for a, _ in log.allocs] + [a for _, arrays, _ in log.records for a in arrays]
                     if id(a.storage) not in where and share.get(id(a.storage), a.storage) is a.storage]
        self.keep += own.values()
        # the fixed buffers, leased for the plan's life (intermediates whose uses do not overlap share one)
        self.result = [("input", self.into_ref[s]) if s in self.into else
                       ("root", self.into_ref[self.roots[s][0]], values[s].shape, values[s].dtype, self.roots[s][1])
                       if s in self.roots else self._ref(values[s], where) for s in self.needed]
        writes, self.numbers = [], []
        for k, a, data in log.writes:
            why = self._write(self.steps[k] if k is not None else None, a, data, numbers, where, writes)
            if why:
                return why
        self.checks = log.checks
        patches = self._patches(log, values, numbers)
        if type(patches) is str:
            return patches
        uniforms, blocks, dispatches = {}, [], []
        for j, (call, arrays, k) in enumerate(log.records):
            offset = None if j in patches else uniforms.get(call.uniforms)   # a patched block is its own
            if offset is None:
                offset = len(blocks) * UNIFORM_SLOT
                if j not in patches:
                    uniforms[call.uniforms] = offset
                blocks.append(call.uniforms.ljust(UNIFORM_SLOT, b"\0"))
            for word, i, code in patches.get(j, ()):
                self._number(i, 1, code, (UNIFORMS,), offset + 4 * word, writes)
            refs = [where.get(id(a.storage)) or _fixed(share.get(id(a.storage), a.storage)) for a in arrays]
            dispatches.append((call.pipe, offset, call.x, call.y, call.z, refs))
        self.handle = self.be.device.create_plan(b"".join(blocks) or bytes(UNIFORM_SLOT), dispatches, writes, copies)
        self.dispatches = len(dispatches)
        self._prepare()
        return None

    @staticmethod
    def _ref(a, where):
        kind = where.get(id(a.storage))
        return ("fixed", a) if kind is None else (kind[1], a.shape, a.dtype)

    def _write(self, step, a, data, numbers, where, writes):
        """Note the upload of ``data`` into ``a`` made by ``step``: constant bytes into a fixed buffer stay
        as they are; a per-step number (a dynamic ``Fill``) is written at each replay."""
        ref = where.get(id(a.storage))
        if step is None or not step.dynamic:
            return None if ref is None else f"{step and step.name}: an upload into a buffer the step hands out"
        if len(step.dynamic) != 1 or a.dtype.name not in _CODES:
            return f"{step.name}: more than one per-step number"
        i = next(iter(step.dynamic.values()))
        code = _CODES[a.dtype.name] if isinstance(numbers[i], (int, float)) else _ARRAYS[a.dtype.name]
        if _pack(code, numbers[i], a.size) != data:
            return f"{step.name}: an upload that is not its per-step number"
        self._number(i, a.size, code, ref or (FIXED, a.storage.buffer, a.storage.size), 0, writes)
        return None

    def _number(self, i, n, code, ref, offset, writes) -> None:
        """Per-step number ``i`` written ``n`` times (as ``code``) at ``offset`` of buffer ``ref`` per replay."""
        start = sum(4 * n for _, n, _ in self.numbers)
        self.numbers.append((i, n, code))
        writes.append((ref, offset, start, 4 * n))

    def _patches(self, log, values, numbers):
        """{record index: [(uniform word, per-step number index, code)]} for the dispatches of steps whose
        per-step numbers sit in their uniforms (a scalar attribute), found by running
        each such step again with other numbers and comparing; or why they cannot be found."""
        out, by_step = {}, {}
        for j, (call, _, k) in enumerate(log.records):
            if self.steps[k].dynamic:
                by_step.setdefault(k, []).append(j)
        for k, js in by_step.items():
            step = self.steps[k]
            other = {name: _other(numbers[i]) for name, i in step.dynamic.items()}
            again = _Log(self.be)
            try:
                with again:
                    step.fn(*[values[s] for s in step.ins], **{**step.attrs, **other})
            except (RuntimeError, ValueError, TypeError, OverflowError) as e:   # e.g. a uniform out of range (GpuLimitError)
                return f"{step.name}: other per-step numbers fail ({type(e).__name__})"
            if len(again.records) != len(js):
                return f"{step.name}: another number of dispatches for other per-step numbers"
            for j, (call, _, _) in zip(js, again.records):
                found = _words(log.records[j][0].uniforms, call.uniforms,
                               [(i, numbers[i], other[name]) for name, i in step.dynamic.items()])
                if found is None:
                    return f"{step.name}: a per-step number in a dispatch's uniforms that is not written as it is"
                out[j] = found
        return out

    # ------------------------------------------------------------ replaying
    def _prepare(self) -> None:
        """What a replay does, prepared once as one generated function (``replay_source``)."""
        n = len(self.sizes) - len(self.renew)
        namespace = {"leases": self.be.leases, "submit": self.be.submit_plan, "pack": struct.pack, "pack_one": _pack,
                     "GpuArray": GpuArray, "handle": self.handle, "sizes": self.sizes[:n], "renewed": self.sizes[n:],
                     "array": array.array, "count": sys.getrefcount, "alone": _ALONE, "be": self.be,
                     "flags": self.be.index_flags, "N": self.count}
        renew = [(place, size) for place, (size, _) in zip(self.renew.values(), self.sizes[n:])]
        self.source = replay_source(self.ins, self.outs, self.numbers, self.result, namespace,
                                    self.be.device.plan_buffers, renew, self.checks)
        exec(compile(self.source, "<webgrad held plan>", "exec"), namespace)
        self.run = namespace["replay"]

    def replay(self, tensors, extra, numbers):
        """The held replay (the generated ``run``), or None where this call cannot run so (device timing on, an
        index check with another flags slot since the last readback, an in-place target something else holds)."""
        return self.run(tensors, extra, numbers)


def replay_source(ins, outs, numbers, result, namespace, buffers, renew=(), checks=()) -> str:
    """The held plan's replay as one function ``replay(T, X, D)`` (``T`` the places' tensors, ``X`` the extra
    inputs, ``D`` the per-step numbers): the inputs' arrays read by position, the outputs' buffers leased in
    one call, the per-step bytes packed in one ``struct.pack``, one submit (the buffers as ``buffers``, the
    device's ``plan_buffers``, writes them), the results built, e.g.::

        def replay(T, X, D):
            if be._timing is not None: return None
            f, s = flags('SoftmaxCrossEntropy', 10)
            if s != 0 or f.storage is not C0: return None
            a0 = T[0]._data; a1 = T[2]._data
            g0 = T[3]; e0 = g0._data
            if count(g0) == G and count(e0) == alone and count(e0.storage) == O and e0.storage.size == 1024:
                R = [e0.storage]
            else:
                R = leases(renewed)
            S = [a0.storage, a1.storage] + leases(sizes) + R
            submit((handle, [(S[0].buffer, S[0].size), ...], pack('=1f', D[0])))
            N[0] += 1
            return (GpuArray(S[2], (), c0), a1, GpuArray(S[3], (256,), c1))

    A ``root`` result (the root of an in-place target that is a view) is that target's buffer at the root's
    shape, where the root's data is over that buffer and nothing else holds it (else the call returns None).
    ``checks``: the index checks the plan's kernels make ((label, size, flags slot, flags storage): a replay
    runs so while the backend gives each the same slot); ``renew``: [(place, size class)] of the last outputs, new ``.grad`` tensors written into the buffers of the
    old ones (``T[place]``) where those are held by nothing but their tensors, which nothing but their places and
    ``T`` hold (as ``_ALONE`` counts them), else leased."""
    lines = ["def replay(T, X, D):", "    if be._timing is not None: return None"]
    for j, (label, size, slot, storage) in enumerate(checks):
        namespace[f"C{j}"] = storage
        lines += [f"    f, s = flags({label!r}, {size!r})",
                  f"    if s != {slot!r} or f.storage is not C{j}: return None"]
    lines += [f"    a{k} = {'T' if kind == 'place' else 'X'}[{i}]._data" for k, (kind, i) in enumerate(ins)]
    alone = [f"count(a{r[1]}) != alone" for r in result if r[0] == "input"]
    if alone:                 # an in-place target something else holds: the Python replay gives it new data
        lines.append(f"    if {' or '.join(alone)}: return None")
    roots = [(k, r) for k, r in enumerate(result) if r[0] == "root"]
    for j, (k, r) in enumerate(roots):   # the root of an in-place target that is a view: its data is over that
        namespace.update({f"W{j}": r[4], "O": _ALONE_STORAGE})   # target's storage, which nothing else holds
        lines += [f"    r{j} = W{j}()", f"    q{j} = None if r{j} is None else r{j}._data",
                  f"    if q{j} is None or count(q{j}) != alone or q{j}.storage is not a{r[1]}.storage"
                  f" or count(a{r[1]}.storage) != O + 1: return None"]
    if renew:
        namespace.update(G=_ALONE_GRAD, O=_ALONE_STORAGE)
        lines += [f"    g{j} = T[{place}]; e{j} = g{j}._data" for j, (place, _) in enumerate(renew)]
        tests = [f"count(g{j}) == G and count(e{j}) == alone and count(e{j}.storage) == O"
                 f" and e{j}.storage.size == {size}" for j, (_, size) in enumerate(renew)]
        reused = "".join(f"e{j}.storage, " for j in range(len(renew)))
        lines += [f"    if {' and '.join(tests)}:", f"        R = [{reused}]", "    else:", "        R = leases(renewed)"]
    stores = "".join(f"a{k}.storage, " for k in range(len(ins)))
    leased = " + leases(sizes)" if len(outs) > len(renew) else ""
    lines.append(f"    S = [{stores}]" + leased + (" + R" if renew else ""))
    if all(code in "fiI" for _, _, code in numbers):   # (host arrays are packed one by one)
        fmt = "=" + "".join(f"{n}{code}" for _, n, code in numbers)
        blob = f"pack({fmt!r}, " + "".join(f"D[{i}], " * n for i, n, _ in numbers) + ")" if numbers else "b''"
    else:
        blob = "b''.join([" + "".join(f"pack_one({code!r}, D[{i}], {n}), " for i, n, code in numbers) + "])"
    lines.append(f"    submit((handle, {buffers([f'S[{k}]' for k in range(len(ins) + len(outs))])}, {blob}))")
    lines.append("    N[0] += 1")
    values = []
    for k, r in enumerate(result):
        if r[0] == "fixed":
            namespace[f"f{k}"] = r[1]
            values.append(f"f{k}")
        elif r[0] == "input":
            values.append(f"a{r[1]}")
        elif r[0] == "root":
            namespace[f"d{k}"] = r[3]
            values.append(f"GpuArray(a{r[1]}.storage, {r[2]!r}, d{k})")
        else:
            namespace[f"d{k}"] = r[2]
            values.append(f"GpuArray(S[{r[0]}], {r[1]!r}, d{k})")
    lines.append(f"    return ({', '.join(values)}{',' if len(values) == 1 else ''})")
    return "\n".join(lines) + "\n"


class HostPlan:
    """A device plan for a device Python drives (wgpu-py): its uniform buffer, its dispatches, and
    their bind groups per set of input/output buffers. ``encode(device, ext, blob)`` writes the
    per-step bytes and records every dispatch into the device's open pass.

    >>> held = step.last.run_steps.handle      # doctest: +SKIP
    >>> len(held.dispatches), len(held.groups)  # doctest: +SKIP
    (29, 2)
    """

    GROUP_SETS = 16      # buffer sets whose bind groups are kept (a few recur; more means churn)

    def __init__(self, device, uniforms: bytes, dispatches, writes, copies=()):
        self.uniform = device.create_uniform_buffer(len(uniforms))
        device.write_buffer(self.uniform, 0, uniforms)
        self.dispatches, self.writes, self.copies, self.groups = dispatches, writes, copies, {}

    def copied(self, ext) -> list:
        """The buffer copies ending a replay (an in-place output into its tensor's buffer), as ``submit`` takes them."""
        return [(src[1], 0, ext[dst[1]][0], 0, n) for src, dst, n in self.copies]

    def bind_groups(self, device, ext):
        key = tuple([b for b, _ in ext])
        groups = self.groups.get(key)
        if groups is None:
            if len(self.groups) >= self.GROUP_SETS:
                self.groups.clear()
            groups = self.groups[key] = [
                device.create_bind_group(pipe, [ext[r[1]] if r[0] == EXT else r[1:] for r in refs], self.uniform,
                                         UNIFORM_SLOT)
                for pipe, _, _, _, _, refs in self.dispatches]
        return groups

    def encode(self, device, ext, blob) -> None:
        for ref, offset, start, n in self.writes:
            target = ext[ref[1]][0] if ref[0] == EXT else self.uniform if ref[0] == UNIFORMS else ref[1]
            device.write_buffer(target, offset, blob[start:start + n])
        dispatch = device.dispatch
        for (pipe, offset, x, y, z, _), group in zip(self.dispatches, self.bind_groups(device, ext)):
            dispatch(pipe, group, offset, x, y, z)


def _fixed(storage) -> tuple:
    return FIXED, storage.buffer, storage.size


def _span(a) -> int:
    """The bytes an in-place output's copy moves: ``a``'s data, to a whole word (within any buffer holding it)."""
    return (a.nbytes + 3) & ~3


def _in_place(replaced, values, made, where, ins, needed, roots) -> tuple:
    """({output slot: input slot} of the outputs ``replaced`` allows that the held plan writes into their
    input's buffer, {slot: (output slot, weak reference)} of the roots that see them): a buffer a dispatch made
    (the plan's own from now on, copied into the input's at the end of each replay), of the input's shape, dtype
    and size, the input handed over, shared by no other input, replaced by no other output, and the output's
    buffer by no other result -- but the new data of the input's root where the input is a view (a parameter made
    by ``reshape``: ``roots`` the slots written into tensors held elsewhere), which then becomes the input's
    buffer seen at the root's shape, as it was."""
    out, taken, seen = {}, set(), {}
    for s, i in replaced.items() if _ALONE is not None else ():
        a, b = values[s], values[i]
        ka, kb = id(a.storage), id(b.storage)
        others = [n for n in needed if n != s and id(values[n].storage) == ka]
        if (ka in made and not made[ka][1] and ka not in where and kb in where and kb not in taken
                and a.shape == b.shape and a.dtype is b.dtype and a.storage.size == b.storage.size
                and sum(id(x.storage) == kb for x in ins) == 1
                and all(n in roots and _holds(roots[n], kb) for n in others)):
            out[s] = i
            taken.add(kb)
            seen.update({n: (s, roots[n]) for n in others})
    return out, seen


def _holds(ref, key) -> bool:
    """Whether the tensor weakly held by ``ref`` holds (now) data in the storage of id ``key``."""
    t = ref()
    return t is not None and id(t._data.storage) == key


def _refs_when_alone():
    """What ``sys.getrefcount`` reads in a held plan's generated replay (``replay_source``) when nothing else holds
    what it counts: (``a0 = T[0]._data``: an array held by its tensor alone; ``g0 = T[3]``: a ``.grad`` held by its
    owner and ``T`` alone; ``e0.storage``: a storage held by its array alone); Nones where there are no refcounts
    or other threads run at once (a free-threaded build): then nothing is written in place."""
    if not hasattr(sys, "getrefcount") or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None, None, None

    class Holder:
        __slots__ = ("_data", "grad")
    namespace = {"count": sys.getrefcount}
    exec("def replay(T):\n    a0 = T[0]._data\n    g0 = T[1]; e0 = g0._data\n"
         "    return count(a0), count(g0), count(e0.storage)", namespace)
    t, owner = Holder(), Holder()
    t._data, owner.grad = GpuArray(None, (1,), None), Holder()
    owner.grad._data = GpuArray(Holder(), (1,), None)
    return namespace["replay"]([t, owner.grad])     # (the .grad held by its owner and the list alone)


_ALONE, _ALONE_GRAD, _ALONE_STORAGE = _refs_when_alone()


def _renewable(grads, values, made, where, tensors, needed) -> dict:
    """{output slot: place} of the outputs ``grads`` allows that the held plan may write into the buffer of the
    ``.grad`` they replace (``tensors[place]``, when it holds one of the output's shape, dtype and size, which no
    dispatch reads): a buffer a dispatch made, handed out, and the output's buffer no other result's."""
    out = {}
    for s, place in grads.items() if _ALONE_GRAD is not None else ():
        a, old = values[s], tensors[place]
        key = id(a.storage)
        if (old is not None and key in made and not made[key][1] and key not in where
                and id(old._data.storage) not in where                  # (an old .grad the step reads: it stays)
                and old._data.shape == a.shape and old._data.dtype is a.dtype
                and old._data.storage.size == a.storage.size
                and sum(id(values[n].storage) == key for n in needed) == 1):
            out[s] = place
    return out


def _shared(log, where, pinned=()) -> dict:
    """{id(storage): the storage whose buffer it uses} for the step's own intermediates (made by a dispatch,
    not handed out): one whose first dispatch comes after another's last takes that one's buffer (as the
    eager batch reuses the buffers it released), so a plan holds about what a step keeps alive at once;
    ``pinned`` ones (read after the dispatches) keep their own."""
    first, last, store = {}, {}, {}
    uploaded = {id(a.storage) for a, upload in log.allocs if upload}
    made = {id(a.storage) for a, _ in log.allocs} - uploaded - set(pinned)
    for j, (_, arrays, _) in enumerate(log.records):
        for a in arrays:
            key = id(a.storage)
            if key in made and key not in where:
                first.setdefault(key, j)
                last[key] = j
                store[key] = a.storage
    free, busy, out = {}, [], {}                 # size -> [storage]; [(last use, storage)]
    for key in sorted(first, key=first.get):
        busy.sort(key=lambda e: e[0])
        while busy and busy[0][0] < first[key]:
            _, rep = busy.pop(0)
            free.setdefault(rep.size, []).append(rep)
        pool = free.get(store[key].size)
        rep = pool.pop() if pool else store[key]
        out[key] = rep
        busy.append((last[key], rep))
    return out


def _other(v):
    """A number unlike ``v`` of its type (to find where ``v`` went)."""
    return v * 0.5 + 0.375 if type(v) is float else v + 12345


def _words(a: bytes, b: bytes, numbers):
    """[(word, number index, code)] explaining every 32-bit word where uniforms ``a`` and ``b`` differ by
    one of ``numbers`` ((index, value in a, value in b)) written as a float or an int; None if one is not."""
    if len(a) != len(b):
        return None
    wa, wb = memoryview(a).cast("I"), memoryview(b).cast("I")
    out = []
    for w in range(len(wa)):
        if wa[w] == wb[w]:
            continue
        hit = next(((w, i, code) for i, va, vb in numbers for code in _WAYS
                    if _packs(code, va, wa[w]) and _packs(code, vb, wb[w])), None)
        if hit is None:
            return None
        out.append(hit)
    return out


_WAYS = {"f": lambda v: array.array("f", [v]), "i": lambda v: array.array("i", [v]),
         "I": lambda v: array.array("I", [v])}
_ARRAYS = {"float32": "F", "int32": "J", "int64": "J", "bool": "B"}     # a tensor's dtype -> code of a host array
_ARRAY_TYPES = {"F": "float32", "J": "int32", "B": "uint32"}            # code -> numpy type of its words
_ARRAY_CODES, _ARRAY_CASTS = {"F": "f", "J": "i", "B": "I"}, {"F": float, "J": int, "B": int}   # (lists)


def _pack(code, v, n=1) -> bytes:
    """Number ``v`` written as a uniform or tensor word ``code`` (see ``_WAYS``), ``n`` times; or, for an
    array code (``_ARRAY_TYPES``), the ``n`` values of host array ``v`` (a Generator's draws) as words."""
    if code in _ARRAY_TYPES:
        if isinstance(v, list):     # drawn without numpy
            return array.array(_ARRAY_CODES[code], [_ARRAY_CASTS[code](x) for x in v]).tobytes()
        return v.astype(_ARRAY_TYPES[code]).tobytes()
    return _WAYS[code](v).tobytes() * n


def _packs(code, v, word) -> bool:
    try:
        return memoryview(_pack(code, v)).cast("I")[0] == word
    except (OverflowError, TypeError):
        return False


def resident_plan(be, plan, needed, fallback, steps, replaced=None, grads=None, roots=None):
    """The replay of ``plan``'s ``steps`` on ``be`` held by the device (see the module's doc), or
    ``fallback`` (the generated steps function) where the device cannot hold plans or a graph break
    between pieces of the plan reads a value back; ``replaced``, ``grads`` and ``roots`` as ``Resident`` takes them."""
    if getattr(be.device, "create_plan", None) is None or any(step.check is not None for step in steps):
        return fallback
    return Resident(be, plan, needed, fallback, steps, replaced, grads, roots)

__all__ = ["Resident", "HostPlan", "resident_plan", "walk"]
