"""The device interface the GPU backend talks to, and the error it raises.

Two runtimes implement it: ``native.NativeDevice`` (wgpu-py) and, in the browser, a
Pyodide device over ``navigator.gpu``. The backend logic (pipelines, pool, batching,
readback) lives in ``runtime.py`` and only calls these methods:

=============================================  ======================================================
``name``, ``info``, ``limits``, ``is_cpu``     identity; ``is_cpu`` for software adapters
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
``errors()``                                   this runtime's exception types for GPU errors
=============================================  ======================================================
"""


class GpuError(RuntimeError):
    """A WebGPU validation error or device loss, naming the kernel that caused it."""
