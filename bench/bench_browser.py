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

``--startup`` measures start-up alone, on ``web/startup.html`` served as the site is (hashed assets
cached for good, pre-compressed files, the site's own Pyodide): navigation -> first result read
back, on a cold browser cache (a new browser profile: ``--incognito`` uses a new incognito context,
which keeps no V8 code cache) and on warm ones (the next visits in that profile), each ``--rounds`` times (medians and bests printed); a
webgrad visit stays open (untimed) until its worker has kept the site's files in Cache Storage for the next
visit, as a user's page would (``KEEP_WAIT_S``), a profile's first visit 3 s more (V8 writes the code cache of
the WebAssembly that the worker's warm-up optimized then; ``CODE_CACHE_WAIT_S``); for webgrad and for TensorFlow.js
(its ``webgpu`` backend, the same computation) as a reference, with what each visit transferred.
TensorFlow.js is served from ``--tfjs DIR`` (a node_modules folder; default ``build/tfjs/node_modules``:
``npm install --prefix build/tfjs @tensorflow/tfjs@4.22.0 @tensorflow/tfjs-backend-webgpu@4.22.0``);
without it that row says so.

``--compile`` measures ``wg.compile`` on ``web/compile_bench.html``: the MLP 784-256-10 SGD step at
batch 128, webgrad eager and compiled against TensorFlow.js (``webgpu`` backend, ``optimizer.minimize``)
and jax-js (``jit`` of ``valueAndGrad`` and the update), each in its own idiom, in ``--rounds`` interleaved
rounds of ``--steps`` steps (medians); the compiled replay's cost per kernel (the Python call, and the
gpu.js call inside it) and the dispatches per step, eager and compiled, with issue 19's targets. The
JS contenders are pinned in ``bench/js/package.json`` (``npm install`` in ``bench/js/``).

Run: ``python bench/bench_browser.py [--repeat 5] [--mlp-repeat 2] [--steps 3] [--headed]``,
``python bench/bench_browser.py --startup [--rounds 3]`` or ``python bench/bench_browser.py --compile``.
SwiftShader runs WGSL on the CPU: an MLP step takes about a second, so absolute numbers mean
little; the ratios to the floor are the point.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout, sync_playwright

from webgrad.web.serve import Server

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
TFJS = ROOT / "build" / "tfjs" / "node_modules"
TFJS_INSTALL = "npm install --prefix build/tfjs @tensorflow/tfjs@4.22.0 @tensorflow/tfjs-backend-webgpu@4.22.0"
CONTENDERS = ROOT / "bench" / "js" / "node_modules"
WARM_VISITS = 2
KEEP_WAIT_S = 15        # a visit stays until the worker has kept the site's files (Cache Storage), at most this
CODE_CACHE_WAIT_S = 3   # and a profile's first visit this long more: V8 writes its code cache ~2 s after optimizing
ARGS = ["--enable-unsafe-webgpu", "--no-sandbox", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def open_page(args, path: str, name: str, mounts=None) -> dict:
    """Open ``path`` (with the local Pyodide) headless and return its ``window[name]`` once it is done."""
    with Server(port=0, mounts=mounts) as server, sync_playwright() as p:
        if server.pyodide is None:
            sys.exit("bench_browser: no local Pyodide; run `npm install` in web/ first")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=not args.headed)
        page = browser.new_page()
        page.on("console", lambda m: m.type == "error" and print(f"console error: {m.text}", file=sys.stderr))
        page.goto(f"{server.url}{path}&pyodide=./pyodide/")
        page.wait_for_function(f"window.{name} && window.{name}.done", timeout=args.timeout * 1000)
        result = page.evaluate(f"window.{name}")
        result["chromium"] = browser.version
        browser.close()
    if result["error"]:
        sys.exit(f"bench_browser: {path.split('?')[0]} failed: {result['error']}")
    return result


def run_page(args) -> dict:
    """Open bench.html headless and return its ``window.__bench`` when done."""
    return open_page(args, f"bench.html?repeat={args.repeat}&mlp_repeat={args.mlp_repeat}&steps={args.steps}",
                     "__bench")


def table(result) -> str:
    lines = ["| benchmark | unit | webgrad | direct JS WebGPU | webgrad / JS |", "|---|---|---:|---:|---:|"]
    for row in result["rows"]:
        floor = row["floor"]
        digits = 0 if row["unit"] == "ms" else 2
        lines.append(f"| {row['name']} | {row['unit']} | {row['webgrad']:.{digits}f} | "
                     + ("- | - |" if floor is None else f"{floor:.{digits}f} | {row['webgrad'] / floor:.2f} |"))
    return "\n".join(lines)


def visit(context, server, lib: str, timeout_s: int, first_in_profile: bool = False) -> dict:
    """Open startup.html for ``lib`` in ``context``; its ``window.__startup`` and what the visit sent."""
    first = len(server.requests)
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and print(f"console error: {m.text}", file=sys.stderr))
    page.goto(f"{server.url}startup.html?lib={lib}")
    page.wait_for_function("window.__startup && window.__startup.done", timeout=timeout_s * 1000)
    result = page.evaluate("window.__startup")
    if lib == "webgrad" and result["phases"] and result["phases"].get("snapshot") == "site":
        # as a user stays on the page (not timed): after the first result the worker stores the
        # site's files for the next visit and, on a first visit, warms Python up so that V8 keeps
        # its compiled WebAssembly, which V8 writes about 2 s later (see worker.js)
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_function("window.__startup.kept", timeout=KEEP_WAIT_S * 1000)
            if first_in_profile:
                time.sleep(CODE_CACHE_WAIT_S)
    page.close()
    if result["error"]:
        sys.exit(f"bench_browser: startup.html?lib={lib} failed: {result['error']}")
    sent = server.requests[first:]
    result["sent"] = sum(r["bytes"] for r in sent)
    result["raw"] = sum(r["raw"] for r in sent if r["status"] == 200)
    result["requests"] = sent
    return result


