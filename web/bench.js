// The browser benchmark: webgrad (Python in Pyodide's worker, `webgpu` backend) against the same work
// written directly in JS WebGPU on this page's own device (the floor). Results land in the table and in
// window.__bench = {done, rows: [{name, unit, webgrad, floor}], startup: {...}, backend, error}.
// Query parameters: pyodide=<url>, repeat=<timed runs of the chain and the small MLP, best kept>,
// mlp_repeat=<the same for the big MLP>, steps=<big-MLP steps per timed run>, mlp=small (skip the big MLP).
// On SwiftShader the big MLP step takes a few hundred ms, hence its small defaults.
import { startWebgrad } from "./webgrad.js";
import { $, keepQuery, params, siteOptions } from "./page.js";

const REPEAT = parseInt(params.get("repeat") || "5", 10);
const MLP_REPEAT = parseInt(params.get("mlp_repeat") || "2", 10);
const STEPS = parseInt(params.get("steps") || "3", 10);
const N_OPS = 1000, SIZE = 1024;                      // the chain of bench/bench_gpu.py: y = y * 1.0001
const LR = 0.01, D_OUT = 10;
const MLPS = [  // the MLP step of bench/bench_cpu.py, and a small one where per-op overhead dominates
  { b: 128, d_in: 784, d_h: 256, d_out: D_OUT, steps: STEPS, repeat: MLP_REPEAT },
  { b: 32, d_in: 32, d_h: 64, d_out: D_OUT, steps: 20, repeat: REPEAT },
].slice(params.get("mlp") === "small" ? 1 : 0);
const bench = (window.__bench = { done: false, rows: [], startup: null, backend: null, error: null });

// ------------------------------------------------------------------ the same data on both sides

// uniform [-1, 1) from a 32-bit LCG; exact in doubles, so Python computes the same values
function lcg(seed, n, scale = 1) {
  const out = new Float32Array(n);
  for (let i = 0, s = seed; i < n; i++) {
    s = (s * 1664525 + 1013904223) % 4294967296;
    out[i] = (s / 2147483648 - 1) * scale;
  }
  return out;
}
const labels = (b) => Uint32Array.from(lcg(4, b), (v) => Math.min(D_OUT - 1, Math.floor((v + 1) * D_OUT / 2)));

const PYTHON = `
import json, math, time
import webgrad as wg

def lcg(seed, n, scale=1.0):
    out, s = [0.0] * n, seed
    for i in range(n):
        s = (s * 1664525 + 1013904223) % 4294967296
        out[i] = (s / 2147483648 - 1) * scale
    return out

async def best_of(repeat, fn):
    await fn()
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        await fn()
        best = min(best, time.perf_counter() - t)
    return best

def record():
    y = x
    for _ in range(${N_OPS}):
        y = y * 1.0001
    return y

async def chain():
    return await best_of(${REPEAT}, lambda: record().read()) / ${N_OPS} * 1e6, (await record().read())[0]

async def chain_recording():
    times = []
    async def run():
        t = time.perf_counter()
        y = record()
        times.append(time.perf_counter() - t)
        await y.read()
    await best_of(${REPEAT}, run)
    return min(times) / ${N_OPS} * 1e6

async def mlp(b, d_in, d_h, d_out, steps, repeat):
    x = wg.tensor(lcg(1, b * d_in, 3 ** 0.5)).reshape(b, d_in)
    y = wg.tensor([min(d_out - 1, int((v + 1) * d_out / 2)) for v in lcg(4, b)])
    w1 = wg.tensor(lcg(2, d_in * d_h, (3 / d_in) ** 0.5)).reshape(d_in, d_h).requires_grad_()
    w2 = wg.tensor(lcg(3, d_h * d_out, (3 / d_h) ** 0.5)).reshape(d_h, d_out).requires_grad_()
    b1, b2 = wg.zeros(d_h, requires_grad=True), wg.zeros(d_out, requires_grad=True)
    params = (w1, b1, w2, b2)
    def step():
        loss = wg.nn.functional.cross_entropy((x @ w1 + b1).relu() @ w2 + b2, y)
        loss.backward()
        with wg.no_grad():
            for p in params:
                p.sub_(p.grad * ${LR})
                p.grad = None
        return loss
    first = [await step().read() for _ in range(3)]
    async def run():
        for _ in range(steps):
            loss = step()
        return await loss.read()
    return await best_of(repeat, run) / steps * 1e3, first

x = wg.ones(${SIZE})
chain_us, chain_value = await chain()
recording_us = await chain_recording()
mlps = [await mlp(**cfg) for cfg in json.loads(${JSON.stringify(JSON.stringify(MLPS))})]
print(json.dumps({"backend": wg.get_backend().name, "chain_us": chain_us, "chain_value": chain_value,
                  "recording_us": recording_us, "mlps": mlps}))
`;

