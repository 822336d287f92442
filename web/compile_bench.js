// The compile benchmark: one MLP 784-256-10 SGD training step at batch 128, on WebGPU, written in each
// library's own idiom: webgrad eager and wg.compile'd (Pyodide in a worker, `webgpu` backend), TensorFlow.js
// (its `webgpu` backend, optimizer.minimize) and jax-js (jit(valueAndGrad + the SGD update)). The JS libraries
// are served at ./contenders/ (a node_modules folder: bench/js/, `npm install` there). Each round times every
// contender once (`steps` steps, then the last loss read back); the table gives medians over rounds, and the
// compiled step's ratio to each contender is the median of the per-round ratios. Also measured: the compiled
// replay's call (Python, and the JS encoding inside it) per kernel, and the dispatches per step, eager and
// compiled. All four start from the same weights and data (an LCG): their first three losses must agree.
// Query: pyodide=<url>, rounds=<n>, steps=<n>, contenders=<url of the node_modules folder>.
// Also timed: the step's five matrix products alone, webgrad against jax-js (where the step's time goes).
// window.__cbench = {done, rows: {name: [ms per round]}, ratios, losses, replay, dispatches, matmuls, versions, error}.
import { startWebgrad } from "./webgrad.js";
import { $, keepQuery, loadScript, params, siteOptions } from "./page.js";

const ROUNDS = parseInt(params.get("rounds") || "5", 10);
const STEPS = parseInt(params.get("steps") || "3", 10);
const BASE = params.get("contenders") || "./contenders/";
const B = 128, D_IN = 784, D_H = 256, D_OUT = 10, LR = 0.01;
const out = (window.__cbench = { done: false, rows: {}, ratios: {}, losses: {}, replay: null, dispatches: null,
                                 versions: {}, error: null });

// uniform [-1, 1) from a 32-bit LCG; exact in doubles, so Python computes the same values (bench.js's)
function lcg(seed, n, scale = 1) {
  const v = new Float32Array(n);
  for (let i = 0, s = seed; i < n; i++) {
    s = (s * 1664525 + 1013904223) % 4294967296;
    v[i] = (s / 2147483648 - 1) * scale;
  }
  return v;
}
const labels = () => Int32Array.from(lcg(4, B), (v) => Math.min(D_OUT - 1, Math.floor((v + 1) * D_OUT / 2)));
const init = () => ({ x: lcg(1, B * D_IN, Math.sqrt(3)), w1: lcg(2, D_IN * D_H, Math.sqrt(3 / D_IN)),
                      w2: lcg(3, D_H * D_OUT, Math.sqrt(3 / D_H)), y: labels() });

