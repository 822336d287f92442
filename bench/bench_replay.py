"""The Python of one compiled replay on the GPU backends (issue 19: "recording cost of a compiled step
<= 1 us per kernel"), measured natively: the MLP 784-256-10 step at batch 128 as the browser bench
writes it (plain tensors and SGD; made by ``reshape`` as the page makes them, or directly) and as
modules with Adam, compiled, replayed from the plan the device holds, with the device's submit replaced by nothing (so only Python is timed, and no
shader runs), split into

* guards: the call's places and key (``find_places``, or the quick guard, ``core/compiler/quick.py``),
* per-step numbers (the plan's prologue), write-backs and outputs (one generated function, ``Replay.finish``;
  ``core/compiler/replay.py``),
* the held plan's Python (``backends/gpu/resident.py``: input and output buffers, per-step bytes),
* the rest of the call (``CompiledFunction.__call__``);

and, apart, the device's encoding of the held plan's dispatches (wgpu-py: ``HostPlan.encode``; the
browser's is gpu.js's ``run()``), on a real submit. Thread CPU time (the machine is shared), the best of
``--rounds`` rounds of ``--replays`` replays.

    python bench/bench_replay.py [--backend wgpu] [--replays 2000] [--rounds 5]
"""
from __future__ import annotations

import argparse
import time

import webgrad as wg
import webgrad.nn.functional as F
from webgrad.compiler import compiled as compiled_module

B, D_IN, D_H, D_OUT = 128, 784, 256, 10
clock = time.thread_time_ns


def browser_step(backend):
    """The browser bench's step, its tensors made directly (not by ``reshape``): tensors in a closure, SGD."""
    wg.manual_seed(0)
    x, y = wg.randn(B, D_IN, device=backend), wg.randint(0, D_OUT, (B,), device=backend)
    w1 = (wg.randn(D_IN, D_H, device=backend) * 0.05).requires_grad_()
    w2 = (wg.randn(D_H, D_OUT, device=backend) * 0.05).requires_grad_()
    b1, b2 = wg.zeros(D_H, device=backend, requires_grad=True), wg.zeros(D_OUT, device=backend, requires_grad=True)
    opt = wg.optim.SGD([w1, b1, w2, b2], lr=0.01)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy((x @ w1 + b1).relu() @ w2 + b2, y)
        loss.backward()
        opt.step()
        return loss
    return step, x, y


def view_step(backend):
    """The browser bench's step as it is written there: its parameters and input made by ``reshape`` (views of
    the tensors made from lists), SGD."""
    wg.manual_seed(0)
    flat = [wg.randn(n, device=backend) * s for n, s in ((B * D_IN, 1.0), (D_IN * D_H, 0.05), (D_H * D_OUT, 0.05))]
    x, y = flat[0].reshape(B, D_IN), wg.randint(0, D_OUT, (B,), device=backend)
    w1, w2 = flat[1].reshape(D_IN, D_H).requires_grad_(), flat[2].reshape(D_H, D_OUT).requires_grad_()
    b1, b2 = wg.zeros(D_H, device=backend, requires_grad=True), wg.zeros(D_OUT, device=backend, requires_grad=True)
    opt = wg.optim.SGD([w1, b1, w2, b2], lr=0.01)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy((x @ w1 + b1).relu() @ w2 + b2, y)
        loss.backward()
        opt.step()
        return loss
    return step, x, y


def module_step(backend):
    """nn.Sequential and Adam (AdamStep kernels)."""
    wg.manual_seed(0)
    model = wg.nn.Sequential(wg.nn.Linear(D_IN, D_H), wg.nn.ReLU(), wg.nn.Linear(D_H, D_OUT)).to(backend)
    opt = wg.optim.Adam(model.parameters(), lr=1e-3)
    x, y = wg.randn(B, D_IN, device=backend), wg.randint(0, D_OUT, (B,), device=backend)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, x, y


