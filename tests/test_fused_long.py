"""The fused row kernels (Softmax family, LayerNorm and their backward kernels) on the GPU backend past
their loop budget: rows longer than ``rows.ROW_STEPS * WG`` take their statistics from the multi-pass
reductions, LayerNorm's weight and bias gradients walk their rows in spans of dispatches (some
implementations stop a shader's loops after 65535 iterations, silently: Mesa's lavapipe). Small
budgets (monkeypatched) send ordinary shapes down those paths; one real row past the budget each
checks the real thing. Against cpu (float64 there), forward and gradients."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F

rng = np.random.default_rng(23)


def _both(fn, arrays, dy):
    """fn's output and its inputs' gradients on wgpu (float32) and on cpu (float64)."""
    out = {}
    for be, dtype in (("wgpu", np.float32), ("cpu", np.float64)):
        ts = [wg.tensor(a.astype(dtype), backend=be, requires_grad=True) for a in arrays]
        y = fn(*ts)
        y.backward(wg.tensor(dy.astype(dtype), backend=be))
        out[be] = [y.detach().numpy()] + [t.grad.numpy() for t in ts]
    return out["wgpu"], out["cpu"]


def _agree(fn, arrays, rtol=2e-4, atol=2e-5):
    y = fn(*[wg.tensor(a, backend="cpu") for a in arrays])
    got, want = _both(fn, arrays, rng.standard_normal(y.shape))
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")


@pytest.fixture
def counted(gpu, monkeypatch):
    """A row budget of 256 elements (rows.ROW_STEPS = 1), and counts of the long paths taken."""
    from webgrad.backends.gpu import activations, normalization, rows
    monkeypatch.setattr(rows, "ROW_STEPS", 1)
    calls = {}

    def count(module, name):
        real = getattr(module, name)

        def wrapper(*a, **k):
            calls[name] = calls.get(name, 0) + 1
            return real(*a, **k)
        monkeypatch.setattr(module, name, wrapper)
    for module, name in ((activations, "_long_rows"), (normalization, "_long_layer_norm"),
                         (normalization, "_long_layer_norm_grad"), (normalization, "spans")):
        count(module, name)
    return calls


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((3, 700, 2), 1), ((2, 300), -1), ((300, 3), 0)])
def test_softmax_rows_past_the_budget(counted, fn, shape, dim):
    _agree(lambda x: getattr(F, fn)(x, dim), [rng.standard_normal(shape) * 4])
    assert counted["_long_rows"] == 2          # the forward and its backward kernel


@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm_rows_past_the_budget(counted, affine):
    n = 300
    params = [rng.standard_normal(n) for p in ("weight", "bias") if affine in (p, "both")]

    def fn(x, *p):
        it = iter(p)
        w = next(it) if affine in ("weight", "both") else None
        b = next(it) if affine in ("bias", "both") else None
        return F.layer_norm(x, (n,), w, b)
    _agree(fn, [rng.standard_normal((4, n)) * 3 + 1, *params])
    assert counted["_long_layer_norm"] == 1 and counted["_long_layer_norm_grad"] == 1


def test_layer_norm_weight_gradient_over_many_rows(counted):
    """600 rows of 8: the weight and bias gradients sum 256 rows a dispatch, three dispatches."""
    _agree(lambda x, w, b: F.layer_norm(x, (8,), w, b), [rng.standard_normal((600, 8)), rng.standard_normal(8),
                                                         rng.standard_normal(8)])
    assert counted["spans"] == 1


def test_real_rows_past_the_budget(gpu):
    """A row of 2**20 + 3 elements (past 4096 steps of 256 threads) through softmax, log_softmax and
    layer_norm, forward and backward, against cpu."""
    from webgrad.backends.gpu import rows
    n = rows.ROW_STEPS * rows.WG + 3
    x = rng.standard_normal((1, n)) * 3
    _agree(lambda t: F.softmax(t, 1), [x], atol=1e-9)
    _agree(lambda t: F.log_softmax(t, 1), [x], rtol=1e-4, atol=1e-4)
    _agree(lambda t, w: F.layer_norm(t, (n,), w), [x, rng.standard_normal(n)], rtol=1e-3, atol=1e-4)
