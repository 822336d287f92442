"""The WebGPU backend logic, independent of the runtime (wgpu-py or the browser).

* ``GpuArray``: native data, a handle on a pooled buffer (``storage``) plus shape and dtype.
  Reshape makes another handle on the same storage; the buffer returns to the pool when the
  last handle is garbage collected, and only after the commands using it were submitted.
* Pipeline cache: programs are keyed by (kernel, ranks, dtypes, variant); shapes travel in
  uniforms, so one pipeline serves every shape of a rank.
* Lazy batching: kernels record dispatches into the device's open compute pass; uniforms
  go into one arena written just before submit (equal uniform blocks share one slot).
  Nothing is submitted until a readback or ``BATCH_LIMIT`` dispatches.
* Calls: ``prepare`` turns (program, uniforms, workgroups) into a ``Call`` that kernels may
  cache per call signature; ``record`` then costs a pool pop, two dict lookups and the
  device's dispatch.
* Reuse within a batch: a buffer released while its batch is open may become the output of
  a later dispatch of the same batch. WebGPU makes each dispatch its own usage scope, so the
  implementation orders a dispatch's writes after earlier dispatches' reads and writes of
  that buffer. Uploads (``queue.writeBuffer``, which runs before the whole batch) never get
  such a buffer. So a chain of ops cycles through a few buffers and bind groups.
* Readback: ``to_list``/``read``/``to_numpy`` (sync) and ``read_async``.
* Limits: an array larger than a kernel may bind (``limits.buffer_limit``), a uniform beyond
  32 bits or a dispatch beyond 65535 x 65535 workgroups raises a ``GpuLimitError`` before
  anything is allocated or recorded. The pool keeps at most ``pool_limit`` bytes of free
  buffers (``limits.pool_limit``), destroying the least recently requested size classes first.
"""
from __future__ import annotations

import array
import gc

from webgrad.dtypes import DTYPES, DType, bool_, float16, float32, int32, int64
from webgrad.host import check_int_range

from .device import GpuError, GpuLimitError, device_failure, is_lost
from .limits import buffer_limit, pool_limit
from .half import half_bytes, half_values
from .program import UNIFORM_SLOT, Program, compile_error, storage_bytes

BATCH_LIMIT = 512                   # dispatches per submit
MIN_BUFFER = 16
BIND_GROUPS = 4096                  # bind groups cached before the cache starts afresh
MAX_GROUPS = 65535
_CODES = {"float32": "f", "int32": "i", "int64": "i", "bool": "I"}   # int64 is held in 32 bits; float16: see half
_PYTHON_TYPES = {"float32": float, "float16": float, "int32": int, "int64": int, "bool": lambda v: int(bool(v))}
_HOST = {"float32": "float32", "float16": "float16", "int32": "int32", "int64": "int32",
         "bool": "uint32"}   # numpy dtype of the bytes
INDEX_SLOTS = 64                    # kinds of index check told apart between two readbacks
_FLAGS_CLEAR = array.array("i", [0, 2**31 - 1, -2**31] * INDEX_SLOTS).tobytes()   # count, least, greatest


def size_class(nbytes: int) -> int:
    """The pool bucket of a request: the next power of two, at least 16 bytes.

    >>> size_class(20), size_class(16), size_class(0)
    (32, 16, 16)
    """
    return max(MIN_BUFFER, 1 << max(0, nbytes - 1).bit_length())


