"""The AdamStep kernel (one Adam/AdamW update of a parameter and its two moments per kernel call):
against PyTorch's optimizers, against the composed update it replaces, across backends, inside a
compiled step, and the kernel calls an optimizer step makes."""
import numpy as np
import pytest
import torch

import webgrad as wg
from webgrad import kernel_names as K

CONFIGS = [
    ("AdamW", {}),
    ("AdamW", {"weight_decay": 0.3, "betas": (0.6, 0.95)}),   # lerp from the far end (1 - beta1 < 0.5 fails)
    ("Adam", {}),
    ("Adam", {"weight_decay": 0.1}),                          # the L2 penalty added to the gradient
    ("AdamW", {"maximize": True, "eps": 1e-3}),
]


def _grads(shape, steps, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for _ in range(steps)]


def _run_webgrad(cls, kwargs, w0, grads, dtype, composed=False):
    w = wg.nn.Parameter(wg.tensor(w0, dtype=dtype))
    opt_cls = getattr(wg.optim, cls)
    if composed:   # a subclass with its own _update takes the composed path (ops, no AdamStep)
        base = opt_cls
        opt_cls = type("Composed", (base,), {"_update": lambda self, *args: base._update(self, *args)})
    opt = opt_cls([w], lr=0.01, **kwargs)
    with wg.profile() as prof:
        for g in grads:
            w.grad = wg.tensor(g, dtype=dtype)
            opt.step()
    assert (K.ADAM_STEP in prof.stats) is not composed
    s = opt.state[w]
    return [t.detach().numpy() for t in (w, s["exp_avg"], s["exp_avg_sq"])]


def _run_torch(cls, kwargs, w0, grads, dtype):
    w = torch.nn.Parameter(torch.tensor(w0, dtype=dtype))
    opt = getattr(torch.optim, cls)([w], lr=0.01, **kwargs)
    for g in grads:
        w.grad = torch.tensor(g, dtype=dtype)
        opt.step()
    s = opt.state[w]
    as_numpy = (lambda t: t.detach().float().numpy()) if dtype is torch.bfloat16 else (lambda t: t.detach().numpy())
    return [as_numpy(t) for t in (w, s["exp_avg"], s["exp_avg_sq"])]


TORCH_DTYPES = {wg.float32: (torch.float32, 2e-6), wg.float64: (torch.float64, 1e-13)}   # (dtype, rtol)


@pytest.mark.parametrize("dtype", [wg.float32, wg.float64])   # (float64: cpu only)
@pytest.mark.parametrize("cls,kwargs", CONFIGS)
def test_matches_torch(backend, cls, kwargs, dtype):
    torch_dtype, rtol = TORCH_DTYPES[dtype]
    w0, grads = np.linspace(-2, 2, 24).reshape(4, 6), _grads((4, 6), 6)
    got = _run_webgrad(cls, kwargs, w0, grads, dtype)
    want = _run_torch(cls, kwargs, w0, grads, torch_dtype)
    for g, t in zip(got, want):
        np.testing.assert_allclose(g, t, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("cls,kwargs", CONFIGS)
def test_kernel_agrees_with_the_composed_update(backend, cls, kwargs):
    w0, grads = np.linspace(-1, 3, 15).reshape(3, 5), _grads((3, 5), 4, seed=1)
    fused = _run_webgrad(cls, kwargs, w0, grads, wg.float32)
    composed = _run_webgrad(cls, kwargs, w0, grads, wg.float32, composed=True)
    for a, b in zip(fused, composed):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-9)


