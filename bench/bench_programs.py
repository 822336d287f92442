"""Per-step time of the compatibility programs (tests/compat/) on webgrad's cpu backend next to PyTorch's.

    python bench/bench_programs.py              # every program, 7 interleaved rounds (~5 minutes on 2 cores)
    python bench/bench_programs.py --quick      # a smoke run: 2 rounds, fewer steps
    python bench/bench_programs.py --only gpt   # the rows whose label starts with "gpt"
    python bench/bench_programs.py --profile    # where webgrad's GPT training step spends its time

Each program runs as written under PyTorch and, ported by rewriting its torch imports only
(``tests/compat/harness.py``), under webgrad on ``cpu``. A step is what the program does between two
``backward()`` calls (forward, loss, backward, clipping, optimizer update, its own logging and
batch fetching): ``Tensor.backward`` of each library is wrapped to note the time of every call, a
run's per-step time is the median gap between consecutive calls after the first two (so
evaluation passes, checkpoints and the warm-up fall out), and the programs run unchanged.
Rounds are interleaved (each contender once per round, with a pause so that the previous one's
BLAS threads stop spinning, and with the objects alive before timing frozen out of the cyclic
GC, as in ``bench_cpu.py``); the table gives each contender's median over rounds and webgrad's
ratio to PyTorch as the median over rounds of the round's ratio. Before timing, each program's
first 10 losses under both libraries, from the same initial weights, are checked to agree (1e-4
relative), as in tests/compat.

The GPT rows include issue 17's target configuration (nanoGPT-style GPT, 2 layers, 4 heads, 128
wide, block 64, batch 16). ``--profile`` runs that step under webgrad with ``webgrad.profile()``
(host time per kernel: the numpy work) and ``cProfile`` (Python time by function and by file), and
prints how the step divides into kernel time and the Python around it.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import io
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "compat"))
import bench_cpu  # noqa: E402  (pin_malloc, blas_threads, environment, PAUSE_S)
import harness  # noqa: E402

wg, torch = bench_cpu.wg, bench_cpu.torch

GPT_TARGET = dict(n_layer=2, n_head=4, n_embd=128, block_size=64, batch_size=16)
# (label, program, main's keyword arguments, steps per run)
PROGRAMS = [
    ("gpt, issue 17 target: 2x128, 4 heads, block 64, batch 16 (sdpa)", "gpt", dict(GPT_TARGET), 14),
    ("gpt, issue 17 target, masked softmax", "gpt", dict(GPT_TARGET, flash=False), 14),
    ("mingpt at the target size (GELU's tanh form written out)", "mingpt", dict(GPT_TARGET), 14),
    ("gpt, test size: 2x32, block 16, batch 4", "gpt", {}, 24),
    ("mingpt, 2x24, block 12, batch 4", "mingpt", {}, 24),
    ("mnist_cnn, 1x28x28, batch 8", "mnist_cnn", {"dropout": 0.0}, 24),
    ("word_lm LSTM, 2x24, bptt 6, batch 4", "word_lm", {"model": "LSTM", "dropout": 0.0}, 24),
    ("word_lm GRU", "word_lm", {"model": "GRU", "dropout": 0.0}, 24),
    ("word_lm TransformerEncoder", "word_lm", {"model": "Transformer", "dropout": 0.0}, 24),
    ("vae, 784-64-8, batch 16", "vae", {}, 24),
    ("regression (.data updates)", "regression", {}, 60),
    ("poly_autograd, 2000 points", "poly_autograd", {}, 100),
    ("poly_nn, Sequential + manual update", "poly_nn", {}, 100),
    ("poly_nn, RMSprop", "poly_nn", {"optimizer": "RMSprop"}, 100),
    ("poly_function, autograd.Function", "poly_function", {}, 100),
    ("poly_module, DynamicNet + SGD momentum", "poly_module", {"net": "DynamicNet"}, 100),
]
SKIP_STEPS = 2
CHECKED_STEPS = 10   # as tests/compat: later, last-bit differences grow under some optimizers (Adadelta at lr 1)
PROFILED = [("gpt", dict(GPT_TARGET), "webgrad's GPT step at the target size (sdpa)"),
            ("gpt", dict(GPT_TARGET, flash=False), "webgrad's GPT step at the target size (masked softmax)"),
            ("mingpt", dict(GPT_TARGET), "webgrad's minGPT step at the target size (tanh GELU written out)")]


# ---------------------------------------------------------------- one run

class BackwardClock:
    """Notes the time of every (outermost) ``Tensor.backward`` call of one library while active."""

    def __init__(self, tensor_class):
        self.cls, self.times = tensor_class, []

    def __enter__(self):
        original = self.original = self.cls.backward
        times = self.times

        depth = [0]

        def backward(*args, **kwargs):   # outermost calls only: a TorchFunctionMode (set_default_device) re-enters
            if not depth[0]:
                times.append(time.perf_counter())
            depth[0] += 1
            try:
                return original(*args, **kwargs)
            finally:
                depth[0] -= 1
        self.cls.backward = backward
        return self

    def __exit__(self, *exc):
        self.cls.backward = self.original
        return False

    def step_seconds(self):
        gaps = [b - a for a, b in zip(self.times, self.times[1:])][SKIP_STEPS:]
        return statistics.median(gaps)


def run_program(module, steps, kwargs, init=None, device=None):
    """main()'s result and the median seconds per step of one quiet run of ``module``."""
    extra = {"out_dir": tempfile.mkdtemp(prefix="bench_programs_")} if "out_dir" in _params(module) else {}
    if init is not None:
        extra["init"] = init
    if device is not None:
        extra["device"] = device
    with BackwardClock(module.torch.Tensor) as clock, contextlib.redirect_stdout(io.StringIO()):
        result = harness.run(module, steps=steps, **kwargs, **extra)
    return result, clock.step_seconds()