def split_groups(groups: int):
    """(x, y) workgroup counts for a flat count, split over y beyond 65535 per dimension.

    >>> split_groups(70000)
    (35000, 2)
    """
    if groups <= MAX_GROUPS:
        return groups, 1
    y = -(-groups // MAX_GROUPS)
    if y > MAX_GROUPS:
        raise GpuLimitError(f"a dispatch of {groups} workgroups exceeds {MAX_GROUPS} x {MAX_GROUPS} "
                            f"(max-compute-workgroups-per-dimension)")
    return -(-groups // y), y


class Storage:
    """A lease on one of the backend's buffers; returned to the pool when no GpuArray refers to it.

    The backend, not the lease, owns the buffer (``GpuBackend._owned``): a lease that dies in a
    reference cycle is finalised by the garbage collector in no set order with the objects it
    refers to, and a buffer reachable only through it could be released by the runtime (wgpu-py
    frees the native buffer in its ``__del__``) before this lease hands it back to the pool."""

    __slots__ = ("buffer", "size", "backend", "__weakref__")

    def __init__(self, backend, buffer, size):
        self.buffer, self.size, self.backend = buffer, size, backend

    def __del__(self):                  # cheaper than a weakref finalizer on this hot path
        self.backend._release(self.buffer, self.size)


class Call:
    """A prepared dispatch: pipeline, packed uniforms, workgroup counts (what ``record`` needs)."""

    __slots__ = ("label", "pipe", "layout", "uniforms", "x", "y", "z")

    def __init__(self, label, pipe, layout, uniforms, x, y, z):
        self.label, self.pipe, self.layout, self.uniforms = label, pipe, layout, uniforms
        self.x, self.y, self.z = x, y, z


class GpuArray:
    """A tensor's data on the GPU: a storage buffer, a shape tuple and a dtype (contiguous, row-major).

    >>> import webgrad as wg  # doctest: +SKIP
    >>> wg.ones(2, 3, backend="wgpu")._data.shape  # doctest: +SKIP
    (2, 3)
    """

    __slots__ = ("storage", "shape", "dtype", "__weakref__")

    def __init__(self, storage: Storage, shape: tuple, dtype: DType):
        self.storage, self.shape, self.dtype = storage, shape, dtype

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * storage_bytes(self.dtype)

    def __repr__(self):
        return f"GpuArray(shape={self.shape}, dtype={self.dtype.name})"


class GpuBackend:
    """The backend object for a WebGPU device (``wgpu`` natively, ``webgpu`` in the browser)."""

    constant_cache = True   # no kernel writes into an existing array, so small constants may be shared
    dtypes = frozenset((float32, int32, int64, bool_))   # the dtypes WGSL storage holds (int64 in 32 bits)

    def __init__(self, device, name: str | None = None):
        self.device, self.name = device, name or device.name
        self.software = device.is_cpu    # lavapipe, SwiftShader: some kernels pick other programs (linalg, reduce)
        if "shader-f16" in getattr(device, "features", ()):   # float16 where the device was granted f16
            self.dtypes = GpuBackend.dtypes | {float16}
        self.pipelines: dict = {}
        self.calls: dict = {}            # kernel call signature -> Call (see elementwise)
        self.submits = 0
        self.max_buffer, self._max_buffer_limit = buffer_limit(device.limits)
        self._owned: set = set()         # every buffer this backend made and has not destroyed
        self._pool: dict = {}            # size class -> [buffer]
        self._batch_free: dict = {}      # size class -> [buffer] released while the batch is open
        self._staging: dict = {}         # size class -> [mapped-read buffer]
        self._used: dict = {}            # size class -> submit count at its last request (trims the oldest)
        self._staging_used: dict = {}    # the same, for readback buffers
        self._pool_limit = pool_limit(self.max_buffer)
        self._bind_groups: dict = {}
        self._records: list = []         # (label, pipeline, bind group, uniform offset, x, y, z)
        self._uniforms = bytearray(UNIFORM_SLOT * BATCH_LIMIT)
        self._uniform_slots: dict = {}   # packed uniform bytes -> offset, this batch
        self._uniform_end = 0
        self._uniform_buffer = device.create_uniform_buffer(len(self._uniforms))
        self._timing = None              # report(kernel, seconds) while device timing is on
        self._timed_labels: list = []    # kernel of each timed dispatch submitted, in order
        self.in_use = self.pooled = 0
        self._flags = None               # index-check flags (see index_flags), made on first use
        self._sync = None                # one word read back by synchronize()
        self._check_slots: dict = {}     # (kernel, dimension size) -> flags slot, since the last readback

    def __repr__(self):
        """Names the backend and its adapter: ``<webgrad backend 'wgpu': llvmpipe (LLVM 15.0.6, 256 bits), Vulkan>``."""
        info = self.device.info      # browsers may leave ``device`` empty and give only the vendor
        named = next((str(info[k]) for k in ("device", "description", "vendor") if info.get(k)), "an unnamed adapter")
        api = f", {info['backend_type']}" if info.get("backend_type") else ""
        return f"<webgrad backend {self.name!r}: {named}{api}>"

    # ------------------------------------------------------------ buffers

    def alloc(self, shape: tuple, dtype: DType, upload: bool = False) -> GpuArray:
        """A new (uninitialised) array. A kernel's output (the default) must be written by a
        dispatch recorded after this call: it may get a buffer released earlier in the open
        batch. ``upload=True`` for an array a queue write fills: never such a buffer. An array
        larger than ``max_buffer`` bytes raises a GpuLimitError."""
        n = storage_bytes(dtype)
        for d in shape:
            n *= d
        size = size_class(n)
        if size > self.max_buffer:
            size = self._largest_class(n, shape, "tensor data" if upload else "an output", dtype)
        return GpuArray(self._lease(size, upload), tuple(shape), dtype)

    def _lease(self, size: int, upload: bool) -> Storage:
        """A lease on a buffer of ``size`` bytes (a size class): a pooled one, or a new one (see ``alloc``)."""
        self._used[size] = self.submits
        free = (not upload and self._batch_free.get(size)) or self._pool.get(size)
        if free:
            buf = free.pop()
            self.pooled -= size
        else:
            buf = self.device.create_buffer(size)
            self._owned.add(buf)
        self.in_use += size
        return Storage(self, buf, size)

    def leases(self, sizes) -> list:
        """Leases for ``sizes`` ((size class, upload) pairs, as ``alloc`` takes them), in one call: the
        buffers a held plan's replay hands out (``resident``)."""
        lease = self._lease
        return [lease(size, upload) for size, upload in sizes]

    def _largest_class(self, n: int, shape, what: str, dtype=float32) -> int:
        """The size class of ``n`` bytes past the last power of two a buffer may hold (the
        largest buffer), or a GpuLimitError naming ``what`` when ``n`` bytes do not fit at all."""
        if n > self.max_buffer:
            raise GpuLimitError(self.oversize(shape, what, dtype))
        return self.max_buffer

    def _check_upload(self, shape, dtype=float32) -> None:
        """Raise a GpuLimitError, before any data is converted, when ``shape`` cannot be uploaded."""
        message = self.oversize(shape, f"{self.name}: tensor data", dtype)
        if message:
            raise GpuLimitError(message)

    def oversize(self, shape, what: str = "an output", dtype=float32) -> str | None:
        """Why an array of ``shape`` cannot be held on this device, or None when it can.

        >>> wg.backend("wgpu").oversize((10**9,))   # doctest: +SKIP
        'an output of shape (1000000000,) needs 4000000000 bytes, more than ... (max-storage-buffer-binding-size)'
        """
        each = storage_bytes(dtype)
        n = each
        for d in shape:
            n *= d
        if n <= self.max_buffer:
            return None
        return (f"{what} of shape {tuple(shape)} needs {n} bytes ({each} per element), more than the "
                f"{self.max_buffer} bytes one buffer may hold here ({self._max_buffer_limit})")

    def _release(self, buf, size) -> None:
        batch_open = self._records
        (self._batch_free if batch_open else self._pool).setdefault(size, []).append(buf)
        self.in_use -= size
        self.pooled += size
        if self.pooled > self._pool_limit and not batch_open:
            self._trim(self._pool_limit)

    @property
    def pool_limit(self) -> int:
        """The most bytes of free buffers the pool keeps (see ``limits.pool_limit``); setting
        it trims the pool at once.

        >>> wg.backend("wgpu").pool_limit = 256 << 20   # doctest: +SKIP
        """
        return self._pool_limit

    @pool_limit.setter
    def pool_limit(self, nbytes: int) -> None:
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
            raise ValueError(f"{self.name}: pool_limit must be a byte count >= 0, got {nbytes!r}")
        self._pool_limit = nbytes
        self._trim(nbytes)

    def _trim(self, limit: int) -> None:
        """Destroy free buffers, those of the least recently requested size classes first (the
        largest first among equals), until the pool holds at most ``limit`` bytes. Buffers
        released in the open batch wait for its submit."""
        classes = [(self._used.get(size, -1), -size, 0, size) for size in list(self._pool)]
        classes += [(self._staging_used.get(size, -1), -size, 1, size) for size in list(self._staging)]
        classes.sort()
        for *_, kind, size in classes:
            bufs = (self._pool, self._staging)[kind].get(size)
            while bufs and self.pooled > limit:
                buf = bufs.pop()
                self.pooled -= size
                self._owned.discard(buf)
                self.device.destroy_buffer(buf)
            if self.pooled <= limit:
                return

    def empty_pool(self) -> None:
        """Destroy every pooled buffer, readback buffers too (frees GPU memory; the pool refills
        on demand)."""
        self.flush()
        self._trim(0)
        self._bind_groups.clear()

    # ------------------------------------------------------------ pipelines and dispatch
    def pipeline(self, key, build):
        """The compiled pipeline for ``key``; ``build()`` makes its Program on a miss."""
        entry = self.pipelines.get(key)
        if entry is None:
            prog: Program = build()
            try:
                pipe = self.device.create_pipeline(prog.code, prog.entry, prog.n_read, prog.n_write, prog.label)
            except GpuError as e:
                raise compile_error(prog.code, e) from None
            entry = self.pipelines[key] = (prog, pipe)
        return entry

    def prepare(self, key, build, uniforms, groups):
        """The ``Call`` of program ``key`` with the flat ``uniforms`` words over ``groups``
        workgroups -- a flat count (split over y beyond 65535) or an (x, y, z) tuple -- or
        None when there is nothing to dispatch."""
        prog, pipe = self.pipeline(key, build)
        if isinstance(groups, tuple):
            (x, y), z = groups[:2], groups[2]
            if max(groups) > MAX_GROUPS:
                raise GpuLimitError(f"a dispatch of {groups} workgroups exceeds {MAX_GROUPS} per dimension "
                                    f"(max-compute-workgroups-per-dimension)")
        else:
            (x, y), z = split_groups(groups), 1
        if x * y * z <= 0:
            return None
        try:
            ub = prog.packed(uniforms)
        except GpuLimitError as e:
            raise GpuLimitError(f"{e} (one buffer holds at most {self.max_buffer} bytes here: "
                                f"{self._max_buffer_limit})") from None
        return Call(prog.label, pipe, (prog.n_read, prog.n_write), ub, x, y, z)

    def run(self, key, build, reads, writes, uniforms, groups) -> None:
        """Record one dispatch of the program ``key`` (see ``prepare``) reading ``reads`` and
        writing ``writes`` (GpuArrays)."""
        call = self.prepare(key, build, uniforms, groups)
        if call is not None:
            self.record(call, [*reads, *writes])

    def record(self, call: Call, arrays) -> None:
        """Record ``call`` on ``arrays`` (its reads, then its writes) into the open batch."""
        ub = call.uniforms
        offset = self._uniform_slots.get(ub)
        if offset is None:
            offset = self._uniform_slots[ub] = self._uniform_end
            self._uniforms[offset:offset + len(ub)] = ub
            self._uniform_end = offset + UNIFORM_SLOT
        stores = [a.storage for a in arrays]
        bkey = (call.layout, *[s.buffer for s in stores])   # the buffers themselves: ids stay unique
        bg = self._bind_groups.get(bkey)
        if bg is None:
            if len(self._bind_groups) > BIND_GROUPS:
                self._bind_groups.clear()
            bg = self._bind_groups[bkey] = self.device.create_bind_group(
                call.pipe, [(s.buffer, s.size) for s in stores], self._uniform_buffer, UNIFORM_SLOT)
        self.device.dispatch(call.pipe, bg, offset, call.x, call.y, call.z)
        records = self._records
        records.append((call.label, call.pipe, bg, offset, call.x, call.y, call.z))
        if len(records) >= BATCH_LIMIT:
            self.flush()

    def synchronize(self) -> None:
        """Submit what is recorded and wait until the device has run it: a readback of one word, which
        the queue runs after everything before it (a page blocks only with JSPI, as every sync readback)."""
        if self._sync is None:
            self._sync = self.upload_bytes(bytes(4), (1,), int32)
        self.read_bytes(self._sync)

    def flush(self, copies=(), plan=None) -> None:
        """Submit everything recorded (plus ``copies``, or a device-held plan's replay after it: ``plan`` is
        (handle, [(buffer, size)] of its inputs and outputs, per-step bytes); see ``resident``), then recycle
        the buffers released meanwhile."""
        records, end = self._records, self._uniform_end
        if not records and not copies and plan is None:
            return
        self._records, self._uniform_slots, self._uniform_end = [], {}, 0
        try:
            if records:
                self.device.write_buffer(self._uniform_buffer, 0, memoryview(self._uniforms)[:end])
            self.device.submit(copies, plan)
        except self.device.errors() as e:
            self._failed(e, records, plan)
        finally:
            for size, bufs in self._batch_free.items():
                self._pool.setdefault(size, []).extend(bufs)
            self._batch_free = {}
            if self.pooled > self._pool_limit:
                self._trim(self._pool_limit)
        if self._timing is not None:
            self._timed_labels.extend(r[0] for r in records)
        self.submits += 1

    def submit_plan(self, plan) -> None:
        """``flush(plan=plan)`` for a held plan's replay (``resident``): with nothing recorded and no buffer released
        since the last submit (a step's usual case), the plan goes to the device at once."""
        if self._records or self._batch_free:
            return self.flush(plan=plan)
        try:
            self.device.submit((), plan)
        except self.device.errors() as e:
            self._failed(e, [], plan)
        self.submits += 1

    def _failed(self, e, records, plan):
        """Raise the error of a failed submit of ``records`` (and ``plan``), the open batch dropped."""
        self.device.discard()
        if not is_lost(e):
            self.device.validate([r[:7] for r in records])
        names = ", ".join(sorted({r[0] for r in records} | ({"a compiled plan"} if plan else set())))
        raise device_failure(f"{self.name}: " + (f"a batch of kernels ({names})" if names else "a copy"), e) from None

    # ------------------------------------------------------------ fusion and capture (webgrad.compile's plans)
    def capture(self):
        """A context logging one kernel call's allocations and dispatches (see ``capture.Capture``)."""
        from .capture import Capture
        return Capture(self)

    def resident_plan(self, plan, needed, steps, forward, replaced=None, grads=None, roots=None):
        """A compiled plan's replay (its ``forward`` steps) held by the device (see ``resident``), or the
        generated ``steps`` function where it cannot be; ``replaced`` ({slot: input slot}) the outputs it may
        write into the buffers of the tensors they replace the data of, ``grads`` ({slot: place}) those it may
        write into the buffers of the ``.grad`` tensors they replace, ``roots`` ({slot: weak reference}) those that
        become the data of an updated view's root."""
        from .resident import resident_plan
        return resident_plan(self, plan, needed, steps, forward, replaced or {}, grads or {}, roots or {})

    fusion_max_inputs = 6   # a fused kernel's inputs: with its output, within 8 storage buffers per stage
    matmul_reads_transposed = True   # MatMul's transpose flags read through strides: compiled plans fold Transposes in

    def fusible(self, name: str, attrs: dict, dtypes) -> bool:
        """Whether a compiled plan may fuse kernel ``name`` into an elementwise chain (see ``fused``)."""
        from .fused import fusible
        return fusible(name, attrs, dtypes)

    def fused_kernel(self, ops, out_shape: tuple, dtype=float32, head=None):
        """One kernel function computing the float32 elementwise chain ``ops`` (see ``fused.fused_kernel``),
        or, with ``head=(name, attrs)``, the head kernel with the chain as its epilogue (``fused.epilogue_kernel``)."""
        from .fused import epilogue_kernel, fused_kernel
        return fused_kernel(self.name, ops, out_shape) if head is None else epilogue_kernel(self.name, ops, *head)

    def fusible_head(self, name: str, attrs: dict, metas) -> bool:
        """Whether a compiled plan may fuse an elementwise chain into kernel ``name``'s store, its inputs'
        (shape, dtype) ``metas`` (see ``fused.fusible_head``)."""
        from .fused import fusible_head
        return fusible_head(name, attrs, metas)

    def epilogue_fits(self, shape: tuple, out_shape: tuple) -> bool:
        """Whether a head's epilogue can read a chain input of ``shape`` against its result's ``out_shape``."""
        from .linalg_epilogue import epilogue_strides
        return epilogue_strides(shape, out_shape) is not None

    # ------------------------------------------------------------ device timing (webgrad.profile)
    def start_device_timing(self, report) -> None:
        """Time every dispatch on the device from now on, when the device can (GPU timestamp
        queries); ``report(kernel, seconds)`` gets the times by ``stop_device_timing()``.
        Without timestamp support this does nothing and the profile shows host time only."""
        if not getattr(self.device, "timestamps", False) or self._timing is not None:
            return
        self.flush()
        self._timing = report
        self.device.start_timing(BATCH_LIMIT)

    def stop_device_timing(self) -> None:
        """Submit pending work and report the device time of every dispatch timed since start."""
        if self._timing is None:
            return
        report = self._timing
        try:
            self.flush()
        finally:
            self._timing = None
            seconds = self.device.stop_timing()
        for label, s in zip(self._timed_labels, seconds):
            report(label, s)
        self._timed_labels = []

    # ------------------------------------------------------------ host transfer
    def _check_dtype(self, dtype: DType) -> DType:
        if dtype.is_complex:
            raise TypeError(f"{self.name}: dtype {dtype.name} is not supported on the GPU backend {self.name!r} "
                            f"(webgrad's GPU backends hold no complex dtypes; WGSL has no complex type): keep "
                            f"complex tensors on the cpu backend, e.g. t.to('cpu'), or carry real pairs on the GPU "
                            f"(webgrad.view_as_real's layout, rotating them with real ops)")
        if dtype.kind == "i" and dtype.itemsize < 4:
            raise TypeError(f"{self.name}: dtype {dtype.name} is not supported on the GPU backend {self.name!r} "
                            f"(webgrad's GPU backends hold no 8- or 16-bit integers, whose wrap-around arithmetic "
                            f"WGSL's 32-bit integers would not give): convert first, e.g. t.float() / 255 or "
                            f"t.long() on the cpu, then t.to({self.name!r}); or keep the tensor on the cpu backend")
        if dtype not in self.dtypes:
            raise TypeError(f"{self.name}: dtype {dtype.name} is not supported on the GPU backend {self.name!r} "
                            f"({self._missing(dtype)}); use float32, e.g. t.to(webgrad.float32), or keep the "
                            f"tensor on the cpu backend, e.g. t.to('cpu')")
        return dtype

    def _missing(self, dtype: DType) -> str:
        """Why this GPU cannot hold ``dtype``: what WebGPU lacks, or what this adapter does."""
        if dtype.itemsize == 8:
            return "WebGPU has no 64-bit floats"
        if dtype.name == "bfloat16":
            return "WGSL has no bfloat16 type"
        adapter = self.device.info.get("description") or self.device.info.get("device") or "this adapter"
        if "shader-f16" in getattr(self.device, "adapter_features", ()):
            return f"{adapter} offers WebGPU's shader-f16 feature, but this device was created without it"
        return f"float16 needs WebGPU's shader-f16 feature, which {adapter} does not offer"

    def dtype_of(self, a: GpuArray) -> DType:
        return a.dtype

    def upload_bytes(self, data, shape, dtype: DType) -> GpuArray:
        """Native data of ``shape`` from the bytes ``data``."""
        self._check_dtype(dtype)
        if len(data) % 4:   # WebGPU writes whole 4-byte words (an odd count of float16 values)
            data = bytes(data) + bytes(4 - len(data) % 4)
        try:
            out = self.alloc(tuple(shape), dtype, upload=True)
            if len(data):
                self.device.write_buffer(out.storage.buffer, 0, data)
        except self.device.errors() as e:
            raise device_failure(f"{self.name}: uploading a tensor of shape {tuple(shape)}", e) from None
        return out

    def upload(self, flat, shape, dtype: DType) -> GpuArray:
        """Native data from a flat sequence of Python numbers."""
        self._check_upload(shape, dtype)
        if self._check_dtype(dtype) is float16:
            return self.upload_bytes(half_bytes(flat), shape, dtype)
        code = _CODES[dtype.name]
        if not (isinstance(flat, array.array) and flat.typecode == code):
            convert = _PYTHON_TYPES[dtype.name]
            flat = [convert(v) for v in flat]
            if dtype is int64:
                check_int_range(flat, int64, "tensor", int32, f" on {self.name}, which holds it in 32 bits (WebGPU "
                                                              f"has no 64-bit integers)")
        values = array.array(code, flat)
        return self.upload_bytes(values.tobytes(), shape, dtype)

    def from_array(self, obj, dtype: DType | None = None) -> GpuArray:
        """Native data from a numpy array (or anything numpy can read)."""
        import numpy as np
        a = np.asarray(obj)
        if dtype is None:
            kind, dtype = a.dtype.kind, DTYPES.get(a.dtype.name)
            if dtype is None or dtype.kind == "i" and dtype not in self.dtypes:   # uint8, int8, int16: as int64
                dtype = {"i": int64, "u": int64, "b": bool_}.get(kind)
            if dtype is None:
                raise TypeError(f"tensor: unsupported numpy dtype {a.dtype} on backend {self.name!r}")
        self._check_upload(a.shape, dtype)
        self._check_dtype(dtype)
        if dtype.kind == "i" and a.size and (a.min() < -2**31 or a.max() > 2**31 - 1):
            raise OverflowError(f"tensor: {a.dtype} values from {a.min()} to {a.max()} do not fit in {dtype.name} on "
                                f"{self.name}, which holds it in 32 bits (WebGPU has no 64-bit integers)")
        return self.upload_bytes(np.ascontiguousarray(a, dtype=_HOST[dtype.name]).tobytes(), a.shape, dtype)

    def _stage(self, a: GpuArray):
        """Submit pending work plus copies of ``a`` and, when index checks ran since the last
        readback, of their flags, into pooled staging buffers; the flags start afresh.
        Returns (staged: [(staging, size class, bytes)], checks: {(kernel, size): slot})."""
        arrays = [a] if a.nbytes else []
        checks, flags = self._check_slots, self._flags
        if checks:
            arrays.append(flags)
            self._check_slots = {}
        staged = [(*self._staging_buffer(b.nbytes), -(-b.nbytes // 4) * 4) for b in arrays]   # whole 4-byte words
        self.flush([(b.storage.buffer, 0, s, 0, n) for b, (s, _, n) in zip(arrays, staged)])
        if checks:   # queued after the copy, so the next batch's checks start from nothing refused
            self.device.write_buffer(flags.storage.buffer, 0, _FLAGS_CLEAR)
        return staged, checks

    def _unstage(self, staged) -> None:
        for s, size, _ in staged:
            self._staging.setdefault(size, []).append(s)
            self.pooled += size
        if self.pooled > self._pool_limit:
            self._trim(self._pool_limit)

    def _checked(self, got: list, checks: dict) -> bytes:
        """The array's bytes from the staged reads ``got``, after raising an IndexError for any
        index the kernels in ``checks`` refused since the last readback."""
        if checks:
            refused = memoryview(got.pop()).cast("i")
            errors = [_refused_message(label, size, refused[3 * k + 1], refused[3 * k + 2])
                      for (label, size), k in checks.items() if refused[3 * k]]
            if errors:
                raise IndexError(f"{self.name}: " + "; ".join(errors) + ". GPU kernels run asynchronously, so "
                                 f"this is reported at the first readback after them; run the same code on "
                                 f"'cpu' to raise where it happens")
        return got[0] if got else b""

    def read_bytes(self, a: GpuArray) -> bytes:
        """The array's bytes, submitting pending work first (sync readback)."""
        staged = []
        try:
            staged, checks = self._stage(a)
            got = [self.device.read_staging(s, n) for s, _, n in staged]
        except self.device.errors() as e:
            raise device_failure(f"{self.name}: reading back a tensor of shape {a.shape}", e) from None
        finally:
            self._unstage(staged)
        return self._checked(got, checks)[:a.nbytes]

    async def read_bytes_async(self, a: GpuArray) -> bytes:
        """The array's bytes, awaiting the map (the readback browsers allow without JSPI)."""
        staged = []
        try:
            staged, checks = self._stage(a)
            got = [await self.device.read_staging_async(s, n) for s, _, n in staged]
        except self.device.errors() as e:
            raise device_failure(f"{self.name}: reading back a tensor of shape {a.shape}", e) from None
        finally:
            self._unstage(staged)
        return self._checked(got, checks)[:a.nbytes]

    # ------------------------------------------------------------ index checks
    def index_flags(self, label: str, size: int):
        """(flags array, slot) for kernel ``label`` checking indices against a dimension of
        ``size``: the kernel (a ``Program(checks_indices=True)``, bound with the flags after its
        outputs and the slot as its last uniform) calls ``bad_index`` for each index it refuses,
        reading and writing nothing out of range, and the next readback raises an IndexError
        naming ``label``, ``size`` and the refused range. Nothing is read back per op."""
        if self._flags is None:
            self._flags = self.upload_bytes(_FLAGS_CLEAR, (3 * INDEX_SLOTS,), int32)
        key = (label, size)
        slot = self._check_slots.get(key)
        if slot is None:   # the last slot is shared once the others are taken
            slot = self._check_slots[key] = min(len(self._check_slots), INDEX_SLOTS - 1)
        return self._flags, slot

    def _staging_buffer(self, n):
        size = min(size_class(n), self.max_buffer)      # no array is larger than max_buffer
        self._staging_used[size] = self.submits
        free = self._staging.get(size)
        if free:
            self.pooled -= size
            return free.pop(), size
        return self.device.create_staging_buffer(size), size

    def _flat(self, a: GpuArray, data: bytes):
        if a.dtype is float16:
            return half_values(data)
        values = array.array(_CODES[a.dtype.name])
        values.frombytes(data)
        return [bool(v) for v in values] if a.dtype is bool_ else values

    def read(self, a: GpuArray):
        """(flat values, shape, dtype) on the host."""
        flat = self._flat(a, self.read_bytes(a))
        return (memoryview(flat) if isinstance(flat, array.array) else flat), a.shape, a.dtype

    def to_list(self, a: GpuArray):
        flat = self._flat(a, self.read_bytes(a))
        return nest(flat if isinstance(flat, list) else flat.tolist(), a.shape)

    async def read_async(self, a: GpuArray):
        """The data as (nested) Python lists, read back without blocking (``await t.read()``)."""
        flat = self._flat(a, await self.read_bytes_async(a))
        return nest(flat if isinstance(flat, list) else flat.tolist(), a.shape)

    def to_numpy(self, a: GpuArray):
        import numpy as np
        out = np.frombuffer(self.read_bytes(a), dtype=_HOST[a.dtype.name]).reshape(a.shape)
        return out.astype(np.bool_ if a.dtype is bool_ else a.dtype.name)   # a copy, widened for int64

    def nbytes(self, a: GpuArray) -> int:
        return a.nbytes

    def memory(self) -> dict:
        """Live tensors, the bytes their data holds, and GPU bytes: ``in_use`` by arrays (live
        tensors, saved tensors, cached constants, the index-check flags), ``pooled`` in free
        buffers kept for reuse (storage and readback buffers, trimmed to ``pool_limit``, which is
        reported too). Submits pending work first, so released buffers count as pooled."""
        from webgrad.engine import SavedTensor
        from webgrad.tensor import Tensor
        self.flush()
        arrays, tensors = {}, 0
        for o in gc.get_objects():
            kind = type(o)  # not isinstance: that may touch lazy module attributes of other libraries
            if issubclass(kind, Tensor) and o._backend is self:
                tensors += 1
                arrays[id(o._data.storage)] = o._data
            elif kind is SavedTensor and o._backend is self:
                arrays[id(o._data.storage)] = o._data
        return {"tensors": tensors, "bytes": sum(a.nbytes for a in arrays.values()),
                "in_use": self.in_use, "pooled": self.pooled, "pool_limit": self._pool_limit}

    def info(self) -> dict:
        """The adapter's description and the limits this device asked for."""
        return {"adapter": dict(self.device.info), "limits": dict(self.device.limits), "cpu": self.device.is_cpu}


def _refused_message(label: str, size: int, least: int, greatest: int) -> str:
    """What an index check found, e.g. ``Gather: index 12 is out of bounds for a dimension of size 10``."""
    what = f"index {least} is" if least == greatest else f"indices from {least} to {greatest} are"
    return f"{label}: {what} out of bounds for a dimension of size {size}"


def nest(flat, shape):
    """Nested lists of ``shape`` from a flat list (a scalar for shape ()).

    >>> nest([1, 2, 3, 4], (2, 2))
    [[1, 2], [3, 4]]
    """
    if not shape:
        return flat[0]
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]

    def rec(off, d):
        if d == len(shape) - 1:
            return list(flat[off:off + shape[d]])
        return [rec(off + i * strides[d], d + 1) for i in range(shape[d])]
    return rec(0, 0)


__all__ = ["Call", "GpuArray", "GpuBackend", "GpuError", "nest", "size_class", "split_groups"]