def startup_runs(args) -> dict:
    """{lib: [[cold, warm, ...] per round]} for webgrad and (when installed) TensorFlow.js."""
    tfjs = Path(args.tfjs)
    mounts = {"tfjs": tfjs} if (tfjs / "@tensorflow" / "tfjs").is_dir() else {}
    runs = {}
    with Server(port=0, mounts=mounts) as server, sync_playwright() as p:
        if server.pyodide is None:
            sys.exit("bench_browser: no local Pyodide; run `npm install` in web/ first")
        for lib in ["webgrad"] + (["tfjs"] if mounts else []):
            runs[lib] = []
            for _ in range(args.rounds):
                with browser_profile(p, args) as context:    # an empty HTTP cache, code cache and Cache Storage
                    runs[lib].append([visit(context, server, lib, args.timeout, first_in_profile=i == 0)
                                      for i in range(1 + WARM_VISITS)])
                    runs["chromium"] = context.browser.version if context.browser else chromium_version()
    return runs


@contextlib.contextmanager
def browser_profile(p, args):
    """A browser context with empty caches: by default a new profile on disk, as a user's browser is
    (Chromium keeps V8's code cache -- compiled JS and WebAssembly -- only there); with ``--incognito``
    a new context of one browser, which has no code cache, so every visit compiles Pyodide's
    WebAssembly again (what this bench measured before 2026-11-24's second run)."""
    if args.incognito:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=not args.headed)
        try:
            yield browser.new_context()
        finally:
            browser.close()
        return
    with tempfile.TemporaryDirectory(prefix="webgrad-profile-") as folder:
        context = p.chromium.launch_persistent_context(folder, executable_path=CHROMIUM, args=ARGS, headless=not args.headed)
        try:
            yield context
        finally:
            context.close()


def chromium_version() -> str:
    return subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()


