"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss (PyTorch 2.13) against torch: values and
gradients for plain, K-dimensional and probability targets; errors."""
import numpy as np
import pytest
import torch

import webgrad as wg
from nn_compare import load_torch_weights

rng = np.random.default_rng(0)


@pytest.mark.parametrize("kw", [{}, dict(reduction="sum", label_smoothing=0.1), dict(reduction="none"),
                                dict(ignore_index=1)])
def test_linear_cross_entropy_matches_torch(backend, kw):
    x, w, b = (rng.standard_normal(s).astype("float32") for s in ((5, 4), (3, 4), (3,)))
    target = np.array([0, 2, 1, 1, 0])
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    wx, ww, wb = (wg.tensor(a, requires_grad=True) for a in (x, w, b))
    t_loss = torch.nn.functional.linear_cross_entropy(tx, tw, torch.tensor(target), linear_bias=tb, **kw)
    w_loss = wg.nn.functional.linear_cross_entropy(wx, ww, wg.tensor(target), linear_bias=wb, **kw)
    np.testing.assert_allclose(np.asarray(w_loss.tolist()), t_loss.detach().numpy(), rtol=1e-5, atol=1e-6)
    t_loss.sum().backward(); w_loss.sum().backward()
    for a, t in ((wx, tx), (ww, tw), (wb, tb)):
        np.testing.assert_allclose(np.asarray(a.grad.tolist()), t.grad.numpy(), atol=1e-5)


def test_linear_cross_entropy_module_k_dims_and_probabilities(backend):
    torch.manual_seed(0)
    tm = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True)
    wm = wg.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True)
    assert repr(wm) == repr(tm)
    load_torch_weights(tm, wm)
    x, target = rng.standard_normal((5, 4)).astype("float32"), rng.integers(0, 3, (5, 2))
    np.testing.assert_allclose(wm(wg.tensor(x), wg.tensor(target)).item(),
                               tm(torch.tensor(x), torch.tensor(target)).item(), rtol=1e-5)
    probs = rng.dirichlet(np.ones(3), 5).astype("float32")
    w = rng.standard_normal((3, 4)).astype("float32")
    np.testing.assert_allclose(
        wg.nn.functional.linear_cross_entropy(wg.tensor(x), wg.tensor(w), wg.tensor(probs)).item(),
        torch.nn.functional.linear_cross_entropy(torch.tensor(x), torch.tensor(w), torch.tensor(probs)).item(),
        rtol=1e-5)
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        wg.nn.functional.linear_cross_entropy(wg.tensor(x), wg.tensor(w), wg.tensor(probs), ignore_index=0)
    with pytest.raises(RuntimeError, match="in_features"):
        wg.nn.functional.linear_cross_entropy(wg.tensor(x), wg.ones(3, 5), wg.tensor([0] * 5))
    with pytest.raises(NotImplementedError, match="options"):
        wg.nn.functional.linear_cross_entropy(wg.tensor(x), wg.tensor(w), wg.tensor([0] * 5), options=object())
    with pytest.raises(RuntimeError, match="label_smoothing"):
        wg.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=2.0)
