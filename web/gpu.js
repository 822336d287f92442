// webgrad's WebGPU helpers for the browser device (backends/gpu/browser.py).
//
// This file is a classic script whose value is an object of functions: browser.py evaluates it
// with pyodide.code.run_js (it ships inside the wheel), so any Pyodide page gets the helpers.
// Python calls them with positional arguments only: building descriptor dicts in Python costs
// more per call and leaks proxies (DESIGN.md §7), so every descriptor is made here.
//
//   requestDevice(powerPreference)      -> Promise<{adapter, device, info, limits}>  (info: plain strings;
//                                          limits by WebGPU's names, e.g. "max-buffer-size")
//   runner(device)                      -> the per-device functions below (closures, no `this`)
//     buffer(size, kind)                  kind 0 storage, 1 uniform, 2 staging (MAP_READ)
//     write(buffer, offset, data)         queue.writeBuffer from a Python buffer (no extra copy) or a typed array
//     destroy(buffer)
//     layout(nRead, nWrite)               -> bind group layout: nRead read-only, nWrite read-write storage,
//                                            then one uniform buffer with a dynamic offset
//     pipeline(code, entry, layout, label) -> [handle, Promise<null | "wgsl:LINE:COL: error: ...">]
//                                            handle: [GPUComputePipeline, GPUBindGroupLayout]
//     bindGroup(handle, uniform, uniformSize, buf0, size0, buf1, size1, ...)
//     dispatch(handle, bindGroup, uniformOffset, x, y, z)     records into the open compute pass
//     submit(src, srcOffset, dst, dstOffset, size, ...)        ends the pass, appends copies, submits
//     discard()                           drops the open pass
//     drain()                             -> Promise<null | string>: the validation errors of every batch
//                                            submitted since the last drain (and forgets them)
//     read(staging, size)                 -> Promise<Uint8Array>: maps, copies, unmaps; rejects with drain()'s
//                                            errors when there are any
//
// Validation errors: every command between two submits runs inside one error scope, popped at
// submit; read() awaits those scopes, so an invalid batch fails the next readback.
(() => {
  "use strict";
  // what every WebGPU implementation grants (the native device asks for the same: native.LIMITS),
  // plus the adapter's own maximum buffer sizes
  const LIMITS = {maxStorageBuffersPerShaderStage: 8, maxComputeWorkgroupStorageSize: 16384,
                  maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupsPerDimension: 65535};
  const RAISED = ["maxStorageBufferBindingSize", "maxBufferSize"];

  async function requestDevice(powerPreference) {
    if (!globalThis.navigator || !navigator.gpu) throw new Error("this browser has no WebGPU (navigator.gpu is undefined)");
    const adapter = await navigator.gpu.requestAdapter({powerPreference: powerPreference || "high-performance"});
    if (!adapter) throw new Error("navigator.gpu.requestAdapter() gave no adapter (WebGPU is disabled or blocklisted here)");
    const requiredLimits = {...LIMITS};
    for (const k of RAISED) requiredLimits[k] = adapter.limits[k];
    const device = await adapter.requestDevice({requiredLimits});
    const ai = adapter.info || {};
    const info = {vendor: ai.vendor || "", architecture: ai.architecture || "", device: ai.device || "",
                  description: ai.description || "", fallback: !!(ai.isFallbackAdapter || adapter.isFallbackAdapter)};
    const limits = {};                        // by WebGPU's names, as wgpu-py gives them: max-buffer-size
    for (const k of [...Object.keys(LIMITS), ...RAISED]) {
      limits[k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())] = device.limits[k];
    }
    return {adapter, device, info, limits};
  }

  function formatCompileMessages(messages, label) {
    return messages.filter((m) => m.type === "error")
      .map((m) => `${label}:${m.lineNum}:${m.linePos}: error: ${m.message}`).join("\n");
  }

  function runner(device) {
    const U = GPUBufferUsage;               // looked up here: without WebGPU, requestDevice() explains
    const USAGE = [U.STORAGE | U.COPY_SRC | U.COPY_DST, U.UNIFORM | U.COPY_DST, U.MAP_READ | U.COPY_DST];
    const queue = device.queue;
    let encoder = null, pass = null, scoped = false;
    const checks = [];                        // popErrorScope promises of submitted batches
    const offsets = new Uint32Array(1);

    function scope() {                        // every command until the next submit is checked together
      if (!scoped) { device.pushErrorScope("validation"); scoped = true; }
    }

    function buffer(size, kind) {
      scope();
      return device.createBuffer({size, usage: USAGE[kind]});
    }

    function write(buf, offset, data) {
      scope();
      if (ArrayBuffer.isView(data) || data instanceof ArrayBuffer) {
        queue.writeBuffer(buf, offset, data);
        return;
      }
      const view = data.getBuffer("u8");      // a Python buffer: a view on the wasm heap, no copy
      try {
        queue.writeBuffer(buf, offset, view.data);
      } finally {
        view.release();
      }
    }

    function destroy(buf) {
      buf.destroy();
    }

    function layout(nRead, nWrite) {
      const entries = [];
      for (let i = 0; i < nRead + nWrite; i++) {
        entries.push({binding: i, visibility: GPUShaderStage.COMPUTE,
                      buffer: {type: i < nRead ? "read-only-storage" : "storage"}});
      }
      entries.push({binding: nRead + nWrite, visibility: GPUShaderStage.COMPUTE,
                    buffer: {type: "uniform", hasDynamicOffset: true}});
      const bgl = device.createBindGroupLayout({entries});
      return [bgl, device.createPipelineLayout({bindGroupLayouts: [bgl]})];
    }

    function pipeline(code, entry, lay, label) {
      device.pushErrorScope("validation");
      const module = device.createShaderModule({code, label});
      const pipe = device.createComputePipeline({layout: lay[1], compute: {module, entryPoint: entry}, label});
      const popped = device.popErrorScope();
      const check = Promise.all([popped, module.getCompilationInfo()]).then(([err, info]) => {
        const located = formatCompileMessages(info.messages, "wgsl");
        if (located) return located + (err ? "\n" + err.message : "");
        return err ? err.message : null;
      });
      return [[pipe, lay[0]], check];
    }

    function bindGroup(handle, uniform, uniformSize, ...bufs) {
      scope();
      const entries = [];
      for (let i = 0; i < bufs.length; i += 2) {
        entries.push({binding: i / 2, resource: {buffer: bufs[i], offset: 0, size: bufs[i + 1]}});
      }
      entries.push({binding: bufs.length / 2, resource: {buffer: uniform, offset: 0, size: uniformSize}});
      return device.createBindGroup({layout: handle[1], entries});
    }

    function dispatch(handle, bg, uniformOffset, x, y, z) {
      if (pass === null) {
        scope();
        encoder = device.createCommandEncoder();
        pass = encoder.beginComputePass();
      }
      pass.setPipeline(handle[0]);
      offsets[0] = uniformOffset;
      pass.setBindGroup(0, bg, offsets, 0, 1);
      pass.dispatchWorkgroups(x, y, z);
    }

    function submit(...copies) {
      let enc = encoder;
      if (pass !== null) pass.end();
      else if (copies.length) { scope(); enc = device.createCommandEncoder(); }
      encoder = pass = null;
      if (enc !== null) {
        for (let i = 0; i < copies.length; i += 5) {
          enc.copyBufferToBuffer(copies[i], copies[i + 1], copies[i + 2], copies[i + 3], copies[i + 4]);
        }
        queue.submit([enc.finish()]);
      }
      if (scoped) { checks.push(device.popErrorScope()); scoped = false; }
    }

    function discard() {
      encoder = pass = null;
    }

    async function drain() {
      const errors = (await Promise.all(checks.splice(0))).filter((e) => e);
      return errors.map((e) => e.message).join("\n") || null;
    }

    async function read(staging, size) {
      const errors = await drain();
      if (errors) throw new Error("WebGPU validation failed: " + errors);
      await staging.mapAsync(GPUMapMode.READ, 0, size);
      try {
        return new Uint8Array(staging.getMappedRange(0, size).slice(0));
      } finally {
        staging.unmap();
      }
    }

    return {buffer, write, destroy, layout, pipeline, bindGroup, dispatch, submit, discard, drain, read};
  }

  return {requestDevice, runner};
})()