const PYTHON = `
import json, statistics, time
import webgrad as wg
import webgrad.nn.functional as F

B, D_IN, D_H, D_OUT, LR = ${B}, ${D_IN}, ${D_H}, ${D_OUT}, ${LR}

def lcg(seed, n, scale=1.0):
    out, s = [0.0] * n, seed
    for i in range(n):
        s = (s * 1664525 + 1013904223) % 4294967296
        out[i] = (s / 2147483648 - 1) * scale
    return out

X, W1, W2 = lcg(1, B * D_IN, 3 ** 0.5), lcg(2, D_IN * D_H, (3 / D_IN) ** 0.5), lcg(3, D_H * D_OUT, (3 / D_H) ** 0.5)
Y = [min(D_OUT - 1, int((v + 1) * D_OUT / 2)) for v in lcg(4, B)]
be = wg.backend("webgpu")

def make(compiled):
    x, y = wg.tensor(X).reshape(B, D_IN), wg.tensor(Y)
    w1, w2 = wg.tensor(W1).reshape(D_IN, D_H).requires_grad_(), wg.tensor(W2).reshape(D_H, D_OUT).requires_grad_()
    b1, b2 = wg.zeros(D_H, requires_grad=True), wg.zeros(D_OUT, requires_grad=True)
    opt = wg.optim.SGD([w1, b1, w2, b2], lr=LR)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy((x @ w1 + b1).relu() @ w2 + b2, y)
        loss.backward()
        opt.step()
        return loss
    fn = wg.compile(step) if compiled else step
    return (lambda: fn(x, y)), fn

runs, fns, first = {}, {}, {}
for name in ("eager", "compiled"):
    runs[name], fns[name] = make(name == "compiled")
    first[name] = [await runs[name]().read() for _ in range(3)]

M = {"x": wg.tensor(X).reshape(B, D_IN), "w1": wg.tensor(W1).reshape(D_IN, D_H), "h": wg.ones(B, D_H) * 0.5,
     "w2": wg.tensor(W2).reshape(D_H, D_OUT), "dl": wg.ones(B, D_OUT) * 0.01, "dh": wg.ones(B, D_H) * 0.01}

async def matmuls(steps):
    """The step's five matrix products alone (forward x @ w1, h @ w2; backward dl @ w2.T, h.T @ dl, x.T @ dh)."""
    m = M
    t = time.perf_counter()
    for _ in range(steps):
        out = [m["x"] @ m["w1"], m["h"] @ m["w2"], m["dl"] @ m["w2"].T, m["h"].T @ m["dl"], m["x"].T @ m["dh"]]
    await out[-1].read()
    return (time.perf_counter() - t) / steps * 1e3

def held():
    """The compiled step's plan that the device holds (the first trace's guard set may differ from later ones)."""
    entries = [e.run_steps for e in fns["compiled"].plans.values()]
    return next((r for r in entries if getattr(r, "handle", None) is not None), entries[-1])

async def timed(name, steps):
    run = runs[name]
    t = time.perf_counter()
    for _ in range(steps):
        loss = run()
    await loss.read()
    return (time.perf_counter() - t) / steps * 1e3

def dispatches_of(run):
    count, dispatch = [0], be.device.dispatch
    def counting(*args):
        count[0] += 1
        return dispatch(*args)
    be.device.dispatch = counting
    try:
        run()
        be.flush()
    finally:
        del be.device.dispatch
    return count[0]

async def replay_cost(n=30):
    """The compiled step's call, each of n replays on an idle queue (the mean of n: Chromium's clock ticks in
    100 µs), split into: the gpu.js call (encoding and submitting every dispatch), the rest of the held plan's
    replay (Python: buffers and per-step numbers), and the compiled function's guards and write-backs."""
    plan, totals = held(), {"js": 0.0, "replay": 0.0}
    misses = be.device.js.planMisses(plan.handle)
    run, replay = be.device._run, plan.replay
    def timed(key, fn):
        def call(*args):
            t = time.perf_counter()
            try:
                return fn(*args)
            finally:
                totals[key] += time.perf_counter() - t
        return call
    be.device._run, plan.replay = timed("js", run), timed("replay", replay)
    try:
        call, js, rep = 0.0, 0.0, 0.0
        for _ in range(n):
            await be.read_bytes_async(be.alloc((4,), wg.float32))      # an idle queue
            js0, rep0 = totals["js"], totals["replay"]
            t = time.perf_counter()
            runs["compiled"]()
            call += time.perf_counter() - t
            js, rep = js + totals["js"] - js0, rep + totals["replay"] - rep0
        totals.update(js=js, replay=rep)
    finally:
        be.device._run = run          # an attribute of the device object itself: put back
        del plan.replay
    await be.read_bytes_async(be.alloc((4,), wg.float32))
    us = lambda s: s / n * 1e6
    k = plan.dispatches
    return {"group_misses": be.device.js.planMisses(plan.handle) - misses, "replays": n, "call_us": us(call), "js_us": us(totals["js"]), "recording_us": us(totals["replay"] - totals["js"]),
            "guards_us": us(call - totals["replay"]), "kernels": k, "state": plan.state,
            "recording_us_per_kernel": us(totals["replay"] - totals["js"]) / k,
            "python_us_per_kernel": us(call - totals["js"]) / k, "call_us_per_kernel": us(call) / k}
`;

// ------------------------------------------------------------------ the JS contenders

async function version(pkg) {
  const r = await fetch(`${BASE}${pkg}/package.json`);
  return r.ok ? (await r.json()).version : null;
}

