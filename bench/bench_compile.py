"""webgrad.compile against eager webgrad and PyTorch: a tiny-op chain with backward and the MLP
784-256-10 training step (SGD), on cpu and on wgpu (when an adapter starts).

    python bench/bench_compile.py            # cpu and wgpu
    python bench/bench_compile.py --quick    # fewer repeats

Each row is the median over interleaved rounds (every contender once per round); ratios are the
median of the per-round ratios. The chain is bench_cpu.py's (ten elementwise ops on 8 floats,
then backward()); the MLP step is cross-entropy, backward, an SGD step and zero_grad. Also printed:
the kernel calls (dispatches on wgpu) per MLP step, eager against compiled, and each compiled
plan's fused chains.
"""
from __future__ import annotations

import argparse
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
from bench_cpu import chain, measure_rounds, mlp_numpy  # noqa: E402

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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--backends", default="cpu,wgpu")
    args = p.parse_args(argv)
    repeats, min_time = (5, 0.05) if args.quick else (15, 0.2)
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
    print()
    for n in notes:
        print(f"- {n}")


if __name__ == "__main__":
    main()
