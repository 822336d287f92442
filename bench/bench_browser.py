"""Browser benchmark: webgrad in Pyodide on the ``webgpu`` backend against the same work written
directly in JS WebGPU on the same page (the floor), in headless Chromium (SwiftShader here).

It serves ``web/`` with a wheel built from this checkout (``webgrad.web.serve``), opens
``web/bench.html`` with the local Pyodide (``web/node_modules/pyodide``: ``npm install`` in ``web/``),
and prints the page's table:

* per-op cost of the 1000-op elementwise chain of ``bench/bench_gpu.py`` (``y = y * 1.0001`` on 1024
  floats, then a readback) against 1000 dispatches recorded in one compute pass;
* an MLP 784-256-10 SGD step at batch 128 (``bench/bench_cpu.py``'s) against 13 hand-written
  dispatches (tiled matmul with strides, fused bias/ReLU, softmax cross-entropy, column sums, SGD);
  the page first checks that both give the same losses over three steps;
* Pyodide start-up (worker, interpreter, wheel install, WebGPU device) to the first result.

Run: ``python bench/bench_browser.py [--repeat 5] [--mlp-repeat 2] [--steps 3] [--headed]``.
SwiftShader runs WGSL on the CPU: an MLP step takes about a second, so absolute numbers mean
little; the ratios to the floor are the point.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time

from playwright.sync_api import sync_playwright

from webgrad.web.serve import Server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--enable-unsafe-webgpu", "--no-sandbox", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def run_page(args) -> dict:
    """Open bench.html headless and return its ``window.__bench`` when done."""
    query = f"pyodide=./pyodide/&repeat={args.repeat}&mlp_repeat={args.mlp_repeat}&steps={args.steps}"
    with Server(port=0) as server, sync_playwright() as p:
        if server.pyodide is None:
            sys.exit("bench_browser: no local Pyodide; run `npm install` in web/ first")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=not args.headed)
        page = browser.new_page()
        page.on("console", lambda m: m.type == "error" and print(f"console error: {m.text}", file=sys.stderr))
        page.goto(f"{server.url}bench.html?{query}")
        page.wait_for_function("window.__bench && window.__bench.done", timeout=args.timeout * 1000)
        result = page.evaluate("window.__bench")
        result["chromium"] = browser.version
        browser.close()
    if result["error"]:
        sys.exit(f"bench_browser: the page failed: {result['error']}")
    return result


def table(result) -> str:
    lines = ["| benchmark | unit | webgrad | direct JS WebGPU | webgrad / JS |", "|---|---|---:|---:|---:|"]
    for row in result["rows"]:
        floor = row["floor"]
        digits = 0 if row["unit"] == "ms" else 2
        lines.append(f"| {row['name']} | {row['unit']} | {row['webgrad']:.{digits}f} | "
                     + ("- | - |" if floor is None else f"{floor:.{digits}f} | {row['webgrad'] / floor:.2f} |"))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed chain runs (best kept)")
    ap.add_argument("--mlp-repeat", type=int, default=2, help="timed MLP runs (best kept)")
    ap.add_argument("--steps", type=int, default=3, help="MLP steps per timed run")
    ap.add_argument("--timeout", type=int, default=600, help="seconds to wait for the page")
    ap.add_argument("--headed", action="store_true")
    args = ap.parse_args(argv)
    t = time.perf_counter()
    result = run_page(args)
    print(table(result))
    start = result["startup"]
    print(f"\nbackend {result['backend']['name']} ({result['backend']['adapter']}); Chromium {result['chromium']}; "
          f"startWebgrad {start['ready_ms']:.0f} ms, first result {start['first_result_ms']:.0f} ms; "
          f"{platform.machine()}, {platform.python_version()} host; total {time.perf_counter() - t:.0f} s")


if __name__ == "__main__":
    main()