// ------------------------------------------------------------------ the floor: direct JS WebGPU

const CHAIN_WGSL = `
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < arrayLength(&c)) { c[g.x] = a[g.x] * 1.0001; }
}`;

// C = op(A) @ op(B) (+ bias, ReLU by flags), operands read through strides (so transposes need no copy);
// a 16x16 workgroup computes a 64x64 tile, each thread a 4x4 register block (webgrad's matmul scheme)
const MATMUL_WGSL = `
struct Dims { M: u32, N: u32, K: u32, a_rs: u32, a_cs: u32, b_rs: u32, b_cs: u32, flags: u32 }
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> Bm: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;
@group(0) @binding(4) var<uniform> d: Dims;
var<workgroup> As: array<vec4<f32>, 256>;  // [16 k][16 groups of 4 rows]
var<workgroup> Bs: array<vec4<f32>, 256>;  // [16 k][16 groups of 4 cols]
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row0 = w.y * 64u;
  let col0 = w.x * 64u;
  let lk = lid % 16u;
  let lg = lid / 16u;
  var acc: array<vec4<f32>, 4>;
  for (var k0 = 0u; k0 < d.K; k0 += 16u) {
    var va = vec4<f32>(0.0);
    var vb = vec4<f32>(0.0);
    for (var i = 0u; i < 4u; i++) {
      let r = row0 + 4u * lg + i;
      let c = col0 + 4u * lg + i;
      if (r < d.M && k0 + lk < d.K) { va[i] = A[r * d.a_rs + (k0 + lk) * d.a_cs]; }
      if (c < d.N && k0 + lk < d.K) { vb[i] = Bm[(k0 + lk) * d.b_rs + c * d.b_cs]; }
    }
    As[lk * 16u + lg] = va;
    Bs[lk * 16u + lg] = vb;
    workgroupBarrier();
    for (var k = 0u; k < 16u; k++) {
      let a = As[k * 16u + l.y];
      let b = Bs[k * 16u + l.x];
      acc[0] += a.x * b;
      acc[1] += a.y * b;
      acc[2] += a.z * b;
      acc[3] += a.w * b;
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) {
    let r = row0 + 4u * l.y + i;
    for (var j = 0u; j < 4u; j++) {
      let c = col0 + 4u * l.x + j;
      if (r < d.M && c < d.N) {
        var v = acc[i][j];
        if ((d.flags & 1u) != 0u) { v += bias[c]; }
        if ((d.flags & 2u) != 0u) { v = max(v, 0.0); }
        C[r * d.N + c] = v;
      }
    }
  }
}`;

const CE_WGSL = (B) => `
@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> labels: array<u32>;
@group(0) @binding(2) var<storage, read_write> dlogits: array<f32>;
@group(0) @binding(3) var<storage, read_write> loss: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.x;
  if (i >= ${B}u) { return; }
  var m = logits[i * ${D_OUT}u];
  for (var j = 1u; j < ${D_OUT}u; j++) { m = max(m, logits[i * ${D_OUT}u + j]); }
  var s = 0.0;
  for (var j = 0u; j < ${D_OUT}u; j++) { s += exp(logits[i * ${D_OUT}u + j] - m); }
  loss[i] = log(s) - (logits[i * ${D_OUT}u + labels[i]] - m);
  for (var j = 0u; j < ${D_OUT}u; j++) {
    let onehot = select(0.0, 1.0, j == labels[i]);
    dlogits[i * ${D_OUT}u + j] = (exp(logits[i * ${D_OUT}u + j] - m) / s - onehot) / ${B}.0;
  }
}`;

const COLSUM_WGSL = (B) => `
@group(0) @binding(0) var<storage, read> g: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let cols = arrayLength(&out);
  if (id.x >= cols) { return; }
  var s = 0.0;
  for (var i = 0u; i < ${B}u; i++) { s += g[i * cols + id.x]; }
  out[id.x] = s;
}`;

const RELU_BACK_WGSL = `
@group(0) @binding(0) var<storage, read> dr: array<f32>;
@group(0) @binding(1) var<storage, read> r: array<f32>;
@group(0) @binding(2) var<storage, read_write> dh: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < arrayLength(&dh)) { dh[g.x] = select(0.0, dr[g.x], r[g.x] > 0.0); }
}`;

const SGD_WGSL = `
@group(0) @binding(0) var<storage, read_write> p: array<f32>;
@group(0) @binding(1) var<storage, read> grad: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < arrayLength(&p)) { p[g.x] -= ${LR} * grad[g.x]; }
}`;