def _params(module):
    code = module.main.__code__
    return code.co_varnames[:code.co_argcount]


def contenders(program, kwargs, steps):
    """{"webgrad": fn, "torch": fn}, each running the program once and returning seconds per step;
    first checks that both compute the same losses from the same weights."""
    ours, theirs = harness.load(program, "webgrad"), harness.load(program, "torch")
    want, _ = run_program(theirs, steps, kwargs)
    got, _ = run_program(ours, steps, kwargs, init=harness.as_init(ours, harness.to_numpy(want["init"])), device="cpu")
    diff = harness.max_rel_diff(got["losses"][:CHECKED_STEPS], want["losses"][:CHECKED_STEPS])
    assert diff <= 1e-4, f"{program}: webgrad's losses differ from PyTorch's by {diff:.2e} (relative)"
    return {"webgrad": lambda: run_program(ours, steps, kwargs, device="cpu")[1],
            "torch": lambda: run_program(theirs, steps, kwargs)[1]}


# ---------------------------------------------------------------- rounds

def measure_rounds(fns, rounds, pause):
    """Seconds per step for each of {name: fn}, one figure per round, interleaved."""
    times = {name: [] for name in fns}
    gc.collect()
    gc.freeze()
    try:
        for _ in range(rounds):
            for name, fn in fns.items():
                gc.collect()
                time.sleep(pause)
                times[name].append(fn())
    finally:
        gc.unfreeze()
    return times


def run_row(label, program, kwargs, steps, rounds, pause):
    per_round = measure_rounds(contenders(program, kwargs, steps), rounds, pause)
    ms = {name: statistics.median(t) * 1e3 for name, t in per_round.items()}
    ratio = statistics.median(w / t for w, t in zip(per_round["webgrad"], per_round["torch"]))
    print(f"  {label:<64} webgrad {ms['webgrad']:8.2f} ms  torch {ms['torch']:8.2f} ms  ratio {ratio:5.2f}",
          file=sys.stderr, flush=True)
    return label, ms, ratio


def report(rows):
    lines = ["| program | webgrad ms/step | torch ms/step | webgrad/torch |", "|---|---:|---:|---:|"]
    lines += [f"| {label} | {ms['webgrad']:.2f} | {ms['torch']:.2f} | {ratio:.2f} |" for label, ms, ratio in rows]
    target = [r for label, _, r in rows if label.startswith("gpt, issue 17 target:")]
    if target:
        lines.append(f"\nissue 17 target, GPT training step within 1.5x of PyTorch on cpu: webgrad/torch "
                     f"{target[0]:.2f} -> {'pass' if target[0] <= 1.5 else 'short'}")
    return "\n".join(lines)


