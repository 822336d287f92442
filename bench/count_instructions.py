"""bench_cpu.py's rows counted in CPU instructions instead of timed: a figure the machine's noise
cannot move (on this 2-CPU guest the same code's timings drift 20-40% between runs).

    python bench/count_instructions.py            # every row (a few minutes: valgrind runs code ~50x slower)
    python bench/count_instructions.py chain mlp128

Each contender's step runs N times inside one ``functools.reduce`` call in a fresh process under
valgrind's callgrind, which counts the instructions executed inside that call only (imports,
setup and warm-up are left out); PyTorch is never imported. Instructions are not time: they
leave out cache misses, page faults and the kernel's work (numpy's hand-written MLP step
page-faults ~450 times a step here, webgrad's none), and code differs in instructions per cycle
(PyTorch's C++ runs ``a + b`` in ~1.5x fewer of webgrad's instructions but only ~1.25x less
time, so it is left out of this count). What it is for: two versions of webgrad compare exactly
(run it once with each installed), and so do webgrad and the numpy-based contenders.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CONTENDERS = ("webgrad", "numpy", "floor")
ROWS = {   # name: (label, unit divisor, calls counted, contenders)
    "chain": ("10-op chain + backward, 8 elems, per op", 10, 400, CONTENDERS),
    "add": ("a + b, 1 elem, no grad", 1, 4000, CONTENDERS),
    "mlp128": ("MLP 784-256-10 step, batch 128", 1, 10, ("webgrad", "numpy")),
    "mlp1024": ("MLP 784-256-10 step, batch 1024", 1, 3, ("webgrad", "numpy")),
    "cnn": ("CNN step (8x8, conv3x3x8, pool, linear), batch 64", 1, 20, ("webgrad",)),
}


def step(row: str, contender: str):
    """The contender's step for ``row``, built with bench_cpu's own code."""
    sys.path.insert(0, str(HERE))
    import bench_cpu as B
    if contender == "webgrad":
        B.wg.set_backend("cpu")
    if row in ("chain", "add"):
        rng = np.random.default_rng(0)
        x0, w0 = rng.random(B.CHAIN_N, dtype=np.float32), rng.random(B.CHAIN_N, dtype=np.float32)
        return (B.chain_contenders(x0, w0) if row == "chain" else B.nograd_contenders())[contender]
    if row == "cnn":
        return B.cnn_makers()[contender]()
    return B.mlp_makers()[contender](int(row[3:]))


def child(row: str, contender: str, calls: int) -> None:
    fn = step(row, contender)
    for _ in range(3):
        fn()
    functools.reduce(lambda acc, _: fn(), range(calls), None)   # the counted call


def count(row: str, contender: str) -> float:
    """Instructions per call of the contender's step (per op for the chain), from callgrind."""
    calls = ROWS[row][2]
    env = dict(os.environ, WEBGRAD_BENCH_RSS_CHILD="webgrad", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--toggle-collect=functools_reduce",
           sys.executable, __file__, "--child", row, contender, str(calls)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode or not found:
        raise RuntimeError(f"callgrind run of {row}/{contender} failed:\n{out.stderr[-2000:]}")
    return int(found.group(1)) / calls / ROWS[row][1]


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--child"]:
        return child(args[1], args[2], int(args[3]))
    if shutil.which("valgrind") is None:
        sys.exit("needs valgrind (apt-get install valgrind)")
    rows = args or list(ROWS)
    print("| benchmark (instructions per call) | webgrad | numpy | floor | webgrad/numpy | webgrad/floor |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        label, _, _, contenders = ROWS[row]
        got = {c: count(row, c) for c in contenders}
        cells = [f"{got[c] / 1e3:,.1f}k" if c in got else "-" for c in CONTENDERS]
        ratios = [f"{got['webgrad'] / got[c]:.2f}" if c in got else "-" for c in CONTENDERS[1:]]
        print(f"| {label} | " + " | ".join(cells + ratios) + " |", flush=True)


if __name__ == "__main__":
    main()
