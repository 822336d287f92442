"""softmax, log_softmax and softmin without ``dim`` (old scripts' ``F.log_softmax(x)``,
``nn.Softmax()``): PyTorch's legacy choice (dim 0 for 0-, 1- and 3-d inputs, else 1) and its
deprecation warning, on every backend."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg

SHAPES = [(), (4,), (2, 3), (2, 3, 4), (2, 3, 2, 2)]
CALLS = {
    "softmax": lambda m, x: m.nn.functional.softmax(x), "log_softmax": lambda m, x: m.nn.functional.log_softmax(x),
    "softmin": lambda m, x: m.nn.functional.softmin(x), "Softmax": lambda m, x: m.nn.Softmax()(x),
    "LogSoftmax": lambda m, x: m.nn.LogSoftmax()(x), "Softmin": lambda m, x: m.nn.Softmin()(x),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(CALLS))
def test_implicit_dim_as_torch(name, shape, backend):
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = CALLS[name](torch, torch.tensor(x))
    op = {"Softmax": "softmax", "LogSoftmax": "log_softmax", "Softmin": "softmin"}.get(name, name)
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {op} has been deprecated"):
        got = CALLS[name](wg, wg.tensor(x, device=backend))
    np.testing.assert_allclose(np.asarray(got.tolist()), want.numpy(), rtol=1e-5, atol=1e-6)


def test_implicit_dim_gradient(backend):
    x = wg.tensor([[1.0, 2.0], [0.5, -1.0]], requires_grad=True, device=backend)
    with pytest.warns(UserWarning):
        (wg.nn.functional.log_softmax(x) * wg.tensor([[1.0, 0.0], [0.0, 1.0]], device=backend)).sum().backward()
    t = torch.tensor([[1.0, 2.0], [0.5, -1.0]], requires_grad=True)
    (torch.log_softmax(t, 1) * torch.tensor([[1.0, 0.0], [0.0, 1.0]])).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), t.grad.numpy(), rtol=1e-5)
