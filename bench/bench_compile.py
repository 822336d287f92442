"""webgrad.compile against eager webgrad and PyTorch: a tiny-op chain with backward and the MLP
784-256-10 training step (SGD), on cpu and on wgpu (when an adapter starts), and on cpu the
GPT-style training step of bench_cpu.py (2 pre-norm layers, 4 heads, 128 wide, block 64, batch 16,
AdamW; issues 17 and 19).

    python bench/bench_compile.py              # cpu and wgpu
    python bench/bench_compile.py --quick      # fewer repeats
    python bench/bench_compile.py --only gpt   # the GPT step alone (cpu): eager, compiled and PyTorch
    python bench/bench_compile.py --backends wgpu --floor-only   # the per-op floor row alone
    python bench/bench_compile.py --mlp-clocks # the cpu MLP step on wall and CPU time, numpy in both layouts

Each row is the median over interleaved rounds (every contender once per round); ratios are the
median of the per-round ratios. The chain is bench_cpu.py's (ten elementwise ops on 8 floats,
then backward()); the MLP step is cross-entropy, backward, an SGD step and zero_grad. Also printed:
the kernel calls (dispatches on wgpu) per MLP step, eager against compiled, and each compiled
plan's fused chains. On wgpu, the per-op floor: a 1000-op chain compiled with fusion off (one dispatch
per op, replayed from the plan the device holds) against a raw wgpu-py loop dispatching the same
pipelines and bind groups (issue 19: within 1.05x). The GPT row times 8 steps per contender per round on
two clocks at once, wall time and the thread's CPU time (on a shared machine the second leaves out the
time other work held the core), and gives medians, each contender's fastest round, webgrad's eager and
compiled ratios to PyTorch's eager step, and the targets.
BLAS (OpenBLAS and PyTorch) runs on one thread for every contender, and glibc malloc's thresholds are
pinned (``bench_cpu.pin_malloc``).
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # the machine is shared: BLAS on one thread for everyone
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cpu import (chain, cross_entropy_numpy, gpt_step, measure_rounds, mlp_data, mlp_numpy,  # noqa: E402
                       pin_malloc)

import webgrad as wg  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:   # PyTorch is optional: its rows read "-"
    torch = None

D_IN, D_HIDDEN, D_OUT, LR = 784, 256, 10, 0.01


def chain_contenders(backend):
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal(8, dtype=np.float32), rng.standard_normal(8, dtype=np.float32)
    x, w = wg.tensor(x0, requires_grad=True, device=backend), wg.tensor(w0, requires_grad=True, device=backend)

    def eager():
        x.grad = w.grad = None
        chain(x, w).backward()

    compiled = wg.compile(eager)
    out = {"eager": eager, "compiled": compiled}
    if torch is not None and backend == "cpu":
        tx, tw = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)

        def torch_eager():
            tx.grad = tw.grad = None
            chain(tx, tw).backward()
        out["torch"] = torch_eager
    return out, compiled


def mlp_contenders(backend, batch):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((batch, D_IN), dtype=np.float32)
    y0 = rng.integers(0, D_OUT, batch)
    out, compiled = {}, None
    for name in ("eager", "compiled"):
        wg.manual_seed(0)
        model = wg.nn.Sequential(wg.nn.Linear(D_IN, D_HIDDEN), wg.nn.ReLU(), wg.nn.Linear(D_HIDDEN, D_OUT)).to(backend)
        opt = wg.optim.SGD(model.parameters(), lr=LR)
        x, y = wg.tensor(x0, device=backend), wg.tensor(y0, device=backend)

        def step(x, y, model=model, opt=opt):
            opt.zero_grad()
            loss = wg.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        fn = wg.compile(step) if name == "compiled" else step
        out[name] = (lambda fn=fn, x=x, y=y: fn(x, y))
        compiled = fn if name == "compiled" else compiled
    if torch is not None and backend == "cpu":
        tm = torch.nn.Sequential(torch.nn.Linear(D_IN, D_HIDDEN), torch.nn.ReLU(), torch.nn.Linear(D_HIDDEN, D_OUT))
        topt = torch.optim.SGD(tm.parameters(), lr=LR)
        tx, ty = torch.tensor(x0), torch.tensor(y0)

        def torch_step():
            topt.zero_grad()
            loss = torch.nn.functional.cross_entropy(tm(tx), ty)
            loss.backward()
            topt.step()
        out["torch"] = torch_step
    if backend == "cpu":
        out["numpy"] = mlp_numpy(batch)   # forward and backward written by hand (bench_cpu.py)
    return out, compiled


def mlp_numpy_linear_layout(batch):
    """bench_cpu.mlp_numpy with the weights kept as ``nn.Linear`` keeps them, (out, in), and multiplied
    by their transposes (x @ w1.T; the weight gradients as dh.T @ x): the same numbers, the same
    numpy, only the layout of webgrad's and PyTorch's Linear. It shows what of the compiled step's
    gap to the numpy contender is that layout (BLAS's product with a transposed second operand)."""
    x, y, params = mlp_data(batch)
    params = [np.ascontiguousarray(params[0].T), params[1], np.ascontiguousarray(params[2].T), params[3]]
    w1, b1, w2, b2 = params
    rows = np.arange(batch)

    def step():
        h = x @ w1.T + b1
        r = np.maximum(h, 0)
        loss, dlogits = cross_entropy_numpy(r @ w2.T + b2, y, rows)
        dh = (dlogits @ w2) * (h > 0)
        for p, g in zip(params, (dh.T @ x, dh.sum(axis=0), dlogits.T @ r, dlogits.sum(axis=0))):
            p -= LR * g
        return loss
    return step


def mlp_clocks_report(rounds, steps=20):
    """The cpu MLP step on two clocks (wall and the thread's CPU time, as the GPT row), with the numpy
    contender in both layouts: medians of per-round ratios of the compiled step to each contender."""
    contenders, _ = mlp_contenders("cpu", 128)
    contenders["numpy (out, in)"] = mlp_numpy_linear_layout(128)
    for fn in contenders.values():
        for _ in range(3):
            fn()
    load = os.getloadavg()
    pairs = gpt_rounds(contenders, rounds, steps)
    load = [max(a, b) for a, b in zip(load, os.getloadavg())]
    names = [k for k in contenders if k != "compiled"]
    print("\n| MLP step b128 (cpu) | " + " | ".join(["compiled"] + names) + " | "
          + " | ".join(f"compiled / {k}" for k in names) + " |")
    print("|---|" + "---:|" * (1 + 2 * len(names)))
    for clock, which in (("wall", 0), ("thread CPU time", 1)):
        times = {k: [p[which] for p in v] for k, v in pairs.items()}
        med = [f"{statistics.median(times[k]) * 1e3:.3f} ms" for k in ["compiled"] + names]
        ratio = [f"{statistics.median(a / b for a, b in zip(times['compiled'], times[k])):.3f}" for k in names]
        print(f"| {clock}, median | " + " | ".join(med + ratio) + " |")
    print(f"\n- {rounds} rounds of {steps} steps; highest load average seen (1/5/15 min) {load[0]:.1f} / "
          f"{load[1]:.1f} / {load[2]:.1f}")


def gpt_contenders():
    """The GPT step (bench_cpu.gpt_step: the same model and weights for both libraries) eager, compiled
    (``wg.compile`` of the whole step: forward, backward, AdamW) and under PyTorch, on cpu."""
    wg.set_backend("cpu")
    compiled = wg.compile(gpt_step(wg))
    return {"eager": gpt_step(wg), "compiled": compiled, "torch": gpt_step(torch)}, compiled


GPT_TARGETS = [("eager", 1.5, "GPT step eager <= 1.5x PyTorch eager (issue 17)"),
               ("eager", 1.3, "GPT step eager <= 1.3x PyTorch eager (issue 19)"),
               ("compiled", 1.0, "GPT step compiled <= 1.0x PyTorch eager (issue 19)")]


def gpt_rounds(contenders, rounds, steps):
    """{name: [(wall seconds, thread CPU seconds) per step, one pair per round]}: every contender once per
    round (``steps`` steps each, after a collection and a short pause), both clocks over the same steps.
    Every contender runs on this one thread (BLAS and PyTorch on one thread), so the thread's CPU time
    leaves out the time the machine's other work held the core, which wall time does not."""
    times = {name: [] for name in contenders}
    gc.collect()
    gc.freeze()
    try:
        for _ in range(rounds):
            for name, fn in contenders.items():
                gc.collect()
                time.sleep(0.05)
                wall, cpu = time.perf_counter(), time.thread_time()
                for _ in range(steps):
                    fn()
                times[name].append(((time.perf_counter() - wall) / steps, (time.thread_time() - cpu) / steps))
    finally:
        gc.unfreeze()
    return times


def gpt_report(rounds, steps=8):
    """The GPT row: per clock, medians and fastest rounds, ratios to PyTorch (median of the rounds'
    ratios), and the targets (judged on both clocks)."""
    contenders, compiled = gpt_contenders()
    for fn in contenders.values():   # warm-up: the first compiled calls trace (twice: AdamW makes its state)
        for _ in range(3):
            fn()
    load = os.getloadavg()
    pairs = gpt_rounds(contenders, rounds, steps)
    load = [max(a, b) for a, b in zip(load, os.getloadavg())]
    print("\n| GPT step (cpu) | eager | compiled | torch | eager / torch | compiled / torch | compiled / eager |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    ratios = {}
    for clock, which in (("wall", 0), ("thread CPU time", 1)):
        times = {k: [p[which] for p in v] for k, v in pairs.items()}
        ratio = ratios[clock] = {k: statistics.median(a / b for a, b in zip(times[k], times["torch"]))
                                 for k in ("eager", "compiled")}
        ratio["compiled / eager"] = statistics.median(a / b for a, b in zip(times["compiled"], times["eager"]))
        for label, pick in (("median", statistics.median), ("fastest", min)):
            m = {k: pick(t) for k, t in times.items()}
            r = ratio if label == "median" else {**{k: m[k] / m["torch"] for k in ("eager", "compiled")},
                                                 "compiled / eager": m["compiled"] / m["eager"]}
            print(f"| {clock}, {label} | {m['eager'] * 1e3:.2f} ms | {m['compiled'] * 1e3:.2f} ms | "
                  f"{m['torch'] * 1e3:.2f} ms | {r['eager']:.2f} | {r['compiled']:.2f} | {r['compiled / eager']:.2f} |")
    plan = compiled.last.plan
    print(f"\n- {rounds} rounds of {steps} steps; highest load average seen (1/5/15 min) {load[0]:.1f} / {load[1]:.1f} / "
          f"{load[2]:.1f}; kernel calls per step: eager {kernel_calls(contenders['eager'], 'cpu')}, compiled "
          f"{len(plan.steps)} ({len(compiled.last.fused)} fused chains); compiled plan: {plan.traced_calls} traced "
          f"calls, {plan.folded} folded; ratios in the table are medians of the rounds' ratios (or of the fastest)")
    print("\n| target | wall | thread CPU time | result |\n|---|---:|---:|---|")
    for key, limit, label in GPT_TARGETS:
        got = [ratios[c][key] for c in ("wall", "thread CPU time")]
        print(f"| {label} | {got[0]:.2f} | {got[1]:.2f} | {'pass' if max(got) <= limit else 'short'} |")


def synced(fn, backend):
    if backend == "cpu":
        return fn
    be = wg.backend(backend)

    def run():
        fn()
        be.synchronize()
    return run


def kernel_calls(fn, backend, compiled=None) -> int:
    """Kernel calls of one call of ``fn`` (on wgpu: dispatches recorded; a compiled plan on cpu: its steps,
    which call the kernel functions directly, unseen by the profiler)."""
    if backend == "cpu":
        if compiled is not None:
            return len(compiled.last.plan.steps)
        with wg.profile() as prof:
            fn()
        return sum(s.calls for s in prof.stats.values())
    be = wg.backend(backend)
    count, dispatch = [0], be.device.dispatch

    def counting(*args):
        count[0] += 1
        return dispatch(*args)
    be.device.dispatch = counting
    try:
        fn()
        be.synchronize()
    finally:
        del be.device.dispatch
    return count[0]


def rows_for(backend, label, contenders, repeats, min_time):
    for fn in contenders.values():   # warm-up: traces, pipelines
        for _ in range(3):
            fn()
    timed = {k: synced(f, backend) for k, f in contenders.items()}
    times = measure_rounds(timed, repeats, min_time, 0.05)
    med = {k: statistics.median(t) for k, t in times.items()}
    ratio = {k: statistics.median(a / b for a, b in zip(times["compiled"], times[k])) for k in times if k != "compiled"}
    return [(f"{label} ({backend})", med, ratio)]


N_FLOOR = 1000   # ops of the per-op chain measured against the raw wgpu-py floor


def floor_contenders(n_ops=N_FLOOR, size=1024):
    """The chain ``y = y * 1.0001`` (n_ops times, 1024 floats) compiled with fusion off, so that its plan
    dispatches one kernel per op, and the floor: a raw wgpu-py loop dispatching the plan's own pipelines
    and bind groups (one compute pass, one submit). Both end in ``synchronize()``."""
    from webgrad.compiler import replay
    be = wg.backend("wgpu")
    x = wg.tensor(np.ones(size, np.float32), device="wgpu")

    def chain_op(x):
        y = x
        for _ in range(n_ops):
            y = y * 1.0001
        return y
    fuse, replay.fuse_plan = replay.fuse_plan, lambda plan: []
    try:
        compiled = wg.compile(chain_op)
        for _ in range(3):                     # trace, the replay that builds the device's plan, a held replay
            y = compiled(x)
    finally:
        replay.fuse_plan = fuse
    resident = next(iter(compiled.plans.values())).run_steps
    assert resident.handle is not None, resident.state
    assert abs(y.tolist()[0] - 1.0001 ** n_ops) < 1e-3
    host = resident.handle
    ext = [(s.buffer, s.size) for s in (x._data.storage, y._data.storage)]
    steps = [(pipe[0], group, [offset], (gx, gy, gz))
             for (pipe, offset, gx, gy, gz, _), group in zip(host.dispatches, host.bind_groups(be.device, ext))]
    dev = be.device.device

    def raw():
        enc = dev.create_command_encoder()
        p = enc.begin_compute_pass()
        for pipe, group, offsets, xyz in steps:
            p.set_pipeline(pipe)
            p.set_bind_group(0, group, offsets)
            p.dispatch_workgroups(*xyz)
        p.end()
        dev.queue.submit([enc.finish()])
        be.synchronize()

    def ours():
        compiled(x)
        be.synchronize()
    return {"compiled": ours, "floor": raw}, len(steps)


def floor_row(repeats):
    contenders, n = floor_contenders()
    times = measure_rounds(contenders, repeats, 0.2, 0.05)
    med = {k: statistics.median(t) / n * 1e6 for k, t in times.items()}
    ratio = statistics.median(a / b for a, b in zip(times["compiled"], times["floor"]))
    return (f"| {N_FLOOR}-op chain (y * 1.0001, 1024 floats), compiled without fusion, per op (wgpu) | "
            f"{med['compiled']:.2f} µs | {med['floor']:.2f} µs (raw wgpu-py, the plan's pipelines) | {ratio:.3f} | "
            f"{'pass' if ratio <= 1.05 else 'short'} (≤ 1.05×) |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--backends", default="cpu,wgpu")
    p.add_argument("--only", choices=["gpt"], default=None, help="the GPT step row alone")
    p.add_argument("--floor-only", action="store_true", help="only the per-op floor row (wgpu)")
    p.add_argument("--mlp-clocks", action="store_true", help="only the cpu MLP step on both clocks")
    args = p.parse_args(argv)
    repeats, min_time = (5, 0.05) if args.quick else (15, 0.2)
    pin_malloc()
    if args.only == "gpt":
        if torch is None:
            raise SystemExit("the GPT row needs PyTorch (its initial weights and the comparison)")
        return gpt_report(3 if args.quick else 9)
    if args.mlp_clocks:
        return mlp_clocks_report(5 if args.quick else 15)
    if args.floor_only:
        print(f"load average {os.getloadavg()[0]:.2f}")
        print("| per-op floor | compiled | floor | compiled / floor (median of rounds) | target |\n|---|---:|---:|---:|---|")
        print(floor_row(repeats))
        return
    rows, notes = [], []
    for backend in args.backends.split(","):
        try:
            wg.backend(backend)
        except (RuntimeError, ValueError) as e:
            notes.append(f"{backend}: not measured ({e})")
            continue
        contenders, compiled = chain_contenders(backend)
        rows += rows_for(backend, "10-op chain on 8 floats + backward", contenders, repeats, min_time)
        notes.append(f"chain ({backend}): plan of {len(compiled.last.plan.steps)} kernel calls; "
                     f"{len(compiled.last.fused)} fused chains")
        contenders, compiled = mlp_contenders(backend, 128)
        rounds = repeats if backend == "cpu" else 5
        rows += rows_for(backend, "MLP 784-256-10 SGD step, batch 128", contenders, rounds, min_time)
        calls = kernel_calls(contenders["eager"], backend), kernel_calls(contenders["compiled"], backend, compiled)
        notes.append(f"MLP step ({backend}): kernel calls eager {calls[0]}, compiled {calls[1]}; "
                     f"fused: {', '.join(compiled.last.fused) or '-'}")
    print(f"- Machine: {platform.machine()}, {platform.system()}; Python {platform.python_version()}, numpy "
          f"{np.__version__}, torch {getattr(torch, '__version__', '-')}, webgrad {wg.__version__}; "
          f"{time.strftime('%Y-%m-%d')}")
    print("\n| benchmark | eager | compiled | torch | numpy | compiled / eager | compiled / torch | compiled / numpy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, med, ratio in rows:
        def ms(k):
            return f"{med[k] * 1e3:.3f} ms" if k in med else "-"
        def r(k):
            return f"{ratio[k]:.2f}" if k in ratio else "-"
        print(f"| {label} | {ms('eager')} | {ms('compiled')} | {ms('torch')} | {ms('numpy')} | {r('eager')} | "
              f"{r('torch')} | {r('numpy')} |")
    if "wgpu" in args.backends.split(",") and any(r[0].endswith("(wgpu)") for r in rows):
        print("\n| per-op floor | compiled | floor | compiled / floor (median of rounds) | target |")
        print("|---|---:|---:|---:|---|")
        print(floor_row(repeats))
    print()
    for n in notes:
        print(f"- {n}")
    if torch is not None and "cpu" in args.backends.split(","):
        gpt_report(3 if args.quick else 9)


if __name__ == "__main__":
    main()
