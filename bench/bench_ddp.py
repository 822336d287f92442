"""Step time of examples/ddp_digits.py's training step on 1, 2 and 4 ranks, all-reduce separated out.

    python bench/bench_ddp.py            # ~1-2 minutes on 2 cores
    python bench/bench_ddp.py --quick    # a smoke run

The step is the example's: the digits MLP (64-128-64-10, 17,226 float32 parameters = 68.9 kB of
gradients), cross-entropy, Adam, global batch 64 split over the ranks (64 / N rows each); the last
rows repeat it at global batch 1024, where the step's arithmetic outweighs its per-op overhead. Each
configuration runs in fresh processes started by ``python -m webgrad.distributed.run`` (which sets
OMP_NUM_THREADS=1); "1 process" is the plain model without MPI or DDP. Every rank times 100 steps
(after 20 untimed), 7 rounds; per round the slowest rank's mean counts, and the table shows the
fastest round (the one the machine's other load disturbed least), the median beside the step time.
Per configuration:

  * step: one DDP training step (forward, backward with the all-reduces, optimizer);
  * compute: the same step without DDP, on the same ranks at the same time (what the step costs
    when the ranks share the machine but do not talk);
  * all-reduce alone: the step's all-reduces (same buckets, same sizes), blocking, back to back;
  * DDP's own time in backward: waiting for all-reduce results (the communication not hidden
    behind the rest of the backward pass, and any wait for a slower rank), flattening gradients
    into buckets and starting their all-reduces (launch), writing the averages into .grad (write);
  * overlap: 1 - (exposed wait) / (all-reduce alone), the share of communication hidden;
  * bytes: gradient bytes all-reduced per step per rank (a ring all-reduce sends 2 (N-1)/N of it).

Prints a markdown table for bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

import webgrad as wg  # noqa: E402
import webgrad.distributed as dist  # noqa: E402
import webgrad.nn.functional as F  # noqa: E402
from common import load_digits  # noqa: E402
from ddp_digits import build_model  # noqa: E402
from webgrad.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

CONFIGS = [  # (label, ranks (0: one process without MPI or DDP), bucket_cap_mb (None: PyTorch's), global batch)
    ("1 process, no DDP", 0, None, 64), ("1 rank", 1, None, 64), ("2 ranks", 2, None, 64), ("4 ranks", 4, None, 64),
    ("2 ranks, 16 kB buckets", 2, 0.016, 64), ("4 ranks, 16 kB buckets", 4, 0.016, 64),
    ("1 process, no DDP", 0, None, 1024), ("2 ranks", 2, None, 1024), ("4 ranks", 4, None, 1024),
]


def batches(x, y, rank, world, count, global_batch):
    """``count`` batches of this rank's rows: its ``global_batch / world`` rows of each global batch."""
    per = global_batch // world
    n = x.shape[0] // global_batch
    return [(x[i % n * global_batch + rank * per:][:per], y[i % n * global_batch + rank * per:][:per])
            for i in range(count)]


def time_steps(step, data, warmup, steps, sync):
    """Mean seconds per step over ``steps`` steps, after ``warmup`` untimed ones and a ``sync()``."""
    for x, y in data[:warmup]:
        step(x, y)
    sync()
    start = time.perf_counter()
    for x, y in data[:steps]:
        step(x, y)
    return (time.perf_counter() - start) / steps


def make_step(model, opt):
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def measure(args) -> dict:
    """One rank's (or the plain process's) figures."""
    x, y, _, _ = load_digits()
    plain = args.plain
    if not plain:
        dist.init_process_group("mpi")
    rank, world = (0, 1) if plain else (dist.get_rank(), dist.get_world_size())
    data = batches(x, y, rank, world, args.warmup + args.steps, args.global_batch)
    sync = (lambda: None) if plain else dist.barrier
    local = build_model()
    local_step = make_step(local, wg.optim.Adam(local.parameters(), lr=3e-3))
    if plain:
        compute = [time_steps(local_step, data, args.warmup, args.steps, sync) for _ in range(args.rounds)]
        return {"step": compute, "compute": compute}
    ddp = DDP(build_model(), bucket_cap_mb=args.bucket_cap_mb)
    ddp_step = make_step(ddp, wg.optim.Adam(ddp.parameters(), lr=3e-3))
    for x_, y_ in data[:args.warmup]:
        ddp_step(x_, y_)
    stats, figures = ddp.reducer.stats, {key: [] for key in ("compute", "step", "wait", "launch", "write")}
    for _ in range(args.rounds):          # the two interleaved, so that a change of load hits both
        figures["compute"].append(time_steps(local_step, data, args.warmup, args.steps, sync))
        before = dict(stats)
        figures["step"].append(time_steps(ddp_step, data, 0, args.steps, sync))
        n = stats["steps"] - before["steps"]
        figures["wait"].append((stats["wait_s"] - before["wait_s"]) / n)
        figures["launch"].append((stats["launch_s"] - before["launch_s"]) / n)
        figures["write"].append((stats["write_s"] - before["write_s"]) / n)
        figures["bytes"] = (stats["bytes"] - before["bytes"]) / n
    figures.update(buckets=stats["buckets"], alone=all_reduce_alone(ddp, args))
    everyone = [None] * world
    dist.all_gather_object(everyone, figures)
    dist.destroy_process_group()
    return {"ranks": everyone}