# ---------------------------------------------------------------- profile

def _timed_run(module, kwargs, steps):
    t0 = time.perf_counter()
    run_program(module, steps, kwargs, device="cpu")
    return time.perf_counter() - t0


def _kernel_run(module, kwargs, steps):
    """(wall seconds, {kernel: (calls, host seconds)}) of one run under ``webgrad.profile()``."""
    t0 = time.perf_counter()
    with wg.profile() as prof:
        run_program(module, steps, kwargs, device="cpu")
    return time.perf_counter() - t0, {k: (s.calls, s.host_s) for k, s in prof.stats.items()}


def _python_run(module, kwargs, steps):
    """{(file, line, function): (calls, self seconds, cumulative seconds)} of one run under cProfile."""
    prof = cProfile.Profile()
    prof.enable()
    run_program(module, steps, kwargs, device="cpu")
    prof.disable()
    return {key: (nc, tt, ct) for key, (_, nc, tt, ct, _) in pstats.Stats(prof).stats.items()}


def _per_step(short, long, n):
    """Per-step figures: the difference of a long and a short run's, over the n steps between them
    (setup, the evaluation, the checkpoint and the sampling are in both and cancel)."""
    return {k: tuple((b - a) / n for a, b in zip(short.get(k, (0,) * len(v)), v)) for k, v in long.items()}


def profile_program(program, kwargs, title, steps):
    """Where webgrad's time goes in a program's step: kernel host time vs the Python around it."""
    module = harness.load(program, "webgrad")
    short, long = steps, 3 * steps
    _timed_run(module, kwargs, short)                                     # warm-up
    step_s = (_timed_run(module, kwargs, long) - _timed_run(module, kwargs, short)) / (long - short)
    (wall_a, ka), (wall_b, kb) = _kernel_run(module, kwargs, short), _kernel_run(module, kwargs, long)
    kernels = _per_step(ka, kb, long - short)
    kernel_s = sum(t for _, t in kernels.values())
    calls = sum(c for c, _ in kernels.values())
    prof_step_s = (wall_b - wall_a) / (long - short)
    out = [f"### {title}", "",
           f"- step: {step_s * 1e3:.2f} ms (under webgrad.profile: {prof_step_s * 1e3:.2f} ms)",
           f"- kernels: {calls:.0f} calls per step, {kernel_s * 1e3:.2f} ms of host time (numpy and the kernel "
           f"functions' own Python): {100 * kernel_s / prof_step_s:.0f}% of the profiled step",
           f"- the rest, {(prof_step_s - kernel_s) * 1e3:.2f} ms ({100 * (1 - kernel_s / prof_step_s):.0f}%), is "
           f"Python around the kernels: ops, autograd recording and the backward pass, modules, the optimizer, "
           f"the program's batch fetching ({(prof_step_s - kernel_s) / calls * 1e6:.1f} µs per kernel call)",
           "", "| kernel | calls/step | ms/step | µs/call | share of step |", "|---|---:|---:|---:|---:|"]
    steady = [(name, c, t) for name, (c, t) in kernels.items() if c >= 0.5]   # (setup-only kernels cancel)
    for name, c, t in sorted(steady, key=lambda r: -r[2])[:15]:
        out.append(f"| {name} | {c:.0f} | {t * 1e3:.3f} | {t / c * 1e6:.1f} | {100 * t / prof_step_s:.1f}% |")
    python = _per_step(_python_run(module, kwargs, short), _python_run(module, kwargs, long), long - short)
    out += ["", _python_report(python), "", _torch_report(program, kwargs, short, long)]
    return "\n".join(out)


