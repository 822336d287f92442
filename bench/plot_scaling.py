"""Issue 7's scaling plots: how webgrad's cost grows with the work, beside PyTorch's and numpy's.

    python bench/plot_scaling.py            # writes bench/scaling_op.png and bench/scaling_mlp.png
    python bench/plot_scaling.py --quick    # fewer, shorter repeats

* scaling_op.png: per-op cost from 1 to 10^6 elements, (left) one ``a * b`` without grad,
  (right) the 10-op chain of bench_cpu.py with backward, per op (plus the micrograd floor);
* scaling_mlp.png: the 784-256-10 MLP training step of bench_cpu.py from batch 1 to 4096.
Timings are medians of interleaved repeats (bench_cpu.measure), with malloc's thresholds pinned
as in bench_cpu; the y axes are logarithmic.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_cpu as B  # noqa: E402

SIZES = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
BATCHES = [1, 4, 16, 64, 256, 1024, 4096]
STYLE = {"webgrad": "C0o-", "torch": "C3s-", "numpy": "C2^-", "floor": "C7v--"}


def mul_contenders(n):
    rng = np.random.default_rng(0)
    a0, b0 = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    wa, wb = B.wg.tensor(a0), B.wg.tensor(b0)
    out = {"webgrad": lambda: wa * wb}
    if B.torch is not None:
        ta, tb = B.torch.from_numpy(a0), B.torch.from_numpy(b0)
        out["torch"] = lambda: ta * tb
    out["numpy"] = lambda: a0 * b0
    return out


def chain_contenders(n):
    rng = np.random.default_rng(1)
    x0, w0 = rng.uniform(-1, 1, n).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32)
    return B.chain_contenders(x0, w0)


def sweep(points, make, scale, repeats, min_time, pause):
    """{contender: [time per point]} over ``points``, each point measured by bench_cpu.measure."""
    series = {}
    for p in points:
        times = B.measure(make(p), repeats, min_time, pause)
        for name, t in times.items():
            series.setdefault(name, []).append(t * scale)
        print(f"  {p:>8}: " + ", ".join(f"{n} {t * scale:.3g}" for n, t in times.items()), file=sys.stderr)
    return series


def panel(ax, points, series, title, xlabel, ylabel):
    for name, ys in series.items():
        ax.loglog(points, ys, STYLE.get(name, "-"), label=name, markersize=4)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 short repeats per point")
    args = ap.parse_args(argv)
    repeats, min_time, pause = (3, 0.02, 0.0) if args.quick else (7, 0.05, 0.05)
    if B.torch is not None:
        B.torch.set_num_threads(B.blas_threads())
    B.wg.set_backend("cpu")
    env = B.environment(B.pin_malloc())

    print("a * b without grad", file=sys.stderr)
    mul = sweep(SIZES, mul_contenders, 1e6, repeats, min_time, pause)
    print("10-op chain with backward", file=sys.stderr)
    chain = sweep(SIZES, chain_contenders, 1e6 / B.CHAIN_OPS, repeats, min_time, pause)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    panel(left, SIZES, mul, "a * b, no grad", "elements", "µs per op")
    panel(right, SIZES, chain, "10-op chain + backward", "elements", "µs per op")
    fig.suptitle(f"per-op cost — {env}", fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "scaling_op.png", dpi=120)

    print("MLP step", file=sys.stderr)
    mlp = sweep(BATCHES, lambda b: {n: make(b) for n, make in B.mlp_makers().items()}, 1e3,
                repeats, min_time * 2, pause * 2)
    fig, ax = plt.subplots(figsize=(6.5, 4.8))
    panel(ax, BATCHES, mlp, "MLP 784-256-10 training step", "batch", "ms per step")
    fig.suptitle(env, fontsize=7)
    fig.tight_layout()
    fig.savefig(HERE / "scaling_mlp.png", dpi=120)
    print(f"wrote {HERE / 'scaling_op.png'} and {HERE / 'scaling_mlp.png'}", file=sys.stderr)


if __name__ == "__main__":
    main()
