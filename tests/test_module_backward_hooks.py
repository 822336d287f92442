"""Module backward hooks against PyTorch's: register_full_backward_hook / _pre_hook see the same
grad_input and grad_output, and what they return replaces them, on every backend; the deprecated
register_backward_hook runs as the full hook (grad_input[0] is PyTorch's for a one-node layer)."""
import contextlib
import doctest
import importlib
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg

RNG = np.random.default_rng(0)
X, X2 = RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal((3, 2)).astype(np.float32)


def same_layer(lib, device, seed, make):
    """``make(lib.nn)`` with the initial weights torch's seeded ``make(torch.nn)`` gets."""
    torch.manual_seed(seed)
    ref = make(torch.nn)
    if lib is torch:
        return ref
    layer = make(wg.nn)
    layer.load_state_dict({k: wg.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    return layer.to(device)


def model(lib, device=None):
    return same_layer(lib, device, 0, lambda nn: nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2)))


def as_lists(grads):
    return [None if g is None else np.asarray(g.tolist()) for g in grads]


def run(lib, device, register, x_requires_grad=True):
    """Train-step gradients of the model with ``register(model, seen)`` hooks: (seen, x.grad, weight grads)."""
    m, seen = model(lib, device), []
    register(m, seen)
    kw = {"device": device} if device else {}
    x = lib.tensor(X, requires_grad=x_requires_grad, **kw)
    (m(x) ** 2).sum().backward()
    weights = [p.grad.tolist() for p in m.parameters()]
    return seen, (x.grad.tolist() if x_requires_grad else None), weights


CASES = {
    "full_hook_sees": lambda m, seen: m[2].register_full_backward_hook(
        lambda mod, gi, go: seen.append((as_lists(gi), as_lists(go)))),
    "full_hook_replaces": lambda m, seen: m[0].register_full_backward_hook(lambda mod, gi, go: None if gi[0] is None else (gi[0] * 3,)),
    "whole_model_hook": lambda m, seen: m.register_full_backward_hook(
        lambda mod, gi, go: seen.append((as_lists(gi), as_lists(go)))),
    "pre_hook_replaces": lambda m, seen: m[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,)),
    "pre_hook_sees": lambda m, seen: m[1].register_full_backward_pre_hook(lambda mod, go: seen.append(as_lists(go))),
}


def close(got, want):
    if isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(close(g, w) for g, w in zip(got, want))
    if want is None or got is None:
        return got is want
    return np.allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_backward_hooks_as_torch(case, x_requires_grad, backend):
    with warnings.catch_warnings(record=True) as torch_warned:
        warnings.simplefilter("always")
        want = run(torch, None, CASES[case], x_requires_grad)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        got = run(wg, backend, CASES[case], x_requires_grad)
    firing = [str(w.message) for w in warned if "Full backward hook is firing" in str(w.message)]
    assert bool(firing) == any("Full backward hook is firing" in str(w.message) for w in torch_warned)
    assert close(got, want)
    if case.endswith("sees"):
        assert len(want[0]) == 1


def test_hook_with_two_inputs_gives_zeros_for_the_one_without_grad(backend):
    seen = {}
    for lib, kw in ((torch, {}), (wg, {"device": backend})):
        m = same_layer(lib, backend, 1, lambda nn: nn.Bilinear(4, 2, 3))
        m.register_full_backward_hook(lambda mod, gi, go, lib=lib: seen.update({lib.__name__: as_lists(gi)}))
        m(lib.tensor(X, requires_grad=True, **kw), lib.tensor(X2, **kw)).sum().backward()
    assert close(seen["webgrad"], seen["torch"]) and not seen["webgrad"][1].any()


def test_removed_hooks_and_no_grad_forwards_do_not_run(backend):
    m, calls = wg.nn.Linear(2, 2).to(backend), []
    handle = m.register_full_backward_hook(lambda *a: calls.append(1))
    with wg.no_grad():
        m(wg.ones(1, 2, device=backend, requires_grad=True))
    handle.remove()
    m(wg.ones(1, 2, device=backend, requires_grad=True)).sum().backward()
    assert calls == []


def test_deprecated_backward_hook_runs_as_the_full_hook(backend):
    got, image = {}, RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    for lib, kw in ((torch, {}), (wg, {"device": backend})):
        conv = same_layer(lib, backend, 2, lambda nn: nn.Conv2d(2, 3, 3))
        with pytest.warns(FutureWarning) if lib is wg else contextlib.nullcontext():
            conv.register_backward_hook(lambda mod, gi, go, name=lib.__name__: got.update({name: (gi[0], go[0])}))
        x = lib.tensor(image, requires_grad=True, **kw)
        (conv(x) ** 2).sum().backward()
    for g, w in zip(got["webgrad"], got["torch"]):
        np.testing.assert_allclose(g.tolist(), w.tolist(), rtol=1e-5, atol=1e-6)


def test_docstrings():
    result = doctest.testmod(importlib.import_module("webgrad.nn.backward_hooks"))
    assert result.attempted > 0 and result.failed == 0