class Split:
    """Thread CPU time per labelled part, by wrapping the callables that do each part."""

    def __init__(self):
        self.ns, self.undo = {}, []

    def wrap(self, owner, name, label):
        fn = getattr(owner, name)
        ns = self.ns

        def timed(*args, **kwargs):
            t = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                ns[label] = ns.get(label, 0) + clock() - t
        had = name in getattr(owner, "__dict__", {})
        setattr(owner, name, timed)
        self.undo.append((owner, name, fn if had else None))

    def restore(self):
        for owner, name, fn in reversed(self.undo):
            if fn is None:
                delattr(owner, name)
            else:
                setattr(owner, name, fn)


def measure(make, backend, replays, rounds):
    step, x, y = make(backend)
    fn = wg.compile(step)
    be = wg.backend(backend)
    for _ in range(5):
        fn(x, y).item()
    entries = [e for e in fn.plans.values() if type(e).__name__ == "Replay"]
    entry = next((e for e in entries if getattr(e.run_steps, "handle", None) is not None), entries[-1])
    held = entry.run_steps
    kernels = getattr(held, "dispatches", None) or len(entry.plan.steps)
    be.synchronize()
    device = be.device
    real_submit = device.submit
    device.submit = lambda copies=(), plan=None: None     # Python only: nothing reaches the device
    best = None
    try:
        for _ in range(rounds):
            split = Split()
            guard = "watch" if hasattr(compiled_module, "watch") else "find_places"
            split.wrap(compiled_module, guard, "guards: walk")
            quick = getattr(fn, "_quick", None)
            if quick is not None:
                split.wrap(type(quick), "__call__", "guards: quick")
            split.wrap(entry, "numbers", "per-step numbers")
            split.wrap(entry, "finish", "write-backs, outputs")
            if getattr(held, "handle", None) is not None:
                split.wrap(held, "replay", "held plan")
            else:
                split.wrap(entry, "run_steps", "Python replay (not held: " + getattr(held, "why", "?")[:40] + ")")
            t = clock()
            for _ in range(replays):
                fn(x, y)
            total = clock() - t
            split.restore()
            split.ns["whole call"] = total
            if best is None or total < best["whole call"]:
                best = split.ns
    finally:
        del device.submit
    parts = {k: v / replays / 1e3 for k, v in best.items()}
    parts["rest of the call"] = parts["whole call"] - sum(v for k, v in parts.items() if k != "whole call")
    held_plan = getattr(held, "handle", None) is not None
    encode = encode_cost(be, held, fn, x, y, real_submit, max(replays // 20, 20)) if held_plan else float("nan")
    return kernels, parts, encode


def encode_cost(be, held, fn, x, y, submit, n):
    """Thread CPU time of the device's encoding of the held plan (HostPlan.encode), real submits."""
    ns = [0]
    encode = held.handle.encode

    def timed(*args):
        t = clock()
        try:
            return encode(*args)
        finally:
            ns[0] += clock() - t
    held.handle.encode = timed
    try:
        for _ in range(n):
            be.synchronize()
            fn(x, y)
        be.synchronize()
    finally:
        del held.handle.encode
    return ns[0] / n / 1e3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="wgpu")
    ap.add_argument("--replays", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    print(f"webgrad {wg.__file__}; backend {a.backend}; thread CPU µs per replay, best of {a.rounds} x {a.replays}")
    for name, make in (("tensors in a closure, SGD", browser_step), ("the same made by reshape (as the browser "
                       "bench's)", view_step), ("nn.Sequential + Adam", module_step)):
        kernels, parts, encode = measure(make, a.backend, a.replays, a.rounds)
        print(f"\n{name}: {kernels} dispatches (or kernel calls, where not held)")
        for label, us in parts.items():
            print(f"  {label:28s} {us:8.1f} µs  {us / kernels:6.2f} µs per dispatch")
        print(f"  {'(device encoding, apart)':28s} {encode:8.1f} µs  {encode / kernels:6.2f} µs per dispatch")


if __name__ == "__main__":
    main()