def startup_table(runs) -> str:
    """Medians and bests of the cold and warm visits, and the bytes a visit transferred."""
    lines = ["| library | cold: median (best) ms | warm: median (best) ms | sent cold | sent warm | uncompressed cold |",
             "|---|---:|---:|---:|---:|---:|"]
    names = {"webgrad": "webgrad (Pyodide, webgpu)", "tfjs": "TensorFlow.js 4.22 (webgpu)"}
    for lib, rounds in runs.items():
        if lib not in names:
            continue
        cold = [r[0] for r in rounds]
        warm = [v for r in rounds for v in r[1:]]
        ms = lambda vs: f"{statistics.median(v['first_result_ms'] for v in vs):.0f} ({min(v['first_result_ms'] for v in vs):.0f})"
        mb = lambda vs, key: f"{statistics.median(v[key] for v in vs) / 1e6:.2f} MB"
        lines.append(f"| {names[lib]} | {ms(cold)} | {ms(warm)} | {mb(cold, 'sent')} | {mb(warm, 'sent')} | {mb(cold, 'raw')} |")
    if "tfjs" not in runs:
        lines.append(f"| TensorFlow.js | not installed: `{TFJS_INSTALL}` | | | | |")
    return "\n".join(lines)


def phases_line(runs) -> str:
    """webgrad's start-up steps (ms since navigation) of the first round's cold and first warm visit."""
    out = []
    for which, v in (("cold", runs["webgrad"][0][0]), ("warm", runs["webgrad"][0][1])):
        steps = ", ".join(f"{k} {t:.0f}" for k, t in v["phases"].items() if isinstance(t, (int, float)))
        out.append(f"{which} ({v['phases'].get('snapshot')}): {steps}, first result {v['first_result_ms']:.0f}")
    return "\n".join(out)


def assets_table(runs) -> str:
    """What webgrad's cold visit fetched: each file's size and what was sent (and how)."""
    lines = ["| file | size | sent | encoding |", "|---|---:|---:|---|"]
    for r in runs["webgrad"][0][0]["requests"]:
        lines.append(f"| {r['path']} | {r['raw']} | {r['bytes']} | {r['encoding'] or '-'} |")
    return "\n".join(lines)


def main_startup(args) -> None:
    load = os.getloadavg()[0]
    t = time.perf_counter()
    runs = startup_runs(args)
    print(startup_table(runs))
    print("\n" + phases_line(runs))
    print("\n" + assets_table(runs))
    print(f"\nChromium {runs['chromium']} ({'incognito contexts' if args.incognito else 'new profiles'}); {args.rounds} rounds of 1 cold + {WARM_VISITS} warm visits; "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load average {load:.2f} at start, {os.getloadavg()[0]:.2f} "
          f"at end; total {time.perf_counter() - t:.0f} s")


def compile_page(args) -> dict:
    """Open compile_bench.html headless and return its ``window.__cbench`` when done."""
    if not (CONTENDERS / "@jax-js" / "jax").is_dir():
        sys.exit("bench_browser --compile: the JS contenders are not installed: npm install in bench/js/")
    return open_page(args, f"compile_bench.html?rounds={args.rounds}&steps={args.steps}", "__cbench",
                     {"contenders": CONTENDERS})