def all_reduce_alone(ddp, args) -> list:
    """Seconds per step of the step's all-reduces alone: one blocking all-reduce per bucket."""
    params = ddp.reducer.params
    sizes = [sum(params[i].numel() for i in bucket) for bucket in ddp.reducer.buckets]
    flats = [wg.ones(n) for n in sizes]
    out = []
    for _ in range(args.rounds):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.steps):
            for f in flats:
                dist.all_reduce(f, op=dist.ReduceOp.AVG)
        out.append((time.perf_counter() - start) / args.steps)
    return out


def run_config(ranks, bucket_cap_mb, global_batch, args) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "figures.json")
        flags = ["--measure", str(out), "--warmup", str(args.warmup), "--steps", str(args.steps),
                 "--rounds", str(args.rounds), "--global-batch", str(global_batch)]
        flags += ["--bucket-cap-mb", str(bucket_cap_mb)] if bucket_cap_mb else []
        env = {**os.environ, "WEBGRAD_BACKEND": "cpu", "OMP_NUM_THREADS": "1"}
        if ranks == 0:
            cmd = [sys.executable, __file__, *flags, "--plain"]
        else:
            cmd = [sys.executable, "-m", "webgrad.distributed.run", "--nproc", str(ranks), __file__, *flags]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=1200)
        if proc.returncode != 0 or not out.exists():
            raise SystemExit(f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}")
        return json.loads(out.read_text())


def summary(label, ranks, global_batch, figures) -> list:
    """One table row, in ms (bytes in kB). Per round, the slowest rank's figure; then the round
    whose step was fastest (the least disturbed by the machine's other load: the minimum, with the
    median beside it), its exposed time, and the fastest round of compute and of all-reduce alone."""
    rows = figures.get("ranks", [figures])

    def slowest(key):
        return [max(r[key][i] for r in rows) * 1e3 for i in range(len(rows[0][key]))]
    steps, compute = slowest("step"), min(slowest("compute"))
    best = steps.index(min(steps))
    per_rank = global_batch // max(ranks, 1)
    step = f"{steps[best]:.2f} ({statistics.median(steps):.2f})"
    if ranks == 0:
        return [label, per_rank, step, f"{compute:.2f}", "-", "-", "-", "-", "-", f"{global_batch / steps[best]:.1f}"]
    alone, wait = min(slowest("alone")), slowest("wait")[best]
    launch, write = slowest("launch")[best], slowest("write")[best]
    overlap = max(0.0, 1 - wait / alone) if alone > 0 else 0.0
    return [label, per_rank, step, f"{compute:.2f}", f"{alone:.2f}", f"{wait:.2f} / {launch:.2f} / {write:.2f}",
            f"{overlap:.0%}",
            rows[0]["buckets"], f"{rows[0]['bytes'] / 1e3:.1f}", f"{global_batch / steps[best]:.1f}"]


HEADER = ["configuration", "batch/rank", "step ms, min (median)", "compute ms", "all-reduce alone ms",
          "DDP ms: wait / launch / write",
          "overlap", "buckets", "kB/step", "samples/ms"]


def table(rows) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: few steps, 1 round")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    ap.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--warmup", type=int, default=20, help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=100, help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=7, help=argparse.SUPPRESS)
    ap.add_argument("--bucket-cap-mb", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--global-batch", type=int, default=64, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure:
        figures = measure(args)
        if args.plain or "ranks" in figures and os.environ.get("RANK") == "0":
            Path(args.measure).write_text(json.dumps(figures))
        return
    if args.quick:
        args.warmup, args.steps, args.rounds = 5, 20, 1
    rows, load = [], os.getloadavg()[0]
    for label, ranks, cap, global_batch in CONFIGS:
        rows.append(summary(label, ranks, global_batch, run_config(ranks, cap, global_batch, args)))
        print(" | ".join(map(str, rows[-1])), file=sys.stderr)
    print(f"\n{os.cpu_count()} CPUs; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after; {args.steps} "
          f"steps x {args.rounds} rounds per configuration\n")
    print(table(rows))


if __name__ == "__main__":
    main()
