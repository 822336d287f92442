"""GPU backend benchmarks, each against a floor written directly with wgpu-py, all in one run:

* per-op overhead: a 1000-op elementwise chain ``y = y * 1.0001`` (1024 floats) in µs/op, vs
  1000 raw dispatches of a vec4 kernel of the same size recorded in one pass (the floor), and
  the same chain on ``cpu``;
* elementwise bandwidth (GB/s): webgrad ``a + b`` (4M floats) vs a directly written vec4 add;
* matmul GFLOP/s at 512³ and 2048³ vs a directly written WGSL matmul specialised to the
  benchmark shapes (64x64 tiles, 4x4 register blocks, vec4 global loads, no bounds checks);
* an MLP training step (784-256-10, ReLU, cross-entropy, SGD; batch 128) on ``cpu`` and ``wgpu``;
* where the adapter has GPU timestamps: the elementwise and 512³ matmul kernels alone (device
  time per dispatch, webgrad's through ``webgrad.profile()``), which Python and load affect less.

webgrad and its floor run interleaved, ``--repeat`` rounds (default 7); the table gives the best
round of each, and as the ratio the median over rounds of the ratio within a round (each pair ran
back to back, so changes in load from other processes cancel out). Outputs are checked against
numpy first. On lavapipe (a CPU adapter) absolute numbers mean little; the ratios are what count.

Ratios: time per op webgrad / floor for the chain (lower is better), throughput webgrad / floor
for bandwidth and matmul (higher is better), time wgpu / cpu for the MLP step.

Run: ``python bench/bench_gpu.py [--repeat N] [--no-big]`` (``--no-big`` skips 2048³, about a
minute on lavapipe; it runs 3 rounds of one matmul each).
"""
from __future__ import annotations

import datetime
import os
import platform
import statistics
import sys
import time

import numpy as np
import wgpu

import webgrad as wg

STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST

RAW_ADD = """
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = g.y * n.x * 64u + g.x;
    if (i < arrayLength(&c)) { c[i] = a[i] + b[i]; }
}
"""

RAW_MATMUL = """
// C = A @ B, row-major; M, N multiples of 64 and K of 16 (the benchmark shapes): no bounds checks.
// Each 16x16 workgroup computes a 64x64 tile, each thread a 4x4 register block; vec4 global loads.
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> dims: vec4<u32>;
var<workgroup> As: array<vec4<f32>, 256>;   // [16 k][16 groups of 4 rows]
var<workgroup> Bs: array<vec4<f32>, 256>;   // [16 k][16 groups of 4 cols]
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let N4 = dims.y / 4u;
    let K4 = dims.z / 4u;
    let row0 = w.y * 64u;
    let col0 = w.x * 64u;
    let ar = lid / 4u;            // A tile: 64 rows x 4 vec4 along k
    let ak = lid % 4u;
    let bk = lid / 16u;           // B tile: 16 k x 16 vec4 along n
    let bn = lid % 16u;
    var acc: array<vec4<f32>, 4>;
    for (var k0 = 0u; k0 < dims.z; k0 += 16u) {
        let av = a[(row0 + ar) * K4 + k0 / 4u + ak];
        let q = ar / 4u;
        let r = ar % 4u;
        As[(ak * 4u) * 16u + q][r] = av.x;
        As[(ak * 4u + 1u) * 16u + q][r] = av.y;
        As[(ak * 4u + 2u) * 16u + q][r] = av.z;
        As[(ak * 4u + 3u) * 16u + q][r] = av.w;
        Bs[bk * 16u + bn] = b[(k0 + bk) * N4 + col0 / 4u + bn];
        workgroupBarrier();
        for (var kk = 0u; kk < 16u; kk++) {
            let x = As[kk * 16u + l.y];
            let y = Bs[kk * 16u + l.x];
            acc[0] += x.x * y;
            acc[1] += x.y * y;
            acc[2] += x.z * y;
            acc[3] += x.w * y;
        }
        workgroupBarrier();
    }
    for (var r = 0u; r < 4u; r++) { c[(row0 + l.y * 4u + r) * N4 + col0 / 4u + l.x] = acc[r]; }
}
"""


