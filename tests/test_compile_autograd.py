"""Autograd across a compiled function's boundary: ``model = wg.compile(model)`` with the loss,
``backward()`` and the optimizer step outside replays the forward and, through the outputs' one
``CompiledBackward`` node, the traced backward; losses, parameters and gradients are eager's (bit for
bit on cpu, within float32 rounding on the GPU), for parameters, leaf arguments and arguments with a
graph of their own; hooks on tensors inside keep a call eager, hooks on parameters run; a double
backward through replayed outputs raises."""
import pytest

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F

from test_compile import _flat, _same


def _train(backend, compiled, steps=5):
    wg.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.3),
                          nn.Linear(16, 4)).to(backend)
    opt = wg.optim.Adam(model.parameters(), lr=0.01)
    fast = wg.compile(model) if compiled else model
    losses = []
    for i in range(steps):
        g = wg.Generator().manual_seed(i)
        x, y = wg.randn(6, 8, generator=g).to(backend), wg.randint(0, 4, (6,), generator=g).to(backend)
        opt.zero_grad()
        loss = F.cross_entropy(fast(x), y)                 # the loss, backward and step outside
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return fast, dict(losses=losses, params=[p.tolist() for p in model.parameters()],
                      grads=[p.grad.tolist() for p in model.parameters()],
                      buffers=[b.tolist() for b in model.buffers()], rng=wg.rand(2).tolist())


def test_a_compiled_model_trained_outside_gives_eagers_results(backend):
    _, eager = _train(backend, compiled=False)
    fast, compiled = _train(backend, compiled=True)
    for key in eager:
        _same(_flat(compiled[key]), _flat(eager[key]), backend)
    assert fast._compiled.replays == 4
    text = fast.explain()
    assert "backward kernels" in text and "runs eagerly" not in text


def _graph_fn(backend):
    w = wg.randn(3, 3, generator=wg.Generator().manual_seed(1)).to(backend).requires_grad_()

    def f(x, z):
        h = (x @ w).tanh()
        return h * z, h.sum()                    # two outputs, both differentiable
    return w, f


def test_gradients_reach_leaf_arguments_and_the_graph_of_others(backend):
    results = []
    for compiled in (False, True):
        w, f = _graph_fn(backend)
        fn = wg.compile(f) if compiled else f
        a = wg.ones(2, 3, backend=backend, requires_grad=True)
        z = wg.full((2, 3), 0.5, backend=backend, requires_grad=True)
        for k in range(4):                       # (the second call traces again: .grad is no longer None)
            x = a * (k + 1.0)                    # an argument with a graph outside the function
            out, total = fn(x, z)
            (out.square().sum() + total * 0.25).backward()
        results.append([t.grad.tolist() for t in (w, a, z)])
    _same(_flat(results[1]), _flat(results[0]), backend)
    assert fn.replays == 2 and type(out.grad_fn).__name__ == "Node" and out.grad_fn.name() == "CompiledBackward"


def test_an_unused_output_gets_a_zero_gradient(backend):
    grads = []
    for compiled in (False, True):
        w, f = _graph_fn(backend)
        fn = wg.compile(f) if compiled else f
        for _ in range(3):
            out, _total = fn(wg.ones(2, 3, backend=backend), wg.ones(2, 3, backend=backend))
            out.sum().backward()
        grads.append(w.grad.tolist())
    _same(_flat(grads[1]), _flat(grads[0]), backend)


def test_a_hook_inside_keeps_the_call_eager_and_parameter_hooks_run(backend):
    seen = []
    w = wg.ones(3, backend=backend, requires_grad=True)
    w.register_hook(lambda g: seen.append(g.tolist()))

    def f(x):
        h = x * w
        h.register_hook(lambda g: g * 2)         # a hook on a tensor made inside: eager
        return h.sum()

    def g(x):
        return (x * w).sum()

    hooked, plain = wg.compile(f), wg.compile(g)
    for _ in range(3):
        hooked(wg.full((3,), 2.0, backend=backend)).backward()
    assert hooked.replays == 0 and "hook" in hooked.explain() and w.grad.tolist() == [12.0] * 3
    seen.clear()
    for _ in range(3):
        plain(wg.full((3,), 2.0, backend=backend)).backward()
    assert plain.replays == 2 and seen == [[2.0] * 3] * 3 and w.grad.tolist() == [18.0] * 3


def test_a_double_backward_through_a_replay_raises_and_a_freed_graph_too(backend):
    w = wg.ones(3, backend=backend, requires_grad=True)
    f = wg.compile(lambda x: (x * w).square().sum())
    for _ in range(2):
        y = f(wg.ones(3, backend=backend))
    with pytest.raises(RuntimeError, match="double backward"):
        wg.autograd.grad(y, w, create_graph=True)
    y = f(wg.ones(3, backend=backend))
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


class Gated(nn.Module):
    """A module whose forward branches on its data (a graph break inside a compiled model)."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        h = self.a(x)
        return self.b(h).relu() if h.mean() > 0 else h.tanh()


def test_a_branching_model_trained_outside_replays_each_branch_with_eagers_gradients(backend):
    runs = []
    for compiled in (False, True):
        wg.manual_seed(3)
        model = Gated().to(backend)
        opt = wg.optim.SGD(model.parameters(), lr=0.1)
        fast = wg.compile(model) if compiled else model
        out = []
        for i in range(8):
            x = (wg.randn(5, 4, generator=wg.Generator().manual_seed(i)) + (2 if i % 2 else -2)).to(backend)
            opt.zero_grad()
            loss = fast(x).square().mean()
            loss.backward()
            opt.step()
            out.append(loss.item())
        runs.append((out, [p.tolist() for p in model.parameters()]))
    _same(_flat(runs[1][0]), _flat(runs[0][0]), backend)
    _same(_flat(runs[1][1]), _flat(runs[0][1]), backend)
    assert (fast._compiled.traces, fast._compiled.replays) == (2, 6)
    assert fast.explain().count("backward kernels") == 2 and "2 piece(s)" in fast.explain()


def test_a_step_returning_its_logits_after_its_backward_replays(backend):
    runs = []
    for compiled in (False, True):
        wg.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(backend)
        opt = wg.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            loss.backward()                          # frees the graph the logits still point to
            opt.step()
            return loss, logits

        fn = wg.compile(step) if compiled else step
        out = []
        for i in range(4):
            x = wg.randn(6, 4, generator=wg.Generator().manual_seed(i)).to(backend)
            loss, logits = fn(x, wg.tensor([0, 1, 2, 0, 1, 2]).to(backend))
            out.append([loss.item(), logits.argmax(1).tolist()])
        runs.append(out)
    _same(_flat(runs[1]), _flat(runs[0]), backend)
    assert fn.replays == 2 and "runs eagerly" not in fn.explain()
