"""Start-up A/B: two built sites (``python -m webgrad.web.site DIR``, e.g. one built from main and one
from a branch), measured in interleaved rounds on the same machine, so that the machine's load
(other jobs) weighs on both alike: each round opens a new browser profile per site (1 cold + 2 warm
visits of startup.html, as ``bench_browser.py --startup`` does), alternating which site goes first,
with TensorFlow.js's row (from ``--tfjs``) in the same rounds.

    python bench/startup_ab.py SITE_A SITE_B [--rounds 5] [--names before,after]
"""
from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import threading
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_browser as bb  # noqa: E402
from webgrad.web.serve import Handler, QuietServer  # noqa: E402
from webgrad.web.serve_checks import LOOPBACK_HOSTS  # noqa: E402


class Served:
    """A built site served on a free port, with TensorFlow.js mounted at /tfjs/."""

    def __init__(self, root: Path, tfjs: Path):
        self.requests = []
        handler = functools.partial(Handler, site=Path(root).resolve(), mounts={"tfjs": tfjs.resolve()},
                                    hosts=LOOPBACK_HOSTS, requests=self.requests)
        self.httpd = QuietServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def fmt(visits) -> str:
    ms = [v["first_result_ms"] for v in visits]
    return f"{statistics.median(ms):.0f} ({min(ms):.0f}..{max(ms):.0f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sites", nargs=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--names", default="A,B")
    ap.add_argument("--tfjs", default=str(bb.TFJS))
    ap.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args(argv)
    args.incognito = args.headed = False
    names = args.names.split(",")
    servers = {name: Served(Path(site), Path(args.tfjs)) for name, site in zip(names, args.sites)}
    runs = {(name, lib): [] for name in names for lib in ("webgrad", "tfjs")}
    load0, t0 = os.getloadavg(), time.perf_counter()
    with sync_playwright() as p:
        for r in range(args.rounds):
            order = names if r % 2 == 0 else names[::-1]
            for name in order:
                for lib in ("webgrad", "tfjs"):
                    with bb.browser_profile(p, args) as context:
                        runs[name, lib].append([bb.visit(context, servers[name], lib, args.timeout, i == 0)
                                                for i in range(1 + bb.WARM_VISITS)])
            print(f"round {r + 1}: load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print("| site | library | cold: median (min..max) ms | warm: median (min..max) ms | sent cold | sent warm |")
    print("|---|---|---:|---:|---:|---:|")
    for (name, lib), rounds in runs.items():
        cold, warm = [r[0] for r in rounds], [v for r in rounds for v in r[1:]]
        mb = lambda vs: f"{statistics.median(v['sent'] for v in vs) / 1e6:.2f} MB"
        print(f"| {name} | {lib} | {fmt(cold)} | {fmt(warm)} | {mb(cold)} | {mb(warm)} |")
    for name in names:
        for which, v in (("cold", runs[name, "webgrad"][0][0]), ("warm", runs[name, "webgrad"][0][1])):
            steps = ", ".join(f"{k} {t:.0f}" for k, t in v["phases"].items() if isinstance(t, (int, float)))
            print(f"\n{name} {which} ({v['phases'].get('snapshot')}): {steps}, first result {v['first_result_ms']:.0f}")
    print(f"\n{args.rounds} interleaved rounds; load average {load0[0]:.2f} {load0[1]:.2f} at start, "
          f"{os.getloadavg()[0]:.2f} at end; {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
