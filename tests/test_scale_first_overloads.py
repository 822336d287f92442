"""PyTorch's deprecated overloads that put the scale first, as old scripts call them
(``p.data.add_(-lr, p.grad.data)``, ``exp_avg_sq.addcmul_(1 - beta2, grad, grad)``): the same values
and a UserWarning, as torch gives, on every backend; other extra positionals stay a TypeError."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg

CALLS = {
    "add": lambda m, x, y: m.add(x, 2, y), "add_method": lambda m, x, y: x.add(-0.5, y),
    "add_": lambda m, x, y: x.clone().add_(-0.5, y), "sub": lambda m, x, y: m.sub(x, 2, y),
    "sub_": lambda m, x, y: x.clone().sub_(3, y), "addcmul": lambda m, x, y: m.addcmul(x, 0.5, y, y),
    "addcmul_": lambda m, x, y: x.clone().addcmul_(0.5, y, x), "addcdiv": lambda m, x, y: m.addcdiv(x, 2, y, x),
    "addcdiv_": lambda m, x, y: x.clone().addcdiv_(-1, y, x),
}
X, Y = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, -1.5])


@pytest.mark.parametrize("name", list(CALLS))
def test_scale_first_overload_as_torch(name, backend):
    call = CALLS[name]
    with warnings.catch_warnings():   # torch warns once per process, from C++
        warnings.simplefilter("ignore", UserWarning)
        want = call(torch, torch.tensor(X, dtype=torch.float32), torch.tensor(Y, dtype=torch.float32))
    with pytest.warns(UserWarning, match=f"This overload of {name.split('_method')[0].rstrip('_')} is deprecated"):
        got = call(wg, wg.tensor(X, dtype=wg.float32, device=backend), wg.tensor(Y, dtype=wg.float32, device=backend))
    np.testing.assert_allclose(got.tolist(), want.tolist(), rtol=1e-6)


def test_scale_first_overload_records_the_gradient(backend):
    x = wg.tensor(X, dtype=wg.float32, requires_grad=True, device=backend)
    with pytest.warns(UserWarning):
        wg.add(wg.ones(2, 2, device=backend), 3.0, x).sum().backward()
    assert x.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("call", [lambda m, x: x.add(x, 2), lambda m, x: x.add(x, x), lambda m, x: m.sub(x, x, x),
                                  lambda m, x: m.addcmul(x, x, x, x)])
def test_other_extra_positionals_stay_type_errors(call, backend):
    with pytest.raises(TypeError):
        call(torch, torch.ones(2))
    with pytest.raises(TypeError, match="deprecated"):
        call(wg, wg.ones(2, device=backend))
