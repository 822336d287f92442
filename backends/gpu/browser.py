"""The browser device: the WebGPU device interface (``webgrad.backends.gpu.device``) on the
browser's ``navigator.gpu``, reached from Pyodide through its JS FFI. Its backend is ``webgpu``.

The hot calls go through the small JS helpers of ``webgrad/web/gpu.js`` (shipped in the wheel),
which take positional arguments and build every WebGPU descriptor on the JS side.

WebGPU in the browser is asynchronous; Python code is not. So:

* ``await init()`` requests the adapter and device (the webgrad page loader does it at start-up;
  elsewhere the backend does it on first use through ``run_sync`` when JSPI allows).
* ``await t.read()`` reads back through ``mapAsync`` anywhere. ``t.tolist()``, ``t.item()`` and
  ``t.numpy()`` block on the same promise with ``pyodide.ffi.run_sync``, which needs JSPI
  (Chrome 137+) and Python entered through ``runPythonAsync``; elsewhere they raise
  :class:`SyncReadbackError`, which names ``await t.read()``.
* Validation errors are collected per submitted batch and raised (as :class:`GpuError`) by the
  next readback; WGSL compile errors are raised when the pipeline is made (with JSPI) or by the
  next readback, located in the user's source by ``program.compile_error``.
"""
from __future__ import annotations

from array import array
from importlib import resources

from .device import GpuError
from .program import compile_error

CPU_PRIORITY = 0
_CPU_VENDORS = ("swiftshader", "llvmpipe", "lavapipe", "softpipe")
_state: dict = {}          # "helpers": the gpu.js object; "gpu": {adapter, device, info, limits} after init()


class SyncReadbackError(RuntimeError):
    """Raised by sync readback (``tolist``/``item``/``numpy``) where the browser cannot block."""


def helpers():
    """The JS helper object of ``web/gpu.js`` (evaluated once)."""
    h = _state.get("helpers")
    if h is None:
        from pyodide.code import run_js
        source = resources.files("webgrad.web").joinpath("gpu.js").read_text()
        h = _state["helpers"] = run_js(source)
    return h


def can_block() -> bool:
    """Whether ``run_sync`` works here (JSPI, and Python entered through ``runPythonAsync``)."""
    from pyodide.ffi import can_run_sync
    return can_run_sync()


async def init(power_preference: str = "high-performance") -> dict:
    """Request the browser's WebGPU adapter and device (once); returns the adapter's description.

    >>> from webgrad.backends.gpu import browser
    >>> await browser.init()        # doctest: +SKIP
    {'vendor': 'google', 'architecture': 'swiftshader', ...}
    """
    if "gpu" not in _state:
        _state["gpu"] = await helpers().requestDevice(power_preference)
    return _state["gpu"].info.to_py()


class Buffer:
    """A GPUBuffer's id in gpu.js's table, hashable (the runtime keys its caches by buffer)."""

    __slots__ = ("id",)

    def __init__(self, buffer_id: int):
        self.id = buffer_id


class BindGroup:
    """A bind group made by the next batch gpu.js runs; its id is forgotten there once this dies."""

    __slots__ = ("id", "dead")

    def __init__(self, group_id: int, dead: list):
        self.id, self.dead = group_id, dead

    def __del__(self):
        self.dead.append(self.id)


# the op words of gpu.js's run(): a batch is one array of them, sent in one call at submit
_BIND, _DISPATCH, _COPY, _UNBIND, _WRITE, _DESTROY = 0, 1, 2, 3, 4, 5


