"""The tracer: run a step eagerly once while recording every backend computation it makes.

While a ``Tracer`` is active, every entry of the kernel tables is swapped for a recording
wrapper, so whatever computes is seen: ops through ``run_kernel``, a backward pass's backward
kernels and gradient sums, in-place writes, view refreshes. Nothing of this
costs the eager engine anything when no trace runs: the tables hold the plain kernels then.

A call is recorded as (kernel, input objects, attrs, output objects). Backend data are values
(no kernel writes into an existing array), so an object's identity names its value: the plan
builder turns objects into slots. Only the outermost call is recorded (a kernel that calls
another kernel replays as one). Also, while tracing:

* a readback (``item()``, ``tolist()``, ``bool(t)``, ``numpy()``, printing a tensor) is a *graph
  break*: what Python does with a tensor's values cannot be captured; it is noted with where it
  happened (``fullgraph=True`` raises ``GraphBreak`` there) and recorded as a ``Check`` in the calls:
  the plan splits there into pieces, and a replay reads the value back at that point and goes on
  only if it is the one traced (the Python that ran on it would do the same again);
* kernels whose output shape depends on values (``NonZero``) are graph breaks too, recorded as a
  ``Check`` of their output's shape;
* the numbers ``per_step`` functions return (and each generator's next seed) are noted as dynamic;
* buffer donation and the scalar-constant cache are off, so every scalar enters as a kernel call.

>>> import webgrad as wg
>>> with Tracer() as tr:
...     y = wg.ones(2) * 3
>>> [c.name for c in tr.calls]
['Fill', 'Fill', 'Mul']
"""
from __future__ import annotations

import gc
import os
from contextlib import contextmanager
import sys
import traceback

from .. import kernel_names as K
from .. import random as _random
from ..ops import common as _common
from ..registry import _backend_instances, _kernels
from ..tensor import Tensor
from .. import per_step as step_numbers

DATA_DEPENDENT = frozenset({K.NONZERO})   # output shapes that depend on the input's values
_READBACKS = ("to_list", "read", "to_numpy", "read_async")
_UPLOADS = ("upload", "from_array")   # tensors made from Python data: constants of the plan
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class GraphBreak(RuntimeError):
    """A compiled function with ``fullgraph=True`` did something a plan cannot hold (a readback such
    as ``.item()`` or a data-dependent shape); the message names it and where it happened."""


class Recorded:
    """One recorded computation: ``fn(*inputs, **attrs) -> outputs`` (a tuple when ``multi``); ``replay``:
    ``fn(*inputs) -> outputs`` re-recording its captured dispatches (GPU backends, see ``capture``)."""

    __slots__ = ("name", "fn", "inputs", "attrs", "outputs", "multi", "replay")

    def __init__(self, name, fn, inputs, attrs, outputs, multi):
        self.name, self.fn, self.inputs, self.attrs, self.outputs, self.multi = name, fn, inputs, attrs, outputs, multi
        self.replay = None   # where the backend captured the call's dispatches: a function replaying them


class Check:
    """A graph break kept in the calls: ``fn(data)`` is a token of what Python saw there (the bytes
    of a readback, the shape of a data-dependent result); a replay goes on only where it is ``token``."""

    __slots__ = ("name", "fn", "inputs", "token", "what", "where", "seen")

    def __init__(self, fn, data, token, what, where, seen):
        self.name, self.fn, self.inputs, self.token, self.what, self.where = "Break", fn, (data,), token, what, where
        self.seen = seen   # what Python got there when traced (shortened, for explain())


def read_token(read):
    """A readback's token function: ``data`` -> (shape, dtype, its bytes) through the backend's
    ``read`` (bytes compare bit for bit: NaN equals itself, -0.0 differs from 0.0)."""
    def token(data):
        flat, shape, dtype = read(data)
        return tuple(shape), dtype.name, bytes(flat) if type(flat) is memoryview else tuple(flat)
    return token


