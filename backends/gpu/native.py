"""The native device: the WebGPU device interface (``webgrad.backends.gpu.device``) on wgpu-py.

It asks for limits that browsers also grant (8 storage buffers per shader stage), so the
kernels that run here also run under ``navigator.gpu``, and turns wgpu validation errors
into :class:`GpuError`\\ s that name the kernel that failed.
"""
from __future__ import annotations

import wgpu

from .device import GpuError, device_failure, is_lost
from .host import quiet_vulkan_loader

_STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
_UNIFORM = wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
_STAGING = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
_COMPUTE = wgpu.ShaderStage.COMPUTE

# limits every WebGPU implementation grants by default, except the buffer sizes, which we
# raise to what the adapter allows (browsers grant those on request too)
LIMITS = {"max-storage-buffers-per-shader-stage": 8, "max-compute-workgroup-storage-size": 16384,
          "max-compute-invocations-per-workgroup": 256, "max-compute-workgroups-per-dimension": 65535}
_RAISED = ("max-storage-buffer-binding-size", "max-buffer-size")
_CPU_VENDORS = ("llvmpipe", "lavapipe", "swiftshader", "softpipe")
try:   # the C functions under wgpu-py's pass encoder: per dispatch, skip its argument handling
    from wgpu.backends.wgpu_native._ffi import ffi as _ffi, lib as _lib
    _SET_BIND_GROUP, _DISPATCH = _lib.wgpuComputePassEncoderSetBindGroup, _lib.wgpuComputePassEncoderDispatchWorkgroups
except (ImportError, AttributeError):  # pragma: no cover - another wgpu-py layout: use its public API
    _SET_BIND_GROUP = _DISPATCH = None
# asked for when the adapter has them (browsers grant them too): shader-f16 gives float16 (see half.py)
_OPTIONAL_FEATURES = ("timestamp-query", "shader-f16")
_QUERY_RESOLVE = wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC


_probed: dict = {}     # power preference -> the adapter probe_is_cpu got, until a device takes it


def _request_adapter(power_preference: str):
    """wgpu's adapter, asked for without the Vulkan loader's noise on stderr (see ``host``)."""
    with quiet_vulkan_loader():
        return wgpu.gpu.request_adapter_sync(power_preference=power_preference)