class BrowserDevice:
    """``navigator.gpu``'s device behind the interface the GPU backend needs (see device.py).

    Bind groups, dispatches, copies, buffer writes (their bytes copied at once) and buffer
    destructions are appended to one array of words and handed to gpu.js at ``submit``, with the
    written bytes and the uniform data: a batch of any length is one call from Python into
    JavaScript (a compiled step's replay included). Only a new buffer or pipeline is a call of its own.

    >>> dev = BrowserDevice()      # doctest: +SKIP
    >>> dev.info["architecture"]   # doctest: +SKIP
    'swiftshader'
    """

    name = "webgpu"

    def __init__(self):
        from pyodide.ffi import JsException, run_sync
        self._run_sync, self._js_error = run_sync, JsException
        if "gpu" not in _state:
            if not can_block():
                raise RuntimeError("webgpu: the WebGPU device is not initialised; run "
                                   "`await webgrad.backends.gpu.browser.init()` first (webgrad's page loader does)")
            try:
                run_sync(init())
            except JsException as e:
                raise RuntimeError(f"webgpu: {_js_message(e)}") from None
        gpu = _state["gpu"]
        self.device = gpu.device
        self.info = gpu.info.to_py()
        self.limits = gpu.limits.to_py()
        self.adapter_features = frozenset(f for f in ("shader-f16",) if gpu.adapter.features.has(f))
        self.features = frozenset(gpu.features.to_py())   # what the device was granted (float16 with shader-f16)
        r = self.js = helpers().runner(self.device)
        # bound once: each is one FFI call with positional arguments
        self._buffer, self._destroy = r.buffer, r.destroy
        self._layout_js, self._pipeline, self._run = r.layout, r.pipeline, r.run
        self._drain, self._read, self._plan = r.drain, r.read, r.plan
        self._layouts: dict = {}
        self._unchecked: list = []   # (code, label, check promise) of pipelines made without JSPI
        self._ops = array("I")       # the open batch's words (see gpu.js's OP)
        self._data = bytearray()     # the bytes its writes copy
        self._uniform = None         # (buffer, data) written by the next submit
        self._dead: list = []        # ids of bind groups that died (forgotten by the next batch)
        self._next_group = 0

    @property
    def is_cpu(self) -> bool:
        """True on a software adapter (SwiftShader): available, and still preferred over numpy here."""
        text = " ".join(str(v) for v in self.info.values()).lower()
        return bool(self.info.get("fallback")) or any(v in text for v in _CPU_VENDORS)

    # ------------------------------------------------------------ buffers
    def create_buffer(self, size: int) -> Buffer:
        return Buffer(self._buffer(size, 0))

    def create_uniform_buffer(self, size: int) -> Buffer:
        buf = Buffer(self._buffer(size, 1))
        self._uniform = (buf, None)
        return buf

    def create_staging_buffer(self, size: int) -> Buffer:
        return Buffer(self._buffer(size, 2))

    def write_buffer(self, buf: Buffer, offset: int, data) -> None:
        """Write ``data`` (copied now) before the next batch runs; the uniform buffer's contents are
        the runtime's, written whole just before the batch's submit."""
        if buf is self._uniform[0] and offset == 0:
            self._uniform = (buf, data)
            return
        start = len(self._data)
        self._data += data
        self._ops.extend((_WRITE, buf.id, offset, start, len(self._data) - start))

    def destroy_buffer(self, buf: Buffer) -> None:
        """Destroy ``buf`` once the open batch (which may write it) is submitted."""
        if self._ops:
            self._ops.extend((_DESTROY, buf.id))
        else:
            self._destroy(buf.id)

    # ------------------------------------------------------------ pipelines and bind groups
    def create_pipeline(self, code: str, entry: str, n_read: int, n_write: int, label: str):
        """A compute pipeline's id (bindings as in native.py); a compile error raises here with JSPI,
        else at the next readback."""
        key = (n_read, n_write)
        lay = self._layouts.get(key)
        if lay is None:
            lay = self._layouts[key] = self._layout_js(n_read, n_write)
        handle, check = self._pipeline(code, entry, lay, label)
        if can_block():
            message = self._run_sync(check)
            if message:
                raise _compile_failure(label, message)
        else:
            self._unchecked.append((code, label, check))
        return handle

    def create_bind_group(self, pipeline: int, buffers, uniform: Buffer, uniform_size: int) -> BindGroup:
        """A bind group of ``pipeline`` on ``buffers`` ((Buffer, size) pairs), made by the next batch."""
        ops, dead = self._ops, self._dead
        while dead:
            ops.extend((_UNBIND, dead.pop()))
        gid, self._next_group = self._next_group, self._next_group + 1
        ops.extend((_BIND, gid, pipeline, uniform_size, len(buffers)))
        for buf, size in buffers:
            ops.extend((buf.id, size))
        return BindGroup(gid, dead)

    def dispatch(self, pipeline: int, bind_group: BindGroup, uniform_offset: int, x: int, y: int, z: int) -> None:
        """Record one dispatch into the open batch."""
        self._ops.extend((_DISPATCH, pipeline, bind_group.id, uniform_offset, x, y, z))

    # ------------------------------------------------------------ compiled plans (resident.py)
    def create_plan(self, uniforms: bytes, dispatches, writes, copies=()) -> int:
        """A compiled plan held by gpu.js (its id): uniform blocks, dispatches, per-step writes and the copies
        ending a replay (an in-place output into its tensor's buffer) as words."""
        words = array("I", [len(dispatches)])
        for pipe, offset, x, y, z, refs in dispatches:
            words.extend((pipe, offset, x, y, z, len(refs)))
            for ref in refs:
                words.extend(_plan_ref(ref))
        words.append(len(writes))
        for ref, offset, start, n in writes:
            words.extend((*_plan_ref(ref)[:2], offset, start, n))
        words.append(len(copies))
        for src, dst, n in copies:
            words.extend((*_plan_ref(src), *_plan_ref(dst), n))
        return self._plan(uniforms, words)

    @staticmethod
    def plan_buffers(storages: str) -> str:
        """The expression a held plan's generated replay hands its buffers over with (``resident``), from
        the expressions of their ``storages``: gpu.js's words, [id, size] per buffer.

        >>> BrowserDevice.plan_buffers(["S[0]"])
        "array('I', (S[0].buffer.id, S[0].size, ))"
        """
        return "array('I', (" + "".join(f"{s}.buffer.id, {s}.size, " for s in storages) + "))"

    # ------------------------------------------------------------ recording and submission
    def submit(self, copies=(), plan=None) -> None:
        """Hand the batch (bind groups, dispatches, ``copies``, uniforms) to gpu.js: one call; ``plan``
        (handle, the buffer id and size words of its inputs and outputs as ``plan_buffers`` writes them,
        per-step bytes): a compiled plan's replay encoded after the batch, in the same call."""
        ops = self._ops
        for src, so, dst, do, n in copies:
            ops.extend((_COPY, src.id, so, dst.id, do, n))
        while self._dead:
            ops.extend((_UNBIND, self._dead.pop()))
        buf, data = self._uniform
        written = self._data or None
        if ops:                  # (handed to JavaScript, the next batch gets new ones; an empty one is not handed)
            self._ops = array("I")
        if written:
            self._data = bytearray()
        if data is not None:
            self._uniform = (buf, None)
        if plan is None:
            self._run(ops or None, buf.id, data, written)
            return
        self._run(ops or None, buf.id, data, written, plan[0], plan[1], plan[2] or None)

    def discard(self) -> None:
        """Drop the open batch after an error, keeping its bind groups (the runtime caches them)."""
        self._ops = _bind_groups_of(self._ops)
        self._uniform, self._data = (self._uniform[0], None), bytearray()

    def validate(self, records) -> None:
        """Nothing to do: the browser reports a batch's validation errors at the next readback."""

    # ------------------------------------------------------------ readback
    def read_staging(self, staging, size: int) -> bytes:
        if not can_block():
            raise SyncReadbackError(
                "webgpu: synchronous readback (tolist(), item(), numpy(), print) needs JSPI (Chrome 137+) and Python "
                "run through runPythonAsync; use `await t.read()` instead")
        return self._run_sync(self._read_checked(staging, size))

    async def read_staging_async(self, staging, size: int) -> bytes:
        return await self._read_checked(staging, size)

    async def _read_checked(self, staging, size: int) -> bytes:
        """Raise the compile errors of pipelines made without JSPI, then read back (raising a
        submitted batch's validation errors)."""
        while self._unchecked:
            code, label, check = self._unchecked.pop(0)
            message = await check
            if message:
                await self._drain()                 # the batch that used it failed too: same cause
                raise compile_error(code, _compile_failure(label, message)) from None
        try:
            return (await self._read(staging.id, size)).to_bytes()
        except self._js_error as e:
            raise GpuError(f"webgpu: {_js_message(e)}") from None

    def errors(self):
        """The exception types of this runtime that mean a validation/device error."""
        return (self._js_error,)