def shape_token(data) -> tuple:
    """A data-dependent kernel's token: its result's shape."""
    return tuple(data.shape)


def user_frame() -> str:
    """``file:line in function: code`` of the innermost frame outside webgrad (where a user's code broke a graph)."""
    for frame in reversed(traceback.extract_stack()[:-1]):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE):
            return f"{frame.filename}:{frame.lineno} in {frame.name}: {(frame.line or '').strip()}"
    return "inside webgrad"


class _NeverHit(dict):
    """Stands in for ``scalar_tensor``'s constant cache while tracing: it never finds a constant and
    takes none (its length reads as full), so every Python number becomes a recorded Fill."""

    def get(self, key, default=None):
        return default

    def __len__(self):
        return sys.maxsize   # 2**31 - 1 under Pyodide (wasm32): len() must fit a Py_ssize_t


class Tracer:
    """Context manager recording the computations run inside it (see the module's doc).

    ``calls``: the ``Recorded`` computations in order; ``breaks``: (what, where) graph breaks;
    ``dynamic``: id of a per-step number -> its index among ``per_step_values``; ``prologue``: the
    (function, args, count) of each ``per_step`` call; ``keep``: every object seen (held so that
    no id is reused while tracing); ``fullgraph``: raise ``GraphBreak`` at the first break."""

    def __init__(self, fullgraph: bool = False):
        self.fullgraph = fullgraph
        self.calls, self.breaks, self.prologue, self.keep = [], [], [], []
        self.dynamic, self.unsafe, self.unreplayable = {}, [], []
        self.depth = self.uploads = 0
        self._undo = []

    # ------------------------------------------------------------ entering and leaving
    def __enter__(self):
        gc.collect()   # so that ids of dead objects are not taken for live ones below
        for be_name, table in _kernels.items():
            for name, fn in list(table.items()):
                self._swap(table, name, self._kernel(name, fn, be_name))
        for be in list(_backend_instances.values()):
            self._backend(be)
        self._swap_attr(_common, "_CONSTANTS", _NeverHit())
        self._swap_attr(_random.Generator, "_draw", self._draws(_random.Generator._draw))
        step_numbers._recorder[0] = self.note
        return self

    def __exit__(self, *exc):
        step_numbers._recorder[0] = None
        for undo in reversed(self._undo):
            undo()
        self._undo = []
        return False

    @contextmanager
    def unrecorded(self):
        """What runs inside is not recorded (as a kernel called by a kernel)."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def _swap(self, table, name, new):
        old = table[name]
        table[name] = new

        def undo():
            if table.get(name) is new:
                table[name] = old
        self._undo.append(undo)

    def _swap_attr(self, obj, name, new):
        had = name in vars(obj)
        old = vars(obj).get(name)
        setattr(obj, name, new)
        self._undo.append(lambda: setattr(obj, name, old) if had else delattr(obj, name))

    def _backend(self, be):
        """Break the graph at the backend's readbacks, decline donations."""
        read = getattr(be, "read", None)
        token = None if read is None else read_token(read)
        for name in _READBACKS:
            fn = getattr(be, name, None)
            if fn is not None:
                self._swap_attr(be, name, self._readback(name, fn, token))
        for name in _UPLOADS:
            fn = getattr(be, name, None)
            if fn is not None:
                self._swap_attr(be, name, self._upload(fn))
        if getattr(be, "donate", None) is not None:
            self._swap_attr(be, "donate", lambda data: None)

    # ------------------------------------------------------------ recording
    def _kernel(self, name, fn, be_name):
        def recording(*args, **attrs):
            if self.depth:
                return fn(*args, **attrs)
            capture = getattr(_backend_instances.get(be_name), "capture", None)
            self.depth += 1
            try:
                if capture is None:
                    out = fn(*args, **attrs)
                else:
                    with capture() as dispatches:
                        out = fn(*args, **attrs)
            finally:
                self.depth -= 1
            what = f"kernel {name} (its output's shape depends on the input's values)"
            if name in DATA_DEPENDENT:
                self.graph_break(what)
            self.record(name, fn, args, attrs, out)
            if name in DATA_DEPENDENT:   # replayed as a kernel (captured dispatches would keep the traced shape)
                data = out[0] if type(out) is tuple else out
                self.check(shape_token, data, what, f"shape {tuple(data.shape)}")
            elif capture is not None:
                self.calls[-1].replay = dispatches.replayer(args, out)
            return out
        recording.__wrapped__ = fn
        return recording

    def _readback(self, name, fn, token):
        def reading(*args, **kwargs):
            if self.depth:
                return fn(*args, **kwargs)
            what = f"a readback ({name}: Tensor.item(), tolist(), bool(), numpy() or printing)"
            self.graph_break(what)
            if token is None or name == "read_async":
                self.unreplayable.append(f"{what}: the backend cannot read it back for a replay to check")
                return fn(*args, **kwargs)
            out = fn(*args, **kwargs)
            self.check(token, args[0], what, out)
            return out
        return reading

    def check(self, fn, data, what, seen) -> None:
        """Record a graph break as a ``Check`` of ``data`` (the token is taken now, unrecorded)."""
        with self.unrecorded():
            token = fn(data)
        self.keep.append(data)
        seen = seen if type(seen) is str else repr(seen)
        seen = seen if len(seen) < 60 else seen[:56] + " ..."
        self.calls.append(Check(fn, data, token, what, self.breaks[-1][1], seen))

    def _upload(self, fn):
        def uploading(*args, **kwargs):
            if not self.depth:
                self.uploads += 1
            return fn(*args, **kwargs)
        return uploading

    def _draws(self, draw):
        """A generator's draws become per-step values: each replay draws afresh, in the same order."""
        tracer = self

        def traced_draw(generator, *args):
            return tracer.note(draw, (generator, *args), draw(generator, *args))
        return traced_draw

    def record(self, name, fn, args, attrs, out) -> None:
        multi = type(out) is tuple
        self.keep.append((args, out))
        self.calls.append(Recorded(name, fn, args, attrs, out if multi else (out,), multi))

    def note(self, fn, args, values):
        """Note a ``per_step`` call; returns its numbers as fresh objects (so that no other number in
        the step is the same object: identity ties a kernel attribute to its per-step number)."""
        many = type(values) is tuple
        fresh = tuple([_fresh(v, self) for v in (values if many else (values,))])
        base = sum(count for _, _, count in self.prologue)
        for i, v in enumerate(fresh):
            self.dynamic[id(v)] = base + i
        self.keep.append(fresh)
        self.prologue.append((fn, args, len(fresh)))
        return fresh if many else fresh[0]

    def graph_break(self, what: str) -> None:
        where = user_frame()
        self.breaks.append((what, where))
        if self.fullgraph:
            raise GraphBreak(f"compile(fullgraph=True): the graph breaks at {what}, at {where}; move it out of "
                             f"the compiled function or compile with fullgraph=False")


def _fresh(v, tracer):
    """``v`` as a new object of equal value (floats and ints outside CPython's small-int cache); a
    value that cannot be made unique is noted in ``tracer.unsafe`` (its plan will not replay)."""
    if type(v) is float:
        return v * 1.0
    if type(v) is int and not -5 <= v <= 256:
        return (v + 1) - 1
    if isinstance(v, (int, float)):
        tracer.unsafe.append(v)
    return v


def live_tensors() -> dict:
    """id -> (tensor, its data, its version) for every live Tensor (a full scan of the garbage
    collector's objects: done once per trace, at its start)."""
    out = {}
    for o in gc.get_objects():
        if issubclass(type(o), Tensor):   # not isinstance: that may touch lazy module attributes of other libraries
            out[id(o)] = (o, o._data, o._version)
    return out


__all__ = ["Tracer", "GraphBreak", "Recorded", "Check", "read_token", "shape_token", "live_tensors", "user_frame",
           "DATA_DEPENDENT"]
