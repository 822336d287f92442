"""The demo page's Python: train a small classifier on 2-D data and post its progress to the page.

``web/index.html`` fetches this file, runs it in Pyodide's worker, then awaits
``train(webgrad.web.post, ...)``: every message is a plain dict (``kind`` = ``"data"``, ``"progress"``
or ``"done"``) that ``web/demo.js`` draws. Natively, ``python web/demo.py`` runs the same training
on the default backend and prints the messages' losses.

Data are made on the device with webgrad ops (the browser has no numpy), readbacks use
``await t.read()`` (no JSPI needed), and losses are read back in batches so the GPU is not
synchronised after every step. The training step runs through ``wg.compile`` (``compiled=False``
runs it eagerly): from its second call it replays the traced kernels (forward, backward, Adam's
update) without webgrad's per-op Python; the "done" message says how many calls were replays.
"""
import math
import sys

import webgrad as wg
import webgrad.nn.functional as F
from webgrad import nn

GRID = 40          # decision boundary: GRID x GRID points over the plotting box
BOX = (-2.0, 2.0)  # the plotting box, the same on both axes


def moons(n, noise=0.12):
    """Two interleaved half circles, ``n`` points each, centred on the origin."""
    t = wg.rand(n) * math.pi
    upper = wg.stack([t.cos() - 0.5, t.sin() - 0.25], dim=1)
    lower = wg.stack([0.5 - t.cos(), 0.25 - t.sin()], dim=1)
    return wg.cat([upper, lower]) * 1.4 + wg.randn(2 * n, 2) * noise


def spirals(n, noise=0.08):
    """Two interleaved spirals, ``n`` points each."""
    t = wg.rand(n).sqrt() * (3 * math.pi)
    r = t / (2 * math.pi)
    arms = [wg.stack([r * (t + phase).cos(), r * (t + phase).sin()], dim=1) for phase in (0.0, math.pi)]
    return wg.cat(arms) + wg.randn(2 * n, 2) * noise


DATASETS = {"moons": moons, "spirals": spirals}


def grid_points():
    """The GRID*GRID points (row-major, y down the rows) where the boundary is drawn."""
    ticks = wg.linspace(BOX[0], BOX[1], GRID)
    xs = ticks.reshape(1, GRID).expand(GRID, GRID).reshape(-1)
    ys = ticks.flip(0).reshape(GRID, 1).expand(GRID, GRID).reshape(-1)
    return wg.stack([xs, ys], dim=1)


async def train(post, dataset="spirals", steps=300, every=10, n=128, hidden=32, lr=0.03, seed=0, compiled=True):
    """Train a 2-hidden-layer MLP on ``dataset``; ``post(dict)`` receives the data, then progress
    every ``every`` steps (the new losses, the class-1 probability on the grid, the accuracy), then
    "done" (with the compiled step's traces and replays)."""
    wg.manual_seed(seed)
    x = DATASETS[dataset](n)
    y = wg.cat([wg.zeros(n, dtype=wg.int32), wg.ones(n, dtype=wg.int32)])
    grid = grid_points()
    post({"kind": "data", "backend": wg.get_backend().name, "points": await x.read(), "labels": await y.read(),
          "grid": GRID, "box": list(BOX)})
    model = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                          nn.Linear(hidden, 2))
    opt = wg.optim.Adam(model.parameters(), lr=lr)

    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()

    fn = wg.compile(train_step) if compiled else train_step
    pending = []
    for step in range(1, steps + 1):
        pending.append(fn(x, y))
        if step % every == 0 or step == steps:
            with wg.no_grad():
                losses = await wg.stack(pending).read()
                probs = await model(grid).softmax(dim=1)[:, 1].read()
                acc = await (model(x).argmax(dim=1) == y).float().mean().read()
            pending = []
            post({"kind": "progress", "step": step, "steps": steps, "losses": losses, "probs": probs,
                  "accuracy": acc})
    post({"kind": "done", "steps": steps, "traces": getattr(fn, "traces", None),
          "replays": getattr(fn, "replays", None)})


if __name__ == "__main__" and sys.platform != "emscripten":
    import asyncio

    asyncio.run(train(lambda msg: print(msg["kind"], msg.get("step", ""), msg.get("losses", [""])[-1:],
                                        msg.get("accuracy", ""), msg.get("replays", "")),
                      steps=int(sys.argv[1]) if sys.argv[1:] else 300, compiled="--eager" not in sys.argv))