_WORDS = {_DISPATCH: 7, _COPY: 6, _UNBIND: 2, _WRITE: 5, _DESTROY: 2}


def _bind_groups_of(ops):
    """The BIND, UNBIND and DESTROY ops of a batch's words (what must still reach gpu.js if it is dropped)."""
    kept, i = array("I"), 0
    while i < len(ops):
        n = 5 + 2 * ops[i + 4] if ops[i] == _BIND else _WORDS[ops[i]]
        if ops[i] in (_BIND, _UNBIND, _DESTROY):
            kept.extend(ops[i:i + n])
        i += n
    return kept


def _plan_ref(ref) -> tuple:
    """A plan's buffer reference as gpu.js's three words: (0, id, size), (1, index, 0) or (2, 0, 0)."""
    if ref[0] == 0:
        return 0, ref[1].id, ref[2]
    return (1, ref[1], 0) if ref[0] == 1 else (2, 0, 0)


def _compile_failure(label: str, message: str) -> GpuError:
    # "wgsl:LINE:COL: error: ..." lines, which program.compile_error locates in a user's source
    return GpuError(f"webgpu: kernel {label!r} failed to compile: {message}")


def _js_message(e) -> str:
    text = str(e)
    return text.split("Error: ", 1)[-1] if text.startswith(("Error: ", "JsException")) else text


def register_browser(priority: int = CPU_PRIORITY + 1) -> None:
    """Register the ``webgpu`` backend (the browser's WebGPU) and its kernels; by default above
    ``cpu``, so it is chosen whenever the browser grants an adapter.

    >>> from webgrad.backends.gpu.browser import register_browser
    >>> register_browser()           # doctest: +SKIP
    """
    from webgrad.registry import register_backend

    from . import GpuBackend, register_kernels

    def factory():
        return GpuBackend(BrowserDevice(), "webgpu")
    register_backend("webgpu", factory, priority)
    register_kernels("webgpu")


__all__ = ["BrowserDevice", "SyncReadbackError", "can_block", "init", "register_browser"]