async function tfjs() {
  await loadScript(`${BASE}@tensorflow/tfjs/dist/tf.min.js`);         // npm install in bench/js/
  await loadScript(`${BASE}@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js`);
  const tf = globalThis.tf;
  if (!(await tf.setBackend("webgpu"))) throw new Error("TensorFlow.js: the webgpu backend did not start");
  await tf.ready();
  const d = init();
  const x = tf.tensor2d(d.x, [B, D_IN]), y = tf.oneHot(tf.tensor1d(d.y, "int32"), D_OUT);
  const w1 = tf.variable(tf.tensor2d(d.w1, [D_IN, D_H])), b1 = tf.variable(tf.zeros([D_H]));
  const w2 = tf.variable(tf.tensor2d(d.w2, [D_H, D_OUT])), b2 = tf.variable(tf.zeros([D_OUT]));
  const opt = tf.train.sgd(LR);
  const step = () => opt.minimize(() => tf.losses.softmaxCrossEntropy(y, tf.relu(x.matMul(w1).add(b1)).matMul(w2).add(b2)), true);
  return async (steps) => {
    let loss = null;
    for (let i = 0; i < steps; i++) {
      if (loss) loss.dispose();
      loss = step();
    }
    const v = (await loss.data())[0];
    loss.dispose();
    return v;
  };
}

async function jaxjs() {
  const jax = await import(`${BASE}@jax-js/jax/dist/index.js`);
  const { numpy: np, nn, jit, valueAndGrad, tree } = jax;
  const devices = await jax.init();
  if (!devices.includes("webgpu")) throw new Error(`jax-js: no webgpu device (got ${devices})`);
  jax.defaultDevice("webgpu");
  const d = init();
  const x = np.array(d.x).reshape([B, D_IN]);
  const y = nn.oneHot(np.array(d.y, { dtype: np.int32 }), D_OUT);
  let p = { w1: np.array(d.w1).reshape([D_IN, D_H]), b1: np.zeros([D_H]),
            w2: np.array(d.w2).reshape([D_H, D_OUT]), b2: np.zeros([D_OUT]) };
  const lossFn = (p, x, y) => {
    const logits = np.matmul(nn.relu(np.matmul(x, p.w1).add(p.b1)), p.w2).add(p.b2);
    return nn.logSoftmax(logits, -1).mul(y).sum().mul(-1 / B);
  };
  const step = jit((p, x, y) => {
    const [loss, g] = valueAndGrad(lossFn)(tree.ref(p), x, y);   // p is used again below: a reference (move semantics)
    return [loss, tree.map((a, b) => a.sub(b.mul(LR)), p, g)];
  });
  const run = async (steps) => {
    let loss = null;
    for (let i = 0; i < steps; i++) {
      if (loss) loss.dispose();
      [loss, p] = step(p, x.ref, y.ref);
    }
    return (await loss.data())[0];
  };
  // the step's five matrix products alone, as webgrad's matmuls() (jit: one call)
  const m = { x, w1: np.array(d.w1).reshape([D_IN, D_H]), h: np.ones([B, D_H]).mul(0.5),
              w2: np.array(d.w2).reshape([D_H, D_OUT]), dl: np.ones([B, D_OUT]).mul(0.01), dh: np.ones([B, D_H]).mul(0.01) };
  const products = jit((x, w1, h, w2, dl, dh) => [np.matmul(x.ref, w1), np.matmul(h.ref, w2.ref),
    np.matmul(dl.ref, w2.transpose()), np.matmul(h.transpose(), dl), np.matmul(x.transpose(), dh)]);
  run.matmuls = async (steps) => {     // every product kept until all are computed (jax-js may be lazy)
    const t = performance.now();
    const all = [];
    for (let i = 0; i < steps; i++) all.push(...products(m.x.ref, m.w1.ref, m.h.ref, m.w2.ref, m.dl.ref, m.dh.ref));
    await jax.blockUntilReady(all);
    const ms = (performance.now() - t) / steps;
    for (const o of all) o.dispose();
    return ms;
  };
  return run;
}

