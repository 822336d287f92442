"""``wg.compile`` in headless Chromium on ``webgpu``: a compiled MLP training step with Adam gives
eager's losses, parameters, gradients and optimizer state on the same backend (within float32
rounding), its later steps are replays of the captured plan, held by gpu.js after its first replay (Adam's step
size and bias correction written into it at each replay), and such a
replay is one call into gpu.js, which encodes and submits every dispatch (issue 19)."""
import json

SETUP = """
import json
import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F

def setup(compiled, layers, adam=True):
    wg.manual_seed(0)
    model = nn.Sequential(*layers())     # made after the seed
    opt = (wg.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.001) if adam else
           wg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.001))

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, opt, (wg.compile(step) if compiled else step)
"""

TRAIN = SETUP + """
def train(compiled, steps=STEPS):
    model, opt, fn = setup(compiled, lambda: [nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 4)])
    losses = []
    for i in range(steps):
        g = wg.Generator().manual_seed(i)
        x, y = wg.randn(16, 8, generator=g), wg.randint(0, 4, (16,), generator=g)
        losses.append(fn(x, y).item())
    params = [p.tolist() for p in model.parameters()]
    grads = [p.grad.tolist() for p in model.parameters()]
    state = [{k: (v.tolist() if isinstance(v, wg.Tensor) else v) for k, v in sorted(opt.state[p].items())}
             for p in model.parameters()]
    return fn, dict(losses=losses, params=params, grads=grads, state=state)

_, eager = train(False)
fn, compiled = train(True)
print(json.dumps(dict(backend=wg.get_backend().name, eager=eager, compiled=compiled,
                      traces=fn.traces, replays=fn.replays, explain=fn.explain())))
"""
STEPS = 6


def _flat(v):
    if isinstance(v, dict):
        return [x for k in sorted(v) for x in _flat(v[k])]
    if isinstance(v, list):
        return [x for e in v for x in _flat(e)]
    return [v]


def _close(a, b, what):
    a, b = _flat(a), _flat(b)
    assert len(a) == len(b), what
    for i, (x, y) in enumerate(zip(a, b)):
        assert abs(x - y) <= 1e-6 + 1e-5 * abs(y), f"{what}[{i}]: compiled {x} vs eager {y}"


def _run(page, code=TRAIN, steps=STEPS):
    out = page.ok(f"STEPS = {steps}\n" + code, timeout_s=240)
    return json.loads(out)


def test_a_compiled_adam_step_matches_eager_on_webgpu(webgrad_page):
    r = _run(webgrad_page)
    assert r["backend"] == "webgpu"
    assert (r["traces"], r["replays"]) == (2, STEPS - 2), r["explain"]   # the first step makes Adam's state
    assert "backend webgpu" in r["explain"] and "runs eagerly" not in r["explain"], r["explain"]
    assert "held by the device: " in r["explain"], r["explain"]   # AdamStep's per-step numbers written by gpu.js
    for key in ("losses", "params", "grads", "state"):
        _close(r["compiled"][key], r["eager"][key], key)
    assert r["compiled"]["losses"][-1] < r["compiled"]["losses"][0]


CALLS = SETUP + """
be = wg.backend("webgpu")
model, opt, step = setup(True, lambda: [nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4)], adam=False)
x, y = wg.randn(16, 8), wg.randint(0, 4, (16,))
for _ in range(3):                         # two traces (momentum makes its state), one replay
    step(x, y).item()
calls = be.device.js.calls
before = calls()
loss = step(x, y)                          # a replay of the plan gpu.js holds: one call, nothing left recorded
recorded = len(be._records)
during = calls() - before
be.flush()
flushed = calls() - before - during
buffers = [id(p.grad._data.storage) for p in model.parameters()]
step(x, y).item()                          # each new .grad in the buffer of the one it replaces (Pyodide's refcounts)
same = [id(p.grad._data.storage) for p in model.parameters()] == buffers
print(json.dumps(dict(during=during, flush=flushed, recorded=recorded, same_buffers=same,
                      replays=step.replays, loss=loss.item(), explain=step.explain())))
"""


def test_a_replay_is_one_call_into_javascript(webgrad_page):
    r = json.loads(webgrad_page.ok(CALLS, timeout_s=240))
    assert r["replays"] == 3, r
    assert "held by the device: " in r["explain"], r["explain"]   # every kernel of forward, backward, the update
    assert (r["recorded"], r["during"], r["flush"]) == (0, 1, 0), r
    assert r["same_buffers"] and "new .grad tensors in the buffers of those they replace" in r["explain"], r
    assert r["loss"] == r["loss"] and r["loss"] > 0, r
