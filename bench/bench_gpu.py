"""GPU backend benchmarks, each against a floor written directly with wgpu-py in the same run:

* per-op overhead: a 1000-op elementwise chain (µs/op) vs 1000 raw dispatches recorded in one pass;
* elementwise bandwidth (GB/s): webgrad ``a + b`` vs a directly written vec4 add;
* matmul GFLOP/s at 512³ (and 2048³ with ``--big``) vs a directly written 16x16-tiled WGSL matmul;
* the same chain on ``cpu`` for reference.

Run: ``python bench/bench_gpu.py [--big]``. On lavapipe (a CPU adapter) absolute numbers mean little;
the ratios are what count.
"""
from __future__ import annotations

import sys
import time

import numpy as np
import wgpu

import webgrad as wg
from webgrad.backends.gpu import register_native

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
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: vec4<u32>;
var<workgroup> As: array<f32, 256>;
var<workgroup> Bs: array<f32, 256>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    let M = dims.x; let N = dims.y; let K = dims.z;
    let row = w.y * 16u + l.y; let col = w.x * 16u + l.x;
    var acc = 0.0;
    for (var k0 = 0u; k0 < K; k0 += 16u) {
        As[l.y * 16u + l.x] = select(0.0, a[row * K + k0 + l.x], row < M && k0 + l.x < K);
        Bs[l.y * 16u + l.x] = select(0.0, b[(k0 + l.y) * N + col], col < N && k0 + l.y < K);
        workgroupBarrier();
        for (var k = 0u; k < 16u; k++) { acc += As[l.y * 16u + k] * Bs[k * 16u + l.x]; }
        workgroupBarrier();
    }
    if (row < M && col < N) { c[row * N + col] = acc; }
}
"""


def gpu_backend():
    register_native()
    return wg.registry.backend("wgpu")


def sync(be):
    """Wait for all submitted work (a 16-byte readback; wgpu-py 0.32's on_submitted_work_done is broken)."""
    be.read_bytes(be.alloc((4,), wg.float32))


def timeit(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


# ---------------------------------------------------------------- per-op overhead

def chain(backend, n_ops=1000, size=1024):
    x = wg.tensor(np.ones(size, np.float32), backend=backend)

    def run():
        y = x
        for _ in range(n_ops):
            y = y * 1.0001
        y.tolist()
    run()
    return timeit(run) / n_ops * 1e6


def raw_chain(be, n_ops=1000, size=1024):
    dev = be.device.device
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    bufs = [dev.create_buffer(size=size * 4, usage=usage) for _ in range(3)]
    pipe = dev.create_compute_pipeline(layout="auto", compute={
        "module": dev.create_shader_module(code=RAW_ADD), "entry_point": "main"})
    groups = [dev.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": k, "resource": {"buffer": bufs[j], "offset": 0, "size": size * 4}}
        for k, j in enumerate(order)]) for order in ((0, 2, 1), (1, 2, 0))]
    wgs = -(-size // 256)

    def run():
        enc = dev.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipe)
        for i in range(n_ops):
            p.set_bind_group(0, groups[i % 2])
            p.dispatch_workgroups(wgs)
        p.end()
        dev.queue.submit([enc.finish()])
        dev.queue.read_buffer(bufs[0], 0, 16)
    run()
    return timeit(run) / n_ops * 1e6


# ---------------------------------------------------------------- bandwidth

def webgrad_add_gbps(be, n, reps=10):
    a, b = (wg.tensor(np.ones(n, np.float32), backend="wgpu") for _ in range(2))
    sync(be)

    def run():
        for _ in range(reps):
            c = a + b
        sync(be)
        return c
    run()
    return 3 * 4 * n * reps / timeit(run) / 1e9


def raw_add_gbps(be, n, reps=10):
    dev = be.device.device
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    bufs = [dev.create_buffer(size=n * 4, usage=usage) for _ in range(3)]
    pipe = dev.create_compute_pipeline(layout="auto", compute={
        "module": dev.create_shader_module(code=RAW_ADD), "entry_point": "main"})
    bg = dev.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": k, "resource": {"buffer": bufs[k], "offset": 0, "size": n * 4}} for k in range(3)])
    groups = -(-n // 4 // 64)
    x, y = (groups, 1) if groups <= 65535 else (65535, -(-groups // 65535))

    def run():
        enc = dev.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipe)
        p.set_bind_group(0, bg)
        for _ in range(reps):
            p.dispatch_workgroups(x, y)
        p.end()
        dev.queue.submit([enc.finish()])
        dev.queue.read_buffer(bufs[2], 0, 16)
    run()
    return 3 * 4 * n * reps / timeit(run) / 1e9


# ---------------------------------------------------------------- matmul

def webgrad_matmul_gflops(be, n, reps=3):
    a, b = (wg.tensor(np.random.rand(n, n).astype(np.float32), backend="wgpu") for _ in range(2))
    sync(be)

    def run():
        for _ in range(reps):
            c = a @ b
        sync(be)
        return c
    run()
    return 2 * n ** 3 * reps / timeit(run) / 1e9


def raw_matmul_gflops(be, n, reps=3):
    dev = be.device.device
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    bufs = [dev.create_buffer(size=n * n * 4, usage=usage) for _ in range(3)]
    dims = dev.create_buffer_with_data(data=np.array([n, n, n, 0], np.uint32).tobytes(),
                                       usage=wgpu.BufferUsage.UNIFORM)
    pipe = dev.create_compute_pipeline(layout="auto", compute={
        "module": dev.create_shader_module(code=RAW_MATMUL), "entry_point": "main"})
    entries = [{"binding": k, "resource": {"buffer": bufs[k], "offset": 0, "size": n * n * 4}} for k in range(3)]
    entries.append({"binding": 3, "resource": {"buffer": dims, "offset": 0, "size": 16}})
    bg = dev.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=entries)

    def run():
        enc = dev.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipe)
        p.set_bind_group(0, bg)
        for _ in range(reps):
            p.dispatch_workgroups(-(-n // 16), -(-n // 16))
        p.end()
        dev.queue.submit([enc.finish()])
        dev.queue.read_buffer(bufs[2], 0, 16)
    run()
    return 2 * n ** 3 * reps / timeit(run) / 1e9


def main(argv):
    be = gpu_backend()
    print(f"adapter: {be.device.info.get('device')} ({be.device.info.get('adapter_type')})")
    ours, floor = chain("wgpu"), raw_chain(be)
    print(f"per-op overhead, 1000-op chain: wgpu {ours:.1f} µs/op, raw wgpu-py {floor:.1f} µs/op "
          f"(ratio {ours / floor:.2f}); cpu {chain('cpu'):.1f} µs/op")
    n = 1 << 22
    ours, floor = webgrad_add_gbps(be, n), raw_add_gbps(be, n)
    print(f"elementwise add, {n} floats: wgpu {ours:.2f} GB/s, raw vec4 add {floor:.2f} GB/s ({ours / floor:.0%})")
    for size in (512, 2048) if "--big" in argv else (512,):
        ours, floor = webgrad_matmul_gflops(be, size), raw_matmul_gflops(be, size)
        print(f"matmul {size}^3: wgpu {ours:.1f} GFLOP/s, raw tiled WGSL {floor:.1f} GFLOP/s ({ours / floor:.0%})")


if __name__ == "__main__":
    main(sys.argv[1:])