class Floor {
  constructor(device) {
    this.device = device;
    this.pipelines = new Map();
  }
  pipeline(code) {
    if (!this.pipelines.has(code)) {
      const module = this.device.createShaderModule({ code });
      this.pipelines.set(code, this.device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } }));
    }
    return this.pipelines.get(code);
  }
  buffer(data, usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST) {
    const size = typeof data === "number" ? data * 4 : data.byteLength;
    const buf = this.device.createBuffer({ size, usage });
    if (typeof data !== "number") this.device.queue.writeBuffer(buf, 0, data);
    return buf;
  }
  // one dispatch, prepared once: [pipeline, bind group, workgroups x, workgroups y]
  dispatch(code, buffers, x, y = 1) {
    const pipe = this.pipeline(code);
    const group = this.device.createBindGroup({
      layout: pipe.getBindGroupLayout(0),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    return [pipe, group, x, y];
  }
  // record `dispatches` in one compute pass and submit; the promise reads `count` floats of `buf` back
  run(dispatches, buf, count) {
    const enc = this.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    for (const [pipe, group, x, y] of dispatches) {
      pass.setPipeline(pipe);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(x, y);
    }
    pass.end();
    const staging = this.device.createBuffer({ size: count * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    enc.copyBufferToBuffer(buf, 0, staging, 0, count * 4);
    this.device.queue.submit([enc.finish()]);
    return staging.mapAsync(GPUMapMode.READ).then(() => {
      const out = new Float32Array(staging.getMappedRange().slice(0));
      staging.destroy();
      return out;
    });
  }
}

async function bestOf(repeat, fn) {
  await fn();
  let best = Infinity;
  for (let i = 0; i < repeat; i++) {
    const t = performance.now();
    await fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

async function floorChain(f) {
  const bufs = [f.buffer(new Float32Array(SIZE).fill(1)), f.buffer(SIZE), f.buffer(SIZE)];
  const first = f.dispatch(CHAIN_WGSL, [bufs[0], bufs[1]], Math.ceil(SIZE / 64));
  const pingpong = [f.dispatch(CHAIN_WGSL, [bufs[1], bufs[2]], Math.ceil(SIZE / 64)),
                    f.dispatch(CHAIN_WGSL, [bufs[2], bufs[1]], Math.ceil(SIZE / 64))];
  const ops = [first, ...Array.from({ length: N_OPS - 1 }, (_, i) => pingpong[i % 2])];
  const last = bufs[1 + ((N_OPS - 1) % 2)];
  const value = (await f.run(ops, last, SIZE))[0];
  const times = [];
  await bestOf(REPEAT, () => {
    const t = performance.now();
    const done = f.run(ops, last, SIZE);
    times.push(performance.now() - t);
    return done;
  });
  return [(await bestOf(REPEAT, () => f.run(ops, last, SIZE))) / N_OPS * 1e3, value, Math.min(...times) / N_OPS * 1e3];
}

async function floorMlp(f, { b: B, d_in: D_IN, d_h: D_H, steps: STEPS, repeat }) {
  const x = f.buffer(lcg(1, B * D_IN, Math.sqrt(3))), y = f.buffer(labels(B));
  const w1 = f.buffer(lcg(2, D_IN * D_H, Math.sqrt(3 / D_IN))), b1 = f.buffer(D_H);
  const w2 = f.buffer(lcg(3, D_H * D_OUT, Math.sqrt(3 / D_H))), b2 = f.buffer(D_OUT);
  const [r, logits, dlogits, loss, dw2, db2, dr, dh, dw1, db1] =
    [B * D_H, B * D_OUT, B * D_OUT, B, D_H * D_OUT, D_OUT, B * D_H, B * D_H, D_IN * D_H, D_H].map((n) => f.buffer(n));
  const mm = (a, bm, bias, c, M, N, K, strides, flags) => f.dispatch(MATMUL_WGSL,
    [a, bm, bias, c, f.buffer(new Uint32Array([M, N, K, ...strides, flags]), GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST)],
    Math.ceil(N / 64), Math.ceil(M / 64));
  const groups = (n) => Math.ceil(n / 64);
  const step = [
    mm(x, w1, b1, r, B, D_H, D_IN, [D_IN, 1, D_H, 1], 3),             // r = relu(x @ w1 + b1)
    mm(r, w2, b2, logits, B, D_OUT, D_H, [D_H, 1, D_OUT, 1], 1),      // logits = r @ w2 + b2
    f.dispatch(CE_WGSL(B), [logits, y, dlogits, loss], groups(B)),       // loss rows, dlogits
    mm(r, dlogits, b2, dw2, D_H, D_OUT, B, [1, D_H, D_OUT, 1], 0),     // dw2 = r.T @ dlogits
    f.dispatch(COLSUM_WGSL(B), [dlogits, db2], groups(D_OUT)),           // db2
    mm(dlogits, w2, b1, dr, B, D_H, D_OUT, [D_OUT, 1, 1, D_OUT], 0),  // dr = dlogits @ w2.T
    f.dispatch(RELU_BACK_WGSL, [dr, r, dh], groups(B * D_H)),         // dh = dr * (h > 0)
    mm(x, dh, b1, dw1, D_IN, D_H, B, [1, D_IN, D_H, 1], 0),           // dw1 = x.T @ dh
    f.dispatch(COLSUM_WGSL(B), [dh, db1], groups(D_H)),                  // db1
    ...[[w1, dw1], [b1, db1], [w2, dw2], [b2, db2]].map(([p, g]) => f.dispatch(SGD_WGSL, [p, g], groups(p.size / 4))),
  ];
  const mean = (rows) => rows.reduce((s, v) => s + v, 0) / rows.length;
  const first = [];
  for (let i = 0; i < 3; i++) first.push(mean(await f.run(step, loss, B)));
  const steps = Array.from({ length: STEPS }, () => step).flat();
  return [(await bestOf(repeat, () => f.run(steps, loss, B))) / STEPS, first];
}

// ------------------------------------------------------------------ the page

function addRow(name, unit, ours, floor, digits = 2) {
  bench.rows.push({ name, unit, webgrad: ours, floor });
  const tr = document.createElement("tr");
  const cells = [name, unit, ours.toFixed(digits), floor == null ? "–" : floor.toFixed(digits),
                 floor == null ? "–" : (ours / floor).toFixed(2)];
  tr.replaceChildren(...cells.map((text) => Object.assign(document.createElement("td"), { textContent: text })));
  $("results").tBodies[0].append(tr);
}

function check(what, got, want) {
  const bad = got.some((v, i) => !(Math.abs(v - want[i]) <= 1e-3 * Math.abs(want[i]) + 1e-5));
  if (bad) throw new Error(`${what}: webgrad gives ${got}, the direct-JS floor ${want}`);
}

async function main() {
  keepQuery();
  const t0 = performance.now();
  const wg = await startWebgrad({ ...siteOptions(), onStatus: (t) => ($("status").textContent = t) });
  const tReady = performance.now();
  const first = await wg.run("import webgrad as wg\nprint(await (wg.ones(4) * 2).sum().read())");
  if (first.error) throw new Error(first.error);
  const tFirst = performance.now();
  bench.startup = { ready_ms: tReady - t0, first_result_ms: tFirst - t0 };
  bench.backend = wg.backend;
  $("backend").textContent = wg.backend.name;
  $("adapter").textContent = wg.backend.adapter || "(none)";

  $("status").textContent = "timing webgrad…";
  const r = await wg.run(PYTHON);
  if (r.error) throw new Error(r.error);
  const ours = JSON.parse(r.stdout.trim().split("\n").at(-1));
  if (ours.backend !== "webgpu") throw new Error(`webgrad ran on ${ours.backend}, not webgpu`);

  $("status").textContent = "timing the direct-JS floor…";
  const adapter = await navigator.gpu.requestAdapter();
  const f = new Floor(await adapter.requestDevice());
  const [chainUs, chainValue, recordingUs] = await floorChain(f);
  check("1000-op chain result", [ours.chain_value], [chainValue]);
  addRow(`${N_OPS}-op elementwise chain (y * 1.0001, ${SIZE} floats), to readback`, "µs/op", ours.chain_us, chainUs);
  addRow(`the same chain, recording and submitting only`, "µs/op", ours.recording_us, recordingUs);
  for (const [i, cfg] of MLPS.entries()) {
    const [ms, first] = await floorMlp(f, cfg);
    const [oursMs, oursFirst] = ours.mlps[i];
    check(`MLP ${i} losses over 3 steps`, oursFirst, first);
    addRow(`MLP ${cfg.d_in}-${cfg.d_h}-${cfg.d_out} SGD step, batch ${cfg.b}`, "ms/step", oursMs, ms);
  }
  addRow("Pyodide start-up to first result", "ms", bench.startup.first_result_ms, null, 0);
  $("notes").textContent = `best of ${REPEAT} runs (big MLP: ${MLP_REPEAT} runs of ${STEPS} steps; small MLP: runs of 20 steps); startWebgrad resolved after ` +
    `${bench.startup.ready_ms.toFixed(0)} ms. ${navigator.userAgent}`;
  $("status").textContent = "done";
  bench.done = true;
}

main().catch((err) => {
  bench.error = String(err && err.message || err);
  $("error").textContent = bench.error;
  $("status").textContent = "failed";
  bench.done = true;
});
