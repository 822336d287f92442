"""Step time of examples/ddp_digits.py's training step on 1, 2 and 4 ranks, all-reduce separated out.

    python bench/bench_ddp.py            # ~3 minutes on 2 cores
    python bench/bench_ddp.py --quick    # a smoke run

The step is the example's: the digits MLP (64-128-64-10, 17,226 float32 parameters = 68.9 kB of
gradients), cross-entropy, Adam, global batch 64 split over the ranks (64 / N rows each); the last
rows repeat it at global batch 1024, where the step's arithmetic outweighs its per-op overhead. Each
configuration runs in fresh processes started by ``python -m webgrad.distributed.run`` (which sets
OMP_NUM_THREADS=1); "1 process" is the plain model without MPI or DDP. Every rank times each of
its steps, 7 rounds of 100 (after 20 untimed); the machine is shared, so each figure is the mean
over the rank's quietest quarter of steps (the fastest: those the machine's other load disturbed
least), the slowest rank's, with the median step beside. Per configuration:

  * step: one DDP training step (forward, backward with the all-reduces, optimizer);
  * compute: the same step without DDP, on the same ranks at the same time (interleaved with the
    DDP steps round by round: what the step costs when the ranks share the machine but do not talk);
  * all-reduce alone: the step's all-reduces (same buckets, same sizes), blocking, back to back;
  * DDP's own time in backward: waiting for all-reduce results (the communication not hidden
    behind the rest of the backward pass, and any wait for a slower rank), flattening gradients
    into buckets and starting their all-reduces (launch), writing the averages into .grad (write);
  * in flight: the time from each bucket's all-reduce start to its completion, summed over buckets;
  * overlap: the share of that in-flight time that passed while backward was still computing
    gradients (before the last bucket was ready), measured in the same steps: 0 when there is one
    bucket, whose all-reduce can only start once backward is done;
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


def step_times(step, data) -> list:
    """Seconds of each step of ``step`` over ``data``."""
    out = []
    for x, y in data:
        start = time.perf_counter()
        step(x, y)
        out.append(time.perf_counter() - start)
    return out


def ddp_step_rows(step, data, stats) -> list:
    """Per DDP step: [seconds, then the step's share of each of the reducer's STATS]."""
    rows = []
    for x, y in data:
        before = [stats[k] for k in STATS]
        start = time.perf_counter()
        step(x, y)
        seconds = time.perf_counter() - start
        rows.append([seconds] + [stats[k] - b for k, b in zip(STATS, before)])
    return rows


STATS = ("wait_s", "launch_s", "write_s", "in_flight_s", "hidden_s", "bytes")


def make_step(model, opt):
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def measure(args) -> dict:
    """One rank's (or the plain process's) per-step figures."""
    x, y, _, _ = load_digits()
    plain = args.plain
    if not plain:
        dist.init_process_group("mpi")
    rank, world = (0, 1) if plain else (dist.get_rank(), dist.get_world_size())
    data = batches(x, y, rank, world, args.warmup + args.steps, args.global_batch)
    warm, timed = data[:args.warmup], data[args.warmup:]
    local = build_model()
    local_step = make_step(local, wg.optim.Adam(local.parameters(), lr=3e-3))
    step_times(local_step, warm)
    if plain:
        return {"compute": [t for _ in range(args.rounds) for t in step_times(local_step, timed)]}
    ddp = DDP(build_model(), bucket_cap_mb=args.bucket_cap_mb)
    ddp_step = make_step(ddp, wg.optim.Adam(ddp.parameters(), lr=3e-3))
    step_times(ddp_step, warm)
    compute, rows = [], []
    for _ in range(args.rounds):          # the two interleaved, so that a change of load hits both
        dist.barrier()
        compute += step_times(local_step, timed)
        dist.barrier()
        rows += ddp_step_rows(ddp_step, timed, ddp.reducer.stats)
    figures = {"compute": compute, "ddp": rows, "buckets": ddp.reducer.stats["buckets"],
               "alone": all_reduce_alone(ddp, args)}
    everyone = [None] * world
    dist.all_gather_object(everyone, figures)
    dist.destroy_process_group()
    return {"ranks": everyone}


def all_reduce_alone(ddp, args) -> list:
    """Seconds of each step's all-reduces alone: one blocking all-reduce per bucket, back to back."""
    params = ddp.reducer.params
    flats = [wg.ones(sum(params[i].numel() for i in bucket)) for bucket in ddp.reducer.buckets]
    out = []
    for _ in range(args.rounds):
        dist.barrier()
        for _ in range(args.steps):
            start = time.perf_counter()
            for f in flats:
                dist.all_reduce(f, op=dist.ReduceOp.AVG)
            out.append(time.perf_counter() - start)
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


QUIET = 0.25   # the share of steps figures are taken over: the fastest


def quiet(values, fraction=QUIET):
    """The mean of the fastest ``fraction`` of ``values`` (the steps the machine's other load
    disturbed least)."""
    values = sorted(values)
    return statistics.fmean(values[:max(1, int(len(values) * fraction))])


def quiet_rows(rows):
    """Per column, the mean over the quietest quarter of the DDP steps (by step time)."""
    rows = sorted(rows)[:max(1, int(len(rows) * QUIET))]
    return [statistics.fmean(column) for column in zip(*rows)]


def summary(label, ranks, global_batch, figures) -> list:
    """One table row, in ms (bytes in kB): each figure the slowest rank's, over its quietest quarter of
    steps (the median step beside)."""
    per_rank = global_batch // max(ranks, 1)
    if ranks == 0:
        compute = quiet(figures["compute"]) * 1e3
        return [label, per_rank, f"{compute:.2f} ({statistics.median(figures['compute']) * 1e3:.2f})",
                f"{compute:.2f}", "-", "-", "-", "-", "-", "-", f"{global_batch / compute:.1f}"]
    ranks_ = figures["ranks"]
    per = [quiet_rows(r["ddp"]) for r in ranks_]
    slowest = [max(p[i] for p in per) for i in range(len(per[0]))]
    step, wait, launch, write, in_flight, hidden, nbytes = slowest
    step, wait, launch, write, in_flight, hidden = (v * 1e3 for v in (step, wait, launch, write, in_flight, hidden))
    median = max(statistics.median(row[0] for row in r["ddp"]) for r in ranks_) * 1e3
    compute = max(quiet(r["compute"]) for r in ranks_) * 1e3
    alone = max(quiet(r["alone"]) for r in ranks_) * 1e3
    shares = [p[5] / p[4] for p in per if p[4] > 0]
    overlap = f"{statistics.fmean(shares):.0%}" if shares else "-"     # "-": nothing was in flight
    return [label, per_rank, f"{step:.2f} ({median:.2f})", f"{compute:.2f}", f"{alone:.2f}",
            f"{wait:.2f} / {launch:.2f} / {write:.2f}", f"{in_flight:.2f}", overlap,
            ranks_[0]["buckets"], f"{nbytes / 1e3:.1f}", f"{global_batch / step:.1f}"]


HEADER = ["configuration", "batch/rank", "step ms (median)", "compute ms", "all-reduce alone ms",
          "DDP ms: wait / launch / write", "all-reduce in flight ms", "overlap", "buckets", "kB/step", "samples/ms"]


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
