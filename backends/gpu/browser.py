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
    """A GPUBuffer behind a hashable handle: the runtime keys its caches by buffer, and Pyodide's
    JsProxy objects are unhashable."""

    __slots__ = ("js",)

    def __init__(self, js_buffer):
        self.js = js_buffer


class BrowserDevice:
    """``navigator.gpu``'s device behind the interface the GPU backend needs (see device.py).

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
        r = helpers().runner(self.device)
        # bound once: each is one FFI call with positional arguments on the hot path
        self._buffer, self._write, self._destroy = r.buffer, r.write, r.destroy
        self._layout_js, self._pipeline, self._bind_group = r.layout, r.pipeline, r.bindGroup
        self.dispatch, self._submit, self.discard = r.dispatch, r.submit, r.discard
        self._drain, self._read = r.drain, r.read
        self._layouts: dict = {}
        self._unchecked: list = []   # (code, label, check promise) of pipelines made without JSPI

    @property
    def is_cpu(self) -> bool:
        """True on a software adapter (SwiftShader): available, and still preferred over numpy here."""
        text = " ".join(str(v) for v in self.info.values()).lower()
        return bool(self.info.get("fallback")) or any(v in text for v in _CPU_VENDORS)

    # ------------------------------------------------------------ buffers
    def create_buffer(self, size: int) -> Buffer:
        return Buffer(self._buffer(size, 0))

    def create_uniform_buffer(self, size: int) -> Buffer:
        return Buffer(self._buffer(size, 1))

    def create_staging_buffer(self, size: int) -> Buffer:
        return Buffer(self._buffer(size, 2))

    def write_buffer(self, buf: Buffer, offset: int, data) -> None:
        self._write(buf.js, offset, data)

    def destroy_buffer(self, buf: Buffer) -> None:
        self._destroy(buf.js)

    # ------------------------------------------------------------ pipelines and bind groups
    def create_pipeline(self, code: str, entry: str, n_read: int, n_write: int, label: str):
        """A compute pipeline (bindings as in native.py); a compile error raises here with JSPI,
        else at the next readback."""
        key = (n_read, n_write)
        lay = self._layouts.get(key)
        if lay is None:
            lay = self._layouts[key] = self._layout_js(n_read, n_write)
        handle, check = self._pipeline(code, entry, lay, label)     # handle: JS [pipeline, layout]
        if can_block():
            message = self._run_sync(check)
            if message:
                raise _compile_failure(label, message)
        else:
            self._unchecked.append((code, label, check))
        return handle

    def create_bind_group(self, pipeline, buffers, uniform, uniform_size: int):
        flat = [x for buf, size in buffers for x in (buf.js, size)]
        return self._bind_group(pipeline, uniform.js, uniform_size, *flat)

    def dispatch(self, pipeline, bind_group, uniform_offset: int, x: int, y: int, z: int) -> None:
        """Record one dispatch (replaced per instance by the JS helper, which takes the JS pipeline)."""

    # ------------------------------------------------------------ recording and submission
    def submit(self, copies=()) -> None:
        self._submit(*[x for src, so, dst, do, n in copies for x in (src.js, so, dst.js, do, n)])

    def discard(self) -> None:
        """Drop the open pass after an error (bound to the JS helper per instance)."""

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
            return (await self._read(staging.js, size)).to_bytes()
        except self._js_error as e:
            raise GpuError(f"webgpu: {_js_message(e)}") from None

    def errors(self):
        """The exception types of this runtime that mean a validation/device error."""
        return (self._js_error,)


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