def gpu_backend():
    return wg.registry.backend("wgpu")


def sync(be):
    """Wait for all submitted work (a 16-byte readback)."""
    be.read_bytes(be.alloc((4,), wg.float32))


def interleaved(contenders: dict, repeat: int) -> dict:
    """{name: [seconds of one call, per round]} over ``repeat`` rounds, the contenders taking turns."""
    for fn in contenders.values():
        fn()                                   # warm-up: pipelines, pools, caches
    times = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


def time_ratio(times, a, b) -> float:
    """Median over rounds of a's time / b's time (each round's pair ran back to back, so a
    change in the machine's load between rounds cancels out)."""
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


class Raw:
    """A compute pipeline and bind group written directly with wgpu-py."""

    def __init__(self, dev, code, buffers, uniform=None):
        self.dev = dev
        self.pipe = dev.create_compute_pipeline(layout="auto", compute={
            "module": dev.create_shader_module(code=code), "entry_point": "main"})
        self.buffers = buffers
        self.uniform = uniform

    def bind_group(self, order=None):
        bufs = [self.buffers[k] for k in (order or range(len(self.buffers)))]
        entries = [{"binding": k, "resource": {"buffer": b, "offset": 0, "size": b.size}} for k, b in enumerate(bufs)]
        if self.uniform is not None:
            entries.append({"binding": len(bufs), "resource": {"buffer": self.uniform, "offset": 0, "size": 16}})
        return self.dev.create_bind_group(layout=self.pipe.get_bind_group_layout(0), entries=entries)

    def run(self, groups_seq, xy):
        """Record dispatches (one per bind group in ``groups_seq``) in one pass, submit, wait."""
        enc = self.dev.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(self.pipe)
        for bg in groups_seq:
            p.set_bind_group(0, bg)
            p.dispatch_workgroups(*xy)
        p.end()
        self.dev.queue.submit([enc.finish()])
        return self.dev.queue.read_buffer(self.buffers[-1], 0, 16)

    def device_seconds(self, bg, xy, reps) -> float:
        """Mean device time of one dispatch (GPU timestamps around a pass per dispatch)."""
        qs = self.dev.create_query_set(type=wgpu.QueryType.timestamp, count=2 * reps)
        res = self.dev.create_buffer(size=16 * reps, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        enc = self.dev.create_command_encoder()
        for i in range(reps):
            p = enc.begin_compute_pass(timestamp_writes={
                "query_set": qs, "beginning_of_pass_write_index": 2 * i, "end_of_pass_write_index": 2 * i + 1})
            p.set_pipeline(self.pipe)
            p.set_bind_group(0, bg)
            p.dispatch_workgroups(*xy)
            p.end()
        enc.resolve_query_set(qs, 0, 2 * reps, res, 0)
        self.dev.queue.submit([enc.finish()])
        ticks = np.frombuffer(self.dev.queue.read_buffer(res), np.uint64).astype(np.int64)
        return float(np.mean(ticks[1::2] - ticks[0::2])) * 1e-9


def device_seconds(kernel, run) -> float:
    """Mean device time of one ``kernel`` dispatch while ``run()`` runs (webgrad.profile's GPU timestamps)."""
    with wg.profile() as prof:
        run()
    s = prof.stats[kernel]
    return s.device_s / s.calls


# ---------------------------------------------------------------- per-op overhead

def chain_fn(backend, n_ops, size=1024):
    x = wg.tensor(np.ones(size, np.float32), backend=backend)

    def run():
        y = x
        for _ in range(n_ops):
            y = y * 1.0001
        return y.tolist()
    got = run()
    assert abs(got[0] - 1.0001 ** n_ops) < 1e-3, got[0]
    return run


def raw_chain_fn(be, n_ops, size=1024):
    dev = be.device.device
    raw = Raw(dev, RAW_ADD, [dev.create_buffer(size=size * 4, usage=STORAGE) for _ in range(3)])
    groups = [raw.bind_group(order) for order in ((0, 1, 2), (2, 1, 0))]  # c = a + b, then a = c + b
    seq = [groups[i % 2] for i in range(n_ops)]
    wgs = -(-size // 4 // 64)
    return lambda: raw.run(seq, (wgs,))


# ---------------------------------------------------------------- bandwidth

def add_fn(be, n, reps):
    a0, b0 = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    a, b = wg.tensor(a0, backend="wgpu"), wg.tensor(b0, backend="wgpu")
    assert np.allclose((a + b).numpy(), a0 + b0)

    def run():
        for _ in range(reps):
            c = a + b
        sync(be)
        return c
    return run


def raw_add_fn(be, n, reps):
    dev = be.device.device
    raw = Raw(dev, RAW_ADD, [dev.create_buffer(size=n * 4, usage=STORAGE) for _ in range(3)])
    bg = raw.bind_group()
    groups = -(-n // 4 // 64)
    xy = (groups, 1) if groups <= 65535 else (-(-groups // -(-groups // 65535)), -(-groups // 65535))
    run = lambda: raw.run([bg] * reps, xy)        # noqa: E731
    run.device_seconds = lambda: raw.device_seconds(bg, xy, reps)
    return run


# ---------------------------------------------------------------- matmul

def matmul_fn(be, n, reps):
    a0, b0 = (np.random.rand(n, n).astype(np.float32) for _ in range(2))
    a, b = wg.tensor(a0, backend="wgpu"), wg.tensor(b0, backend="wgpu")
    assert np.allclose((a @ b).numpy(), a0 @ b0, rtol=1e-3, atol=1e-2)

    def run():
        for _ in range(reps):
            c = a @ b
        sync(be)
        return c
    return run


def raw_matmul_fn(be, n, reps):
    dev = be.device.device
    a0, b0 = (np.random.rand(n, n).astype(np.float32) for _ in range(2))
    bufs = [dev.create_buffer_with_data(data=a0.tobytes(), usage=STORAGE),
            dev.create_buffer_with_data(data=b0.tobytes(), usage=STORAGE),
            dev.create_buffer(size=n * n * 4, usage=STORAGE)]
    dims = dev.create_buffer_with_data(data=np.array([n, n, n, 0], np.uint32).tobytes(), usage=wgpu.BufferUsage.UNIFORM)
    raw = Raw(dev, RAW_MATMUL, bufs, dims)
    bg = raw.bind_group()
    raw.run([bg], (n // 64, n // 64))
    got = np.frombuffer(dev.queue.read_buffer(bufs[2]), np.float32).reshape(n, n)
    assert np.allclose(got, a0 @ b0, rtol=1e-3, atol=1e-2)
    run = lambda: raw.run([bg] * reps, (n // 64, n // 64))     # noqa: E731
    run.device_seconds = lambda: raw.device_seconds(bg, (n // 64, n // 64), reps)
    return run


# ---------------------------------------------------------------- MLP training step

D_IN, D_HIDDEN, D_OUT, LR = 784, 256, 10, 0.1


def mlp_fn(backend, batch, steps):
    rng = np.random.default_rng(0)
    x = wg.tensor(rng.standard_normal((batch, D_IN), dtype=np.float32), backend=backend)
    y = wg.tensor(rng.integers(0, D_OUT, batch).astype(np.int32), backend=backend)
    shapes = [(D_IN, D_HIDDEN), (D_HIDDEN,), (D_HIDDEN, D_OUT), (D_OUT,)]
    params = [wg.tensor((rng.standard_normal(s, dtype=np.float32) * np.float32(s[0] ** -0.5)) if len(s) == 2
                        else np.zeros(s, np.float32), backend=backend, requires_grad=True) for s in shapes]
    w1, b1, w2, b2 = params

    def step():
        loss = wg.nn.functional.cross_entropy((x @ w1 + b1).relu() @ w2 + b2, y)
        loss.backward()
        with wg.no_grad():
            for p in params:
                p.sub_(p.grad * LR)
                p.grad = None
        return loss

    def run():
        for _ in range(steps):
            loss = step()
        return loss.item()
    return run


# ---------------------------------------------------------------- report

def environment(be) -> list:
    info = be.device.info
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return [f"date: {datetime.date.today().isoformat()}",
            f"machine: {os.cpu_count()} cpus, {cpu}; load average {os.getloadavg()[0]:.2f} at start",
            f"adapter: {info.get('device')} ({info.get('adapter_type')}, {info.get('backend_type')}; "
            f"{info.get('description')})",
            f"versions: python {platform.python_version()}, wgpu-py {wgpu.__version__}, numpy {np.__version__}, "
            f"webgrad {wg.__version__}"]


def device_rows(be, kernel, ours, raw, label, work) -> list:
    """The kernels alone: mean device time per dispatch from GPU timestamps (when the adapter
    has them), as throughput, webgrad's vs the floor's."""
    if not be.device.timestamps:
        return []
    unit = "GB/s" if kernel == "Add" else "GFLOP/s"
    a, b = work / device_seconds(kernel, ours) / 1e9, work / raw.device_seconds() / 1e9
    return [(f"{label}, kernel only (GPU timestamps)", unit, a, b, a / b, "≥ 90%", a / b >= 0.9)]


def main(argv):
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 7
    be = gpu_backend()
    lines = environment(be)
    rows = []    # (benchmark, unit, webgrad, floor, webgrad/floor, target, met)

    n_ops = 1000
    t = interleaved({"wgpu": chain_fn("wgpu", n_ops), "raw": raw_chain_fn(be, n_ops),
                     "cpu": chain_fn("cpu", n_ops)}, repeat)
    ours, floor, ratio = min(t["wgpu"]) / n_ops * 1e6, min(t["raw"]) / n_ops * 1e6, time_ratio(t, "wgpu", "raw")
    rows.append(("1000-op elementwise chain, 1024 floats", "µs/op", ours, floor, ratio, "≤ 1.5×", ratio <= 1.5))
    rows.append(("same chain on cpu (reference)", "µs/op", min(t["cpu"]) / n_ops * 1e6, None, None, "", None))

    n, reps = 1 << 22, 10
    ours, raw = add_fn(be, n, reps), raw_add_fn(be, n, reps)
    t = interleaved({"wgpu": ours, "raw": raw}, repeat)
    ratio = time_ratio(t, "raw", "wgpu")
    rows.append((f"elementwise a + b, {n} floats", "GB/s", 12 * n * reps / min(t["wgpu"]) / 1e9,
                 12 * n * reps / min(t["raw"]) / 1e9, ratio, "≥ 90%", ratio >= 0.9))
    rows += device_rows(be, "Add", ours, raw, f"elementwise a + b, {n} floats", 12 * n)

    for size, reps, rep in ((512, 5, repeat), (2048, 1, 3)):
        if size == 2048 and "--no-big" in argv:
            continue
        ours, raw = matmul_fn(be, size, reps), raw_matmul_fn(be, size, reps)
        t = interleaved({"wgpu": ours, "raw": raw}, rep)
        ratio = time_ratio(t, "raw", "wgpu")
        rows.append((f"matmul {size}³ ({rep} rounds)", "GFLOP/s", 2 * size ** 3 * reps / min(t["wgpu"]) / 1e9,
                     2 * size ** 3 * reps / min(t["raw"]) / 1e9, ratio, "≥ 90%", ratio >= 0.9))
        if size == 512:
            rows += device_rows(be, "MatMul", ours, raw, f"matmul {size}³", 2 * size ** 3)

    steps = 5
    t = interleaved({b: mlp_fn(b, 128, steps) for b in ("cpu", "wgpu")}, repeat)
    rows.append(("MLP 784-256-10 train step, batch 128 (floor column: cpu)", "ms/step", min(t["wgpu"]) / steps * 1e3,
                 min(t["cpu"]) / steps * 1e3, time_ratio(t, "wgpu", "cpu"), "", None))

    lines.append(f"load average at end: {os.getloadavg()[0]:.2f}")
    print("\n".join(lines) + "\n")
    print("| benchmark | unit | webgrad wgpu | floor | ratio | target | met |")
    print("|---|---|---:|---:|---:|---|---|")
    for name, unit, ours, floor, ratio, target, met in rows:
        cells = [name, unit, f"{ours:.2f}", "-" if floor is None else f"{floor:.2f}",
                 "-" if ratio is None else f"{ratio:.2f}", target or "-", {True: "yes", False: "no", None: "-"}[met]]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