class NativeDevice:
    """A wgpu-py adapter and device behind the small interface the GPU backend needs. The optional
    features the adapter has are asked for, but those named in ``withhold`` (a test's device without
    ``shader-f16``); ``features`` is what the device was granted.

    >>> dev = NativeDevice()                       # doctest: +SKIP
    >>> dev.is_cpu                                  # doctest: +SKIP
    True
    """

    name = "wgpu"

    def __init__(self, power_preference: str = "high-performance", withhold=()):
        adapter = _probed.pop(power_preference, None) or _request_adapter(power_preference)
        if adapter is None:
            raise RuntimeError("wgpu: no WebGPU adapter found (install a Vulkan/Metal/D3D12 driver, or "
                               "Debian's mesa-vulkan-drivers for a CPU adapter)")
        limits = dict(LIMITS)
        for k in _RAISED:
            limits[k] = adapter.limits[k]
        self.adapter, self.info = adapter, dict(adapter.info)
        self.adapter_features = frozenset(adapter.features)   # what it could grant (shader-f16, ...)
        features = [f for f in _OPTIONAL_FEATURES if f in adapter.features and f not in withhold]
        self.device = adapter.request_device_sync(required_features=features, required_limits=limits)
        self.features = frozenset(self.device.features)   # what it granted
        self.limits = {k: self.device.limits[k] for k in list(LIMITS) + list(_RAISED)}
        self.timestamps = "timestamp-query" in self.device.features
        self.queue = self.device.queue
        self._encoder = self._pass = self._pipe = self._bg = None
        self._offset = -1
        self._layouts = {}
        self._c_offsets = {}             # uniform offset -> C array holding it
        self._queries = None             # (query set, resolve buffer, capacity) while timing
        self._n_timed = 0                # dispatches timed in the open encoder
        self._timed = []                 # (staging buffer, count) of submitted timings

    @property
    def is_cpu(self) -> bool:
        """True on a software adapter (lavapipe, SwiftShader): available but not preferred."""
        return _is_cpu(self.info)

    @staticmethod
    def probe_is_cpu(power_preference: str = "high-performance") -> bool:
        """Whether the adapter wgpu would give is a software one (no device is created; the
        adapter is kept for the first NativeDevice, which then need not ask again)."""
        adapter = _probed[power_preference] = _request_adapter(power_preference)
        return adapter is None or _is_cpu(dict(adapter.info))

    # ------------------------------------------------------------ buffers
    def create_buffer(self, size: int):
        return self.device.create_buffer(size=size, usage=_STORAGE)

    def create_uniform_buffer(self, size: int):
        return self.device.create_buffer(size=size, usage=_UNIFORM)

    def write_buffer(self, buf, offset: int, data) -> None:
        self.queue.write_buffer(buf, offset, data)

    def destroy_buffer(self, buf) -> None:
        buf.destroy()

    # ------------------------------------------------------------ pipelines and bind groups
    def _layout(self, n_read: int, n_write: int):
        key = (n_read, n_write)
        lay = self._layouts.get(key)
        if lay is None:
            entries = [{"binding": i, "visibility": _COMPUTE,
                        "buffer": {"type": wgpu.BufferBindingType.read_only_storage}} for i in range(n_read)]
            entries += [{"binding": n_read + i, "visibility": _COMPUTE,
                         "buffer": {"type": wgpu.BufferBindingType.storage}} for i in range(n_write)]
            entries.append({"binding": n_read + n_write, "visibility": _COMPUTE,
                            "buffer": {"type": wgpu.BufferBindingType.uniform, "has_dynamic_offset": True}})
            bgl = self.device.create_bind_group_layout(entries=entries)
            lay = (bgl, self.device.create_pipeline_layout(bind_group_layouts=[bgl]))
            self._layouts[key] = lay
        return lay

    def create_pipeline(self, code: str, entry: str, n_read: int, n_write: int, label: str):
        """A compute pipeline whose bindings are: n_read read-only storage buffers, n_write
        read-write ones, then one uniform buffer with a dynamic offset."""
        bgl, layout = self._layout(n_read, n_write)
        try:
            module = self.device.create_shader_module(code=code, label=label)
            pipe = self.device.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": entry},
                                                       label=label)
        except wgpu.GPUError as e:
            if is_lost(e):
                raise device_failure(f"wgpu: kernel {label!r}", e) from None
            raise GpuError(f"wgpu: kernel {label!r} failed to compile: {e}") from None
        return (pipe, bgl)

    def create_bind_group(self, pipeline, buffers, uniform, uniform_size: int):
        """Bind ``buffers`` (list of (buffer, byte size)) then the uniform buffer window."""
        entries = [{"binding": i, "resource": {"buffer": b, "offset": 0, "size": s}} for i, (b, s) in enumerate(buffers)]
        entries.append({"binding": len(buffers), "resource": {"buffer": uniform, "offset": 0, "size": uniform_size}})
        return self.device.create_bind_group(layout=pipeline[1], entries=entries)

    # ------------------------------------------------------------ recording and submission
    def dispatch(self, pipeline, bind_group, uniform_offset: int, x: int, y: int, z: int) -> None:
        """Record one dispatch into the open compute pass (opened on demand), setting only the
        pipeline and bind group that changed since the previous dispatch."""
        p = self._pass
        if p is None:
            if self._queries is not None:
                return self._timed_dispatch(pipeline, bind_group, uniform_offset, x, y, z)
            self._encoder = self.device.create_command_encoder()
            p = self._pass = self._encoder.begin_compute_pass()
            self._pipe = self._bg = None
        if pipeline is not self._pipe:
            p.set_pipeline(pipeline[0])
            self._pipe = pipeline
        if _DISPATCH is None:
            if bind_group is not self._bg or uniform_offset != self._offset:
                p.set_bind_group(0, bind_group, (uniform_offset,))
                self._bg, self._offset = bind_group, uniform_offset
            p.dispatch_workgroups(x, y, z)
            return
        # validation errors of pass commands surface at pass end / submit (see runtime.flush);
        # the runtime's records keep the bind group alive until then
        if bind_group is not self._bg or uniform_offset != self._offset:
            off = self._c_offsets.get(uniform_offset)
            if off is None:
                off = self._c_offsets[uniform_offset] = _ffi.new("uint32_t[1]", [uniform_offset])
            _SET_BIND_GROUP(p._internal, 0, bind_group._internal, 1, off)
            self._bg, self._offset = bind_group, uniform_offset
        _DISPATCH(p._internal, x, y, z)

    def _timed_dispatch(self, pipeline, bind_group, uniform_offset, x, y, z) -> None:
        """While timing: the dispatch in a compute pass of its own, with timestamps written at
        the pass's beginning and end."""
        qs, _, capacity = self._queries
        i = self._n_timed
        if i == capacity:
            raise GpuError(f"wgpu: more than {capacity} timed dispatches in one submit")
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()
        p = self._encoder.begin_compute_pass(timestamp_writes={
            "query_set": qs, "beginning_of_pass_write_index": 2 * i, "end_of_pass_write_index": 2 * i + 1})
        p.set_pipeline(pipeline[0])
        p.set_bind_group(0, bind_group, (uniform_offset,))
        p.dispatch_workgroups(x, y, z)
        p.end()
        self._n_timed = i + 1

    @staticmethod
    def plan_buffers(storages) -> str:
        """The expression a held plan's generated replay hands its buffers over with (``resident``), from
        the expressions of their ``storages``: a list of (buffer, size), as ``HostPlan.encode`` takes it.

        >>> NativeDevice.plan_buffers(["S[0]"])
        '[(S[0].buffer, S[0].size), ]'
        """
        return "[" + "".join(f"({s}.buffer, {s}.size), " for s in storages) + "]"

    def create_plan(self, uniforms: bytes, dispatches, writes, copies=()):
        """A compiled plan this device replays (``resident.HostPlan``)."""
        from .resident import HostPlan
        return HostPlan(self, uniforms, dispatches, writes, copies)

    def submit(self, copies=(), plan=None) -> None:
        """End the open pass, append buffer copies (src, src_offset, dst, dst_offset, size), submit;
        ``plan`` (handle, buffers, per-step bytes): a compiled plan's dispatches recorded after the open
        batch's, its own copies after the pass."""
        if plan is not None:
            plan[0].encode(self, plan[1], plan[2])
            if plan[0].copies:                     # its in-place outputs, after its dispatches
                copies = [*copies, *plan[0].copied(plan[1])]
        enc = self._encoder
        if self._pass is not None:
            self._pass.end()
        elif copies and enc is None:
            enc = self.device.create_command_encoder()
        self._encoder = self._pass = None
        if enc is None:
            return
        for c in copies:
            enc.copy_buffer_to_buffer(*c)
        n = self._n_timed
        if n:
            qs, resolve, _ = self._queries
            staging = self.device.create_buffer(size=16 * n, usage=_STAGING)
            enc.resolve_query_set(qs, 0, 2 * n, resolve, 0)
            enc.copy_buffer_to_buffer(resolve, 0, staging, 0, 16 * n)
            self._timed.append((staging, n))
            self._n_timed = 0
        self.queue.submit([enc.finish()])

    def discard(self) -> None:
        """Drop the open pass after an error (its commands are not submitted)."""
        self._encoder = self._pass = None
        self._n_timed = 0

    # ------------------------------------------------------------ device timing
    def start_timing(self, capacity: int) -> None:
        """Time each dispatch from now on with timestamp queries (needs ``self.timestamps``);
        at most ``capacity`` dispatches per submit."""
        qs = self.device.create_query_set(type=wgpu.QueryType.timestamp, count=2 * capacity)
        resolve = self.device.create_buffer(size=16 * capacity, usage=_QUERY_RESOLVE)
        self._queries, self._n_timed, self._timed = (qs, resolve, capacity), 0, []

    def stop_timing(self) -> list:
        """Stop timing; the device seconds of each dispatch timed (and submitted) since
        ``start_timing``, in recording order."""
        timed, self._timed, self._queries = self._timed, [], None
        out = []
        for staging, n in timed:
            ticks = memoryview(self.read_staging(staging, 16 * n)).cast("Q")
            out += [max(0, ticks[2 * k + 1] - ticks[2 * k]) * 1e-9 for k in range(n)]
            staging.destroy()
        return out

    def validate(self, records) -> None:
        """Encode ``records`` (label, pipeline, bind group, offset, x, y, z) one by one without
        submitting, raising a GpuError that names the first one wgpu rejects."""
        for label, pipe, bg, off, x, y, z in records:
            enc = self.device.create_command_encoder()
            p = enc.begin_compute_pass()
            try:
                p.set_pipeline(pipe[0])
                p.set_bind_group(0, bg, [off])
                p.dispatch_workgroups(x, y, z)
                p.end()
                enc.finish()
            except wgpu.GPUError as e:
                raise GpuError(f"wgpu: kernel {label!r} was rejected by WebGPU validation: {e}") from None

    # ------------------------------------------------------------ readback
    def create_staging_buffer(self, size: int):
        return self.device.create_buffer(size=size, usage=_STAGING)

    def read_staging(self, staging, size: int) -> bytes:
        staging.map_sync(wgpu.MapMode.READ, 0, size)
        try:
            return bytes(staging.read_mapped(0, size, copy=False))
        finally:
            staging.unmap()

    async def read_staging_async(self, staging, size: int) -> bytes:
        await staging.map_async(wgpu.MapMode.READ, 0, size)
        try:
            return bytes(staging.read_mapped(0, size, copy=False))
        finally:
            staging.unmap()

    def errors(self):
        """The exception types of this runtime that mean a validation/device error."""
        return (wgpu.GPUError,)


def _is_cpu(info) -> bool:
    text = " ".join(str(info.get(k, "")) for k in ("vendor", "device", "description")).lower()
    return info.get("adapter_type") == "CPU" or any(v in text for v in _CPU_VENDORS)