def _torch_run(module, kwargs, steps):
    """{op: (calls, self seconds)} of one run of the torch program under torch.profiler."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run_program(module, steps, kwargs)
    return {e.key: (e.count, e.self_cpu_time_total * 1e-6) for e in prof.key_averages()}


def _torch_report(program, kwargs, short, long):
    """PyTorch's per-step self time by op for the same program (torch.profiler), to set beside webgrad's."""
    module = harness.load(program, "torch")
    per_step = _per_step(_torch_run(module, kwargs, short), _torch_run(module, kwargs, long), long - short)
    total = sum(t for _, t in per_step.values())
    lines = [f"PyTorch, the same program, per step by op (torch.profiler self CPU time; total {total * 1e3:.1f} ms):",
             "", "| op | calls/step | self ms/step |", "|---|---:|---:|"]
    steady = [(name, c, t) for name, (c, t) in per_step.items() if c >= 0.5]   # (setup-only ops cancel to ~0 calls)
    for name, c, t in sorted(steady, key=lambda r: -r[2])[:12]:
        lines.append(f"| {name} | {c:.0f} | {t * 1e3:.3f} |")
    return "\n".join(lines)


def _python_report(per_step):
    """cProfile's per-step self time grouped by where the code lives, and the top functions."""
    by_place = defaultdict(float)
    for (path, _, func), (_, tottime, _) in per_step.items():
        by_place[_place(path, func)] += tottime
    total = sum(by_place.values())
    lines = [f"cProfile, per step (its own overhead inflates the Python share; total {total * 1e3:.1f} ms):", "",
             "| where | ms/step | share |", "|---|---:|---:|"]
    lines += [f"| {place} | {t * 1e3:.2f} | {100 * t / total:.1f}% |"
              for place, t in sorted(by_place.items(), key=lambda kv: -kv[1]) if t > 0.001 * total]
    lines += ["", "| function (top 20 by self time) | calls/step | self ms/step | cum ms/step |",
              "|---|---:|---:|---:|"]
    for (path, line, func), (nc, tt, ct) in sorted(per_step.items(), key=lambda kv: -kv[1][1])[:20]:
        lines.append(f"| {_short(path)}:{line} {func} | {nc:.0f} | {tt * 1e3:.3f} | {ct * 1e3:.3f} |")
    return "\n".join(lines)


PLACES = (("/core/nn/", "webgrad core: nn (modules, functional)"), ("/core/optim/", "webgrad core: optim"),
          ("/core/ops/", "webgrad core: ops"), ("/core/engine", "webgrad core: engine (run_kernel, tape)"),
          ("/core/backprop", "webgrad core: backward pass"), ("/core/", "webgrad core: other"),
          ("/backends/cpu/", "webgrad cpu kernels (Python part)"), ("/tests/compat/", "the program itself"),
          ("/numpy/", "numpy (Python part)"))


def _place(path, func):
    if path == "~":
        return "numpy and other C functions" if not func.startswith("<built-in method builtins") \
            else "Python builtins"
    return next((name for key, name in PLACES if key in path), "other Python (stdlib, ...)")


def _short(path):
    for key in ("/core/", "/backends/", "/tests/compat/", "/numpy/"):
        if key in path:
            return key.strip("/") + "/" + path.split(key, 1)[1]
    return path.rsplit("/", 1)[-1]


# ---------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 rounds, fewer steps")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (median taken)")
    ap.add_argument("--only", default=None, help="rows whose label starts with this")
    ap.add_argument("--profile", action="store_true", help="profile webgrad's target GPT step instead")
    args = ap.parse_args(argv)
    if torch is None:
        raise SystemExit("bench_programs.py compares with PyTorch: install torch")
    pinned = bench_cpu.pin_malloc()
    threads = bench_cpu.blas_threads()
    torch.set_num_threads(threads)
    wg.set_backend("cpu")
    print(f"# {bench_cpu.environment(pinned)}; BLAS/torch threads {threads}", file=sys.stderr)
    if args.profile:
        for program, kwargs, title in PROFILED:
            if not args.only or program.startswith(args.only):
                print(profile_program(program, kwargs, title, 4 if args.quick else 10) + "\n")
        return None
    rounds = args.rounds or (2 if args.quick else 7)
    pause = 0.0 if args.quick else bench_cpu.PAUSE_S
    rows = []
    for label, program, kwargs, steps in PROGRAMS:
        if args.only and not label.startswith(args.only):
            continue
        rows.append(run_row(label, program, kwargs, max(SKIP_STEPS + 4, steps // 3) if args.quick else steps,
                            rounds, pause))
    print(f"\n{bench_cpu.environment(pinned)}; BLAS/torch threads {threads}; {rounds} rounds\n")
    print(report(rows))
    return rows


if __name__ == "__main__":
    main()