def compile_table(r) -> str:
    names = {"eager": "webgrad eager (webgpu)", "compiled": "webgrad wg.compile (webgpu)",
             "tfjs": f"TensorFlow.js {r['versions']['tfjs']} (webgpu)", "jaxjs": f"jax-js {r['versions']['jaxjs']} (jit, webgpu)"}
    lines = ["| contender | ms / step: median (min..max) | compiled / contender (median of rounds) |", "|---|---:|---:|"]
    for k, name in names.items():
        t = r["rows"][k]
        lines.append(f"| {name} | {statistics.median(t):.1f} ({min(t):.1f}..{max(t):.1f}) | {r['ratios'][k]:.2f} |")
    rep, d = r["replay"], r["dispatches"]
    targets = [("recording cost of a compiled step ≤ 1 µs per kernel (the held plan's replay, Python)",
                rep["recording_us_per_kernel"], 1.0),
               ("the same, the whole compiled call's Python (guards and write-backs too)", rep["python_us_per_kernel"], 1.0),
               ("MLP step ≤ 0.8× jax-js's jit step", r["ratios"]["jaxjs"], 0.8),
               ("MLP step ≤ 0.5× TensorFlow.js (webgpu)", r["ratios"]["tfjs"], 0.5)]
    mm = r["matmuls"]
    per_round = "; ".join(f"{k} " + ", ".join(f"{c / t:.2f}" for c, t in zip(r["rows"]["compiled"], r["rows"][k]))
                          for k in ("eager", "tfjs", "jaxjs"))
    lines += ["", f"compiled / contender, round by round: {per_round}",
              f"dispatches per step: eager {d['eager']}, compiled {d['compiled']}",
              f"the step's five matrix products alone (ms, median of rounds): webgrad {statistics.median(mm['webgrad']):.1f}, "
              f"jax-js {statistics.median(mm['jaxjs']):.1f}",
              f"compiled step's call (mean of 30, each on an idle queue): {rep['call_us']:.0f} µs for {rep['kernels']} kernels = "
              f"{rep['call_us_per_kernel']:.2f} µs per kernel: gpu.js (encoding and submitting every dispatch) "
              f"{rep['js_us']:.0f} µs, the held plan's Python (buffers, per-step numbers) {rep['recording_us']:.0f} µs = "
              f"{rep['recording_us_per_kernel']:.2f} µs per kernel, the compiled function's guards and write-backs "
              f"{rep['guards_us']:.0f} µs; {rep['state']}; {rep['group_misses']} of {rep['replays']} replays made bind groups",
              f"first three losses: " + "; ".join(f"{k} {', '.join(f'{v:.5f}' for v in vs)}" for k, vs in r["losses"].items()),
              "", "| target | measured | |", "|---|---:|---|"]
    lines += [f"| {what} | {got:.2f} | {'pass' if got <= want else 'short'} |" for what, got, want in targets]
    return "\n".join(lines)


def main_compile(args) -> None:
    load = os.getloadavg()
    t = time.perf_counter()
    r = compile_page(args)
    print(compile_table(r))
    print(f"\nChromium {r['chromium']}; {args.rounds} rounds of {args.steps} steps; {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start, "
          f"{os.getloadavg()[0]:.2f} at end; total {time.perf_counter() - t:.0f} s")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed chain runs (best kept)")
    ap.add_argument("--mlp-repeat", type=int, default=2, help="timed MLP runs (best kept)")
    ap.add_argument("--steps", type=int, default=3, help="MLP steps per timed run")
    ap.add_argument("--timeout", type=int, default=600, help="seconds to wait for the page")
    ap.add_argument("--headed", action="store_true")
    ap.add_argument("--startup", action="store_true", help="measure start-up only (cold and warm cache)")
    ap.add_argument("--rounds", type=int, default=3, help="--startup: browser contexts (1 cold + 2 warm visits "
                                                          "each); --compile: interleaved rounds")
    ap.add_argument("--incognito", action="store_true",
                    help="--startup: each round in an incognito context (no V8 code cache) instead of a new profile")
    ap.add_argument("--compile", action="store_true", help="wg.compile's MLP step against TensorFlow.js and jax-js")
    ap.add_argument("--tfjs", default=str(TFJS), help="--startup: node_modules folder holding @tensorflow/tfjs")
    args = ap.parse_args(argv)
    if args.startup:
        return main_startup(args)
    if args.compile:
        return main_compile(args)
    t = time.perf_counter()
    result = run_page(args)
    print(table(result))
    start = result["startup"]
    print(f"\nbackend {result['backend']['name']} ({result['backend']['adapter']}); Chromium {result['chromium']}; "
          f"startWebgrad {start['ready_ms']:.0f} ms, first result {start['first_result_ms']:.0f} ms; "
          f"{platform.machine()}, {platform.python_version()} host; total {time.perf_counter() - t:.0f} s")


if __name__ == "__main__":
    main()
