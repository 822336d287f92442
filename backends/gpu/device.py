"""The device interface the GPU backend talks to, and the error it raises.

Two runtimes implement it: ``native.NativeDevice`` (wgpu-py) and, in the browser, a
Pyodide device over ``navigator.gpu``. The backend logic (pipelines, pool, batching,
readback) lives in ``runtime.py`` and only calls these methods:

=============================================  ======================================================
``name``, ``info``, ``limits``, ``is_cpu``     identity; ``limits`` by WebGPU's names (``max-buffer-size``,
                                               ``max-storage-buffer-binding-size``...); ``is_cpu`` for
                                               software adapters
``create_buffer(size)``                        a storage buffer (STORAGE | COPY_SRC | COPY_DST)
``create_uniform_buffer(size)``                a uniform buffer (UNIFORM | COPY_DST)
``create_staging_buffer(size)``                a readback buffer (MAP_READ | COPY_DST)
``write_buffer(buf, offset, data)``            queue.writeBuffer (ordered before the next submit)
``destroy_buffer(buf)``                        free it now
``create_pipeline(code, entry, r, w, label)``  pipeline with r read-only + w read-write storage
                                               bindings and one dynamic-offset uniform binding
``create_bind_group(pipe, bufs, uni, size)``   bufs: [(buffer, bytes)], then the uniform window
``dispatch(pipe, bg, uniform_offset, x, y, z)``  record into the open compute pass
``submit(copies)``                             end the pass, append buffer copies, submit
``discard()``                                  drop the open pass after an error
``validate(records)``                          re-encode recorded dispatches one by one (no submit),
                                               raising a GpuError naming the first invalid one
``read_staging(buf, size)``                    map and copy out (sync); ``read_staging_async`` awaits
``errors()``                                   this runtime's exception types for GPU errors (a lost
                                               device's included: ``device_failure`` tells it apart)
=============================================  ======================================================
"""


class GpuError(RuntimeError):
    """A WebGPU validation error or device loss, naming the kernel that caused it."""


class GpuLimitError(GpuError):
    """A size beyond what the GPU device can hold (a buffer, a 32-bit uniform, a dispatch),
    raised before anything is allocated or recorded."""


def device_failure(what: str, error) -> GpuError:
    """``error``, a runtime's GPU error, as a GpuError saying that ``what`` failed, and that the
    device was lost when it was. A GpuError made here may be given again (a kernel names itself
    for an upload it made): the runtime's error is kept as ``runtime_error``.

    >>> str(device_failure("wgpu: kernel 'Exp'", RuntimeError("Parent device is lost")))
    "wgpu: kernel 'Exp' failed (the GPU device was lost: restart the process to get a new one): Parent device is lost"
    """
    error = getattr(error, "runtime_error", error)
    lost = " (the GPU device was lost: restart the process to get a new one)" if is_lost(error) else ""
    failure = GpuError(f"{what} failed{lost}: {error}")
    failure.runtime_error = error
    return failure


def is_lost(error) -> bool:
    """Whether a runtime's GPU error says the device is lost (wgpu-py gives no other sign)."""
    return "lost" in str(getattr(error, "runtime_error", error)).lower()