def test_gpu_agrees_with_cpu(gpu):
    w0, grads = np.linspace(-1, 1, 1000).reshape(10, 100), _grads((10, 100), 3, seed=2)
    out = {}
    for device in ("cpu", "wgpu"):
        w = wg.nn.Parameter(wg.tensor(w0, dtype=wg.float32, device=device))
        opt = wg.optim.AdamW([w], lr=0.05, weight_decay=0.2)
        for g in grads:
            w.grad = wg.tensor(g, dtype=wg.float32, device=device)
            opt.step()
        out[device] = [t.detach().numpy() for t in (w, opt.state[w]["exp_avg"], opt.state[w]["exp_avg_sq"])]
    for a, b in zip(out["cpu"], out["wgpu"]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


def test_one_kernel_per_parameter(backend):
    params = [wg.nn.Parameter(wg.ones(3, 4)), wg.nn.Parameter(wg.ones(4)), wg.nn.Parameter(wg.ones(2))]
    opt = wg.optim.AdamW(params, lr=0.1)
    for p in params[:2]:          # the third has no gradient: not updated, no state
        p.grad = wg.full(p.shape, 0.5)
    opt.step()                    # the first step makes the state (Fill)
    with wg.profile() as prof:
        opt.step()
    assert {k: s.calls for k, s in prof.stats.items()} == {K.ADAM_STEP: 2}
    assert params[2].tolist() == [1.0, 1.0] and not opt.state[params[2]]
    assert opt.state[params[0]]["step"] == 2.0


def test_parameter_keeps_its_identity_views_and_version(backend):
    w = wg.nn.Parameter(wg.zeros(2, 3))
    row = w.detach()[0]           # a view of the parameter's storage
    same, version = w, w._version
    opt = wg.optim.Adam([w], lr=0.5)
    w.grad = wg.ones(2, 3)
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), -0.5, rtol=1e-6)
    np.testing.assert_allclose(row.numpy(), -0.5, rtol=1e-6)
    assert opt.param_groups[0]["params"][0] is same and w._version > version


def test_scalar_and_empty_parameters(backend):
    s, e = wg.nn.Parameter(wg.tensor(2.0)), wg.nn.Parameter(wg.zeros(0, 3))
    ts = torch.nn.Parameter(torch.tensor(2.0))
    opt, topt = wg.optim.AdamW([s, e], lr=0.1), torch.optim.AdamW([ts], lr=0.1)
    for g in (1.0, -3.0):
        s.grad, e.grad, ts.grad = wg.tensor(g), wg.zeros(0, 3), torch.tensor(g)
        opt.step()
        topt.step()
    assert s.shape == () and e.shape == (0, 3)
    assert s.item() == pytest.approx(ts.item(), rel=1e-6)


def test_compiled_step_replays_the_kernel(backend):
    """The per-step numbers (bias corrections) change every step: a compiled step must not freeze them."""
    w0, x0 = np.linspace(-1, 1, 12).reshape(3, 4), np.linspace(0, 1, 8).reshape(2, 4)
    w, tw = wg.nn.Parameter(wg.tensor(w0, dtype=wg.float32)), torch.nn.Parameter(torch.tensor(w0, dtype=torch.float32))
    x, tx = wg.tensor(x0, dtype=wg.float32), torch.tensor(x0, dtype=torch.float32)
    opt, topt = wg.optim.AdamW([w], lr=0.1), torch.optim.AdamW([tw], lr=0.1)

    @wg.compile
    def step():
        opt.zero_grad()
        (x @ w.T).square().sum().backward()
        opt.step()

    for _ in range(5):
        step()
        topt.zero_grad()
        (tx @ tw.T).square().sum().backward()
        topt.step()
    assert step.replays >= 2
    assert any(s.name == K.ADAM_STEP for s in step.last.plan.steps)
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-7)


def test_not_differentiable():
    assert wg.get_gradient(K.ADAM_STEP) is None


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("cls,kwargs", CONFIGS)
def test_half_precision_on_cpu_matches_torch(cls, kwargs, dtype):
    """Half precision is computed in float32 and rounded where PyTorch stores an intermediate: the
    parameters come out as PyTorch's, to the last bit in most elements and within one unit in all."""
    w0, grads = np.linspace(-2, 2, 24).reshape(4, 6), _grads((4, 6), 6)
    got = _run_webgrad(cls, kwargs, w0, grads, getattr(wg, dtype))
    want = _run_torch(cls, kwargs, w0, grads, getattr(torch, dtype))
    ulp = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}[dtype]
    np.testing.assert_allclose(got[0].astype(np.float32), want[0].astype(np.float32), rtol=ulp, atol=1e-6)
    assert np.mean(got[0].astype(np.float32) == want[0].astype(np.float32)) >= 0.9
