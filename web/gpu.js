// webgrad's WebGPU helpers for the browser device (backends/gpu/browser.py).
//
// This file is a classic script whose value is an object of functions: browser.py evaluates it
// with pyodide.code.run_js (it ships inside the wheel), so any Pyodide page gets the helpers.
// Python calls them with positional arguments only: building descriptor dicts in Python costs
// more per call and leaks proxies (DESIGN.md §7), so every descriptor is made here.
//
//   requestDevice(powerPreference)      -> Promise<{adapter, device, info, limits, features}>  (info: plain
//                                          strings; limits by WebGPU's names, e.g. "max-buffer-size"; features:
//                                          the optional ones the device was granted, e.g. ["shader-f16"])
//   runner(device)                      -> the per-device functions below (closures, no `this`)
//     buffer(size, kind)                  -> a buffer id; kind 0 storage, 1 uniform, 2 staging (MAP_READ)
//     destroy(id)
//     layout(nRead, nWrite)               -> bind group layout: nRead read-only, nWrite read-write storage,
//                                            then one uniform buffer with a dynamic offset
//     pipeline(code, entry, layout, label) -> [pipeline id, Promise<null | "wgsl:LINE:COL: error: ...">]
//     run(ops, uniformId, uniformData, data)  one batch: makes its bind groups, writes its buffers (from
//                                            data), encodes every dispatch in one compute pass, appends its
//                                            copies, writes the uniforms, submits, destroys what it was told.
//                                            ops: a Python buffer of uint32 words (see OP below), so a
//                                            batch of any length is one call from Python (null: none)
//                                          plan, ext, stepBytes (optional): a compiled plan's replay encoded after
//                                            the batch, in the same submit: ext the [buffer, size] words of its inputs
//                                            and outputs, stepBytes its per-step numbers (see plan())
//     plan(uniformData, words)            -> a compiled plan's id (backends/gpu/resident.py): its uniform blocks (a
//                                            buffer of its own) and its dispatches, each [pipeline, uniform offset,
//                                            x, y, z, n, (kind, value, size) * n] (kind 0: buffer id, 1: index into
//                                            a replay's ext, 2: the plan's uniforms), then its per-step writes, each
//                                            [kind, value, offset, start, length] of stepBytes, then the copies ending
//                                            a replay (an in-place output into its tensor's buffer), each [(kind,
//                                            value, size) of the source, of the target, length]. Bind groups are made
//                                            once per set of ext buffers (PLAN_GROUP_SETS kept)
//     drain()                             -> Promise<null | string>: the validation errors of every batch
//                                            submitted since the last drain (and forgets them)
//     read(stagingId, size)               -> Promise<Uint8Array>: maps, copies, unmaps; rejects with drain()'s
//                                            errors when there are any
//     calls()                             -> how many times Python called these functions (a count, for tests)
//     planMisses(plan)                    -> how many replays of a plan made bind groups (a new set of buffers)
//
// Objects stay here, in tables; Python holds their ids (ints), so nothing crosses the FFI per dispatch.
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
  const UNIFORM_SLOT = 256;                   // program.UNIFORM_SLOT: one dynamic-offset window
  // asked for when the adapter has them (the native device asks for the same): shader-f16 gives float16
  const OPTIONAL_FEATURES = ["shader-f16"];

  async function requestDevice(powerPreference) {
    if (!globalThis.navigator || !navigator.gpu) throw new Error("this browser has no WebGPU (navigator.gpu is undefined)");
    const adapter = await navigator.gpu.requestAdapter({powerPreference: powerPreference || "high-performance"});
    if (!adapter) throw new Error("navigator.gpu.requestAdapter() gave no adapter (WebGPU is disabled or blocklisted here)");
    const requiredLimits = {...LIMITS};
    for (const k of RAISED) requiredLimits[k] = adapter.limits[k];
    const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
    const device = await adapter.requestDevice({requiredLimits, requiredFeatures});
    const ai = adapter.info || {};
    const info = {vendor: ai.vendor || "", architecture: ai.architecture || "", device: ai.device || "",
                  description: ai.description || "", fallback: !!(ai.isFallbackAdapter || adapter.isFallbackAdapter)};
    const limits = {};                        // by WebGPU's names, as wgpu-py gives them: max-buffer-size
    for (const k of [...Object.keys(LIMITS), ...RAISED]) {
      limits[k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())] = device.limits[k];
    }
    const features = OPTIONAL_FEATURES.filter((f) => device.features.has(f));
    return {adapter, device, info, limits, features};
  }

  function formatCompileMessages(messages, label) {
    return messages.filter((m) => m.type === "error")
      .map((m) => `${label}:${m.lineNum}:${m.linePos}: error: ${m.message}`).join("\n");
  }

  // run()'s op words: an op code, then its operands
  const OP = {
    BIND: 0,        // id, pipeline, uniform size, n, (buffer, size) * n: a bind group (the uniform buffer last)
    DISPATCH: 1,    // pipeline, bind group, uniform offset, x, y, z
    COPY: 2,        // src, srcOffset, dst, dstOffset, size (after the compute pass)
    UNBIND: 3,      // id: forget a bind group
    WRITE: 4,       // buffer, offset, start, length: queue.writeBuffer of data[start:start + length]
    DESTROY: 5,     // buffer: destroyed once the batch is submitted
  };

  const PLAN_GROUP_SETS = 16;

  function runner(device) {
    const U = GPUBufferUsage;               // looked up here: without WebGPU, requestDevice() explains
    const USAGE = [U.STORAGE | U.COPY_SRC | U.COPY_DST, U.UNIFORM | U.COPY_DST, U.MAP_READ | U.COPY_DST];
    const queue = device.queue;
    const buffers = new Map(), pipelines = [], groups = new Map(), plans = [];
    let nextBuffer = 0, count = 0;
    const checks = [];                        // popErrorScope promises of submitted batches
    const offsets = new Uint32Array(1);

    function buffer(size, kind) {
      count++;
      device.pushErrorScope("validation");
      const buf = device.createBuffer({size, usage: USAGE[kind]});
      checks.push(device.popErrorScope());
      buffers.set(nextBuffer, buf);
      return nextBuffer++;
    }

    function bytes(data) {                    // [Uint8Array, release]: a Python buffer is viewed, not copied
      if (ArrayBuffer.isView(data) || data instanceof ArrayBuffer) return [data, () => {}];
      const view = data.getBuffer("u8");
      return [view.data, () => view.release()];
    }

    function writeBytes(id, offset, data) {
      const [view, release] = bytes(data);
      try {
        queue.writeBuffer(buffers.get(id), offset, view);
      } finally {
        release();
      }
    }

    function destroy(id) {
      count++;
      buffers.get(id).destroy();
      buffers.delete(id);
    }

    function layout(nRead, nWrite) {
      count++;
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
      count++;
      device.pushErrorScope("validation");
      const module = device.createShaderModule({code, label});
      const pipe = device.createComputePipeline({layout: lay[1], compute: {module, entryPoint: entry}, label});
      const popped = device.popErrorScope();
      const check = Promise.all([popped, module.getCompilationInfo()]).then(([err, info]) => {
        const located = formatCompileMessages(info.messages, "wgsl");
        if (located) return located + (err ? "\n" + err.message : "");
        return err ? err.message : null;
      });
      pipelines.push([pipe, lay[0]]);
      return [pipelines.length - 1, check];
    }

    function bindGroup(w, i, uniform) {       // OP.BIND at w[i]: returns the next op's index
      const n = w[i + 4], entries = [];
      for (let k = 0; k < n; k++) {
        entries.push({binding: k, resource: {buffer: buffers.get(w[i + 5 + 2 * k]), offset: 0, size: w[i + 6 + 2 * k]}});
      }
      entries.push({binding: n, resource: {buffer: uniform, offset: 0, size: w[i + 3]}});
      groups.set(w[i + 1], device.createBindGroup({layout: pipelines[w[i + 2]][1], entries}));
      return i + 5 + 2 * n;
    }

    function planBuffer(p, kind, value, ext) {  // a plan's buffer reference: [GPUBuffer, size]
      if (kind === 0) return [buffers.get(value[0]), value[1]];
      if (kind === 1) return [buffers.get(ext[2 * value[0]]), ext[2 * value[0] + 1]];
      return [p.uniform, p.uniform.size];
    }

    function plan(uniformData, words) {
      count++;
      const [u8, release] = bytes(uniformData);
      const uniform = device.createBuffer({size: u8.byteLength, usage: U.UNIFORM | U.COPY_DST});
      queue.writeBuffer(uniform, 0, u8);
      release();
      const [wb, releaseWords] = bytes(words);
      const w = new Uint32Array(wb.buffer, wb.byteOffset, wb.byteLength >> 2).slice();
      releaseWords();
      const p = {uniform, dispatches: [], writes: [], copies: [], sets: new Map(), misses: 0};
      let i = 1;
      for (let d = 0; d < w[0]; d++) {
        const n = w[i + 5], refs = [];
        let ext = false;
        for (let k = 0; k < n; k++) {
          const j = i + 6 + 3 * k;
          refs.push([w[j], [w[j + 1], w[j + 2]]]);
          ext = ext || w[j] === 1;
        }
        p.dispatches.push({pipe: w[i], offset: w[i + 1], x: w[i + 2], y: w[i + 3], z: w[i + 4], refs, ext, group: null});
        i += 6 + 3 * n;
      }
      const nWrites = w[i++];
      for (let k = 0; k < nWrites; k++, i += 5) p.writes.push(w.slice(i, i + 5));
      const nCopies = w[i++];
      for (let k = 0; k < nCopies; k++, i += 7) p.copies.push(w.slice(i, i + 7));
      for (const d of p.dispatches) if (!d.ext) d.group = planGroup(p, d, null);
      plans.push(p);
      return plans.length - 1;
    }

    function planGroup(p, d, ext) {
      const entries = d.refs.map(([kind, value], k) => {
        const [buffer, size] = planBuffer(p, kind, value, ext);
        return {binding: k, resource: {buffer, offset: 0, size}};
      });
      entries.push({binding: d.refs.length, resource: {buffer: p.uniform, offset: 0, size: UNIFORM_SLOT}});
      return device.createBindGroup({layout: pipelines[d.pipe][1], entries});
    }

    function planGroups(p, ext) {         // the bind groups of the dispatches, for this set of ext buffers
      let key = "";
      for (let k = 0; k < ext.length; k += 2) key += ext[k] + ",";
      let got = p.sets.get(key);
      if (got === undefined) {
        p.misses++;
        if (p.sets.size >= PLAN_GROUP_SETS) p.sets.clear();
        got = p.dispatches.map((d) => d.ext ? planGroup(p, d, ext) : d.group);
        p.sets.set(key, got);
      }
      return got;
    }

    function encodePlan(p, pass, ext, stepBytes) {
      for (const [kind, value, offset, start, length] of p.writes) {
        queue.writeBuffer(planBuffer(p, kind, [value, 0], ext)[0], offset, stepBytes, start, length);
      }
      const groups = planGroups(p, ext), ds = p.dispatches;
      for (let k = 0; k < ds.length; k++) {
        const d = ds[k];
        pass.setPipeline(pipelines[d.pipe][0]);
        offsets[0] = d.offset;
        pass.setBindGroup(0, groups[k], offsets, 0, 1);
        pass.dispatchWorkgroups(d.x, d.y, d.z);
      }
    }

    function copyPlan(p, encoder, ext) {   // a replay's closing copies, after its compute pass
      for (const c of p.copies) {
        encoder.copyBufferToBuffer(planBuffer(p, c[0], [c[1], c[2]], ext)[0], 0,
                                   planBuffer(p, c[3], [c[4], c[5]], ext)[0], 0, c[6]);
      }
    }

    function run(ops, uniformId, uniformData, data, planId, ext, stepBytes) {
      count++;
      const [opBytes, releaseOps] = ops === null || ops === undefined ? [new Uint8Array(0), () => {}] : bytes(ops);
      const [dataBytes, releaseData] = data === null || data === undefined ? [null, () => {}] : bytes(data);
      const doomed = [];
      const w = new Uint32Array(opBytes.buffer, opBytes.byteOffset, opBytes.byteLength >> 2);
      const uniform = buffers.get(uniformId);
      device.pushErrorScope("validation");
      try {
        const encoder = device.createCommandEncoder();
        let pass = null;
        for (let i = 0; i < w.length;) {
          switch (w[i]) {
            case OP.BIND: i = bindGroup(w, i, uniform); break;
            case OP.DISPATCH:
              if (pass === null) pass = encoder.beginComputePass();
              pass.setPipeline(pipelines[w[i + 1]][0]);
              offsets[0] = w[i + 3];
              pass.setBindGroup(0, groups.get(w[i + 2]), offsets, 0, 1);
              pass.dispatchWorkgroups(w[i + 4], w[i + 5], w[i + 6]);
              i += 7;
              break;
            case OP.COPY:
              if (pass !== null) { pass.end(); pass = null; }
              encoder.copyBufferToBuffer(buffers.get(w[i + 1]), w[i + 2], buffers.get(w[i + 3]), w[i + 4], w[i + 5]);
              i += 6;
              break;
            case OP.UNBIND: groups.delete(w[i + 1]); i += 2; break;
            case OP.WRITE:
              queue.writeBuffer(buffers.get(w[i + 1]), w[i + 2], dataBytes, w[i + 3], w[i + 4]);
              i += 5;
              break;
            case OP.DESTROY: doomed.push(w[i + 1]); i += 2; break;
            default: throw new Error(`webgrad gpu.js: unknown op ${w[i]} at word ${i}`);
          }
        }
        let planExt = null;
        if (planId !== undefined && planId !== null) {
          if (pass === null) pass = encoder.beginComputePass();
          const [extBytes, releaseExt] = bytes(ext);
          const [stepView, releaseStep] = stepBytes === null || stepBytes === undefined ? [null, () => {}] : bytes(stepBytes);
          try {
            planExt = new Uint32Array(extBytes.buffer, extBytes.byteOffset, extBytes.byteLength >> 2).slice();
            encodePlan(plans[planId], pass, planExt, stepView);
          } finally {
            releaseExt();
            releaseStep();
          }
        }
        if (pass !== null) pass.end();
        if (planExt !== null) copyPlan(plans[planId], encoder, planExt);
        if (uniformData !== null && uniformData !== undefined) writeBytes(uniformId, 0, uniformData);
        queue.submit([encoder.finish()]);
        for (const id of doomed) { buffers.get(id).destroy(); buffers.delete(id); }
      } finally {
        releaseOps();
        releaseData();
        checks.push(device.popErrorScope());
      }
    }

    async function drain() {
      count++;
      const errors = (await Promise.all(checks.splice(0))).filter((e) => e);
      return errors.map((e) => e.message).join("\n") || null;
    }

    async function read(id, size) {
      const errors = await drain();
      if (errors) throw new Error("WebGPU validation failed: " + errors);
      const staging = buffers.get(id);
      await staging.mapAsync(GPUMapMode.READ, 0, size);
      try {
        return new Uint8Array(staging.getMappedRange(0, size).slice(0));
      } finally {
        staging.unmap();
      }
    }

    const calls = () => count;
    const planMisses = (id) => plans[id].misses;
    return {buffer, destroy, layout, pipeline, run, plan, drain, read, calls, planMisses};
  }

  return {requestDevice, runner};
})()