// ------------------------------------------------------------------ the page

const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

function check(losses) {
  const want = losses.eager;
  for (const [name, got] of Object.entries(losses)) {
    if (got.some((v, i) => !(Math.abs(v - want[i]) <= 1e-3 * Math.abs(want[i]) + 1e-4))) {
      throw new Error(`${name}'s first losses ${got} differ from webgrad eager's ${want}`);
    }
  }
}

async function main() {
  keepQuery();
  const wg = await startWebgrad({ ...siteOptions(), onStatus: (t) => ($("status").textContent = t) });
  const py = async (code) => {
    const r = await wg.run(code);
    if (r.error) throw new Error(r.error);
    return r.stdout.trim().split("\n").at(-1);
  };
  $("status").textContent = "setting up webgrad…";
  await py(PYTHON + "\nprint('ready')");
  Object.assign(out.losses, JSON.parse(await py("print(json.dumps(first))")));
  out.dispatches = JSON.parse(await py("print(json.dumps({n: dispatches_of(runs[n]) for n in runs}))"));
  out.dispatches.compiled = JSON.parse(await py("print(json.dumps(held().dispatches))"));
  $("status").textContent = "setting up TensorFlow.js and jax-js…";
  const js = { tfjs: await tfjs(), jaxjs: await jaxjs() };
  out.versions = { tfjs: await version("@tensorflow/tfjs"), "tfjs-backend-webgpu": await version("@tensorflow/tfjs-backend-webgpu"),
                   jaxjs: await version("@jax-js/jax") };
  for (const [name, run] of Object.entries(js)) {
    out.losses[name] = [];
    for (let i = 0; i < 3; i++) out.losses[name].push(await run(1));
  }
  check(out.losses);
  const names = ["eager", "compiled", "tfjs", "jaxjs"];
  for (const n of names) out.rows[n] = [];
  for (let r = 0; r < ROUNDS; r++) {
    $("status").textContent = `round ${r + 1} of ${ROUNDS}…`;
    for (const n of ["eager", "compiled"]) out.rows[n].push(parseFloat(await py(`print(await timed(${JSON.stringify(n)}, ${STEPS}))`)));
    for (const n of ["tfjs", "jaxjs"]) {
      const t = performance.now();
      await js[n](STEPS);
      out.rows[n].push((performance.now() - t) / STEPS);
    }
  }
  for (const n of names) out.ratios[n] = median(out.rows.compiled.map((c, i) => c / out.rows[n][i]));
  $("status").textContent = "timing the step's matrix products alone…";
  out.matmuls = { webgrad: [], jaxjs: [] };
  await py("print(await matmuls(1))");          // warm-up: pipelines of the transposed products
  await js.jaxjs.matmuls(1);
  for (let r = 0; r < ROUNDS; r++) {
    out.matmuls.webgrad.push(parseFloat(await py(`print(await matmuls(${STEPS}))`)));
    out.matmuls.jaxjs.push(await js.jaxjs.matmuls(STEPS));
  }
  out.replay = JSON.parse(await py("print(json.dumps(await replay_cost()))"));
  for (const n of names) {
    const tr = document.createElement("tr");
    tr.replaceChildren(...[n, median(out.rows[n]).toFixed(1), out.ratios[n].toFixed(2)].map(
      (text) => Object.assign(document.createElement("td"), { textContent: text })));
    $("results").tBodies[0].append(tr);
  }
  $("notes").textContent = `${ROUNDS} rounds of ${STEPS} steps; dispatches per step: eager ${out.dispatches.eager}, ` +
    `compiled ${out.dispatches.compiled}; compiled replay call ${out.replay.call_us.toFixed(0)} µs ` +
    `(${out.replay.recording_us_per_kernel.toFixed(2)} µs of Python recording per kernel). ${navigator.userAgent}`;
  $("status").textContent = "done";
  out.done = true;
}

main().catch((err) => {
  out.error = String(err && err.stack || err);
  $("error").textContent = out.error;
  $("status").textContent = "failed";
  out.done = true;
});
