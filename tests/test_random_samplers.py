"""torch.poisson, torch.binomial, torch._standard_gamma, torch._sample_dirichlet, Tensor.cauchy_ and
Tensor.log_normal_ on every backend: PyTorch's numbers after the same seed (its serial CPU samplers,
run on the host), their moments, the gamma's reparameterised gradient against
torch._standard_gamma_grad, PyTorch's errors, and the plain-Python host drawing what the numpy one does."""
import math

import numpy as np
import pytest
import torch

import webgrad as wg
from test_random_ops import assert_moments

DTYPES = ["float32", pytest.param("float64", marks=pytest.mark.float64)]
ALPHAS = [0.05, 0.3, 0.9, 1.0, 2.5, 7.0, 30.0, 0.0]
RATES = [0.0, 0.5, 3.0, 9.9, 10.0, 55.5, 1000.0]
COUNTS = [[0.0, 5.0, 10.0, 50.0, 100.0, 1000.0, 37.0]]
PROBS = [[0.1], [0.5], [0.9], [0.01], [0.33333], [0.0], [1.0]]


def seeded(fn, seed=3):
    torch.manual_seed(seed)
    wg.manual_seed(seed)
    return fn()


def same(got, want):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == want.tolist()


CALLS = {
    "_standard_gamma": (lambda lib, d: lib._standard_gamma(lib.tensor(ALPHAS * 3, dtype=d))),
    "poisson": (lambda lib, d: lib.poisson(lib.tensor(RATES * 3, dtype=d))),
    "binomial": (lambda lib, d: lib.binomial(lib.tensor(COUNTS, dtype=d).expand(7, 7).contiguous(),
                                             lib.tensor(PROBS, dtype=d).expand(7, 7).contiguous())),
    "_sample_dirichlet": (lambda lib, d: lib._sample_dirichlet(lib.tensor([[0.3, 0.9, 1.0], [2.5, 7.0, 30.0]],
                                                                          dtype=d))),
    "cauchy_": (lambda lib, d: lib.empty(40, dtype=d).cauchy_(1.0, 2.0)),
    "log_normal_": (lambda lib, d: lib.empty(41, dtype=d).log_normal_(0.5, 0.7)),
    "gamma_between_normals": (lambda lib, d: lib.cat([lib.randn(3, dtype=d),
                                                      lib._standard_gamma(lib.tensor(ALPHAS, dtype=d)),
                                                      lib.randn(3, dtype=d)])),
    "log_normal_between_normals": (lambda lib, d: lib.cat([lib.randn(1, dtype=d), lib.empty(5, dtype=d).log_normal_(),
                                                           lib.randn(1, dtype=d)])),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CALLS)
def test_draws_are_pytorchs_after_the_same_seed(backend, name, dtype):
    """Each sampler's draws, and the generator's kept normal around them, are PyTorch's."""
    fn = CALLS[name]
    want = seeded(lambda: fn(torch, getattr(torch, dtype)))
    got = seeded(lambda: fn(wg, getattr(wg, dtype)))
    same(got, want)


def test_generator_keyword_and_state(backend):
    g = wg.Generator().manual_seed(5)
    t = torch.Generator().manual_seed(5)
    same(wg.poisson(wg.tensor([4.0, 40.0]), generator=g), torch.poisson(torch.tensor([4.0, 40.0]), generator=t))
    same(wg.binomial(wg.tensor([9.0]), wg.tensor([0.4]), generator=g),
         torch.binomial(torch.tensor([9.0]), torch.tensor([0.4]), generator=t))
    same(wg.empty(3).cauchy_(generator=g), torch.empty(3).cauchy_(generator=t))
    same(wg.empty(3).log_normal_(generator=g), torch.empty(3).log_normal_(generator=t))


@pytest.mark.parametrize("name, draw, mean, var", [
    ("gamma 0.5", lambda n: wg._standard_gamma(wg.full((n,), 0.5)), 0.5, 0.5),
    ("gamma 4", lambda n: wg._standard_gamma(wg.full((n,), 4.0)), 4.0, 4.0),
    ("poisson 2", lambda n: wg.poisson(wg.full((n,), 2.0)), 2.0, 2.0),
    ("poisson 25", lambda n: wg.poisson(wg.full((n,), 25.0)), 25.0, 25.0),
    ("binomial 7, 0.2", lambda n: wg.binomial(wg.full((n,), 7.0), wg.full((n,), 0.2)), 1.4, 1.12),
    ("binomial 60, 0.6", lambda n: wg.binomial(wg.full((n,), 60.0), wg.full((n,), 0.6)), 36.0, 14.4),
    ("cauchy median", lambda n: (wg.empty(n).cauchy_(1.0, 2.0) < 1.0).to(wg.float32), 0.5, 0.25),
    ("log-normal", lambda n: wg.empty(n).log_normal_(0.0, 0.5).log(), 0.0, 0.25),
])
def test_moments(backend, name, draw, mean, var):
    wg.manual_seed(0)
    assert_moments(draw(20000).tolist(), mean, var, name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_gradient_is_pytorchs(backend, dtype):
    """The reparameterised gradient of _standard_gamma: PyTorch's _standard_gamma_grad in its three
    regions (small x, large alpha, the rational approximation)."""
    alphas = [0.3, 1.5, 4.0, 9.0, 30.0, 200.0]
    xs = [0.1, 0.7, 1.2, 9.5, 27.0, 150.0]
    want = torch._standard_gamma_grad(torch.tensor(alphas, dtype=getattr(torch, dtype)),
                                      torch.tensor(xs, dtype=getattr(torch, dtype)))
    got = wg.ops.random_samplers.standard_gamma_grad(wg.tensor(alphas, dtype=getattr(wg, dtype)),
                                                     wg.tensor(xs, dtype=getattr(wg, dtype)))
    np.testing.assert_allclose(got.tolist(), want.tolist(), rtol=2e-5 if dtype == "float32" else 1e-10)
    a = wg.tensor(alphas, dtype=getattr(wg, dtype), requires_grad=True)
    ta = torch.tensor(alphas, dtype=getattr(torch, dtype), requires_grad=True)
    seeded(lambda: wg._standard_gamma(a).sum().backward())
    seeded(lambda: torch._standard_gamma(ta).sum().backward())
    np.testing.assert_allclose(a.grad.tolist(), ta.grad.tolist(), rtol=2e-5 if dtype == "float32" else 1e-10)


def test_sample_dirichlet_is_differentiable_and_on_the_simplex(backend):
    c = wg.tensor([[0.5, 2.0, 3.0]], requires_grad=True)
    x = wg._sample_dirichlet(c)
    assert abs(x.sum().item() - 1.0) < 1e-6 and x.requires_grad
    (x * wg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert c.grad is not None and all(math.isfinite(v) for v in c.grad.tolist()[0])


def test_errors_match_torch(backend):
    cases = [
        (lambda lib: lib.poisson(lib.tensor([-1.0])), RuntimeError),
        (lambda lib: lib.poisson(lib.tensor([1])), NotImplementedError),
        (lambda lib: lib.binomial(lib.tensor([5]), lib.tensor([0.5])), ValueError),
        (lambda lib: lib.binomial(lib.tensor([5.0]), lib.tensor([1])), ValueError),
        (lambda lib: lib.empty(3).cauchy_(0.0, -1.0), RuntimeError),
        (lambda lib: lib.empty(3).log_normal_(0.0, -1.0), RuntimeError),
        (lambda lib: lib.empty(3, dtype=lib.long).cauchy_(), RuntimeError),
        (lambda lib: lib._standard_gamma(lib.tensor([1])), NotImplementedError),
    ]
    for call, error in cases:
        for lib in (torch, wg):
            with pytest.raises(error):
                call(lib)
    assert wg.binomial(wg.tensor([5.0]), wg.tensor([1.5])).tolist() == [5.0]      # not checked, as PyTorch
    assert wg._standard_gamma(wg.tensor([-1.0])).tolist() == torch._standard_gamma(torch.tensor([-1.0])).tolist()


def test_in_place_fills_keep_the_tensor(backend):
    t = wg.zeros(2, 3)
    assert t.cauchy_() is t and t.shape == (2, 3)
    v = t[0]
    v.log_normal_()
    assert (t[0] > 0).all().item() and t[1].tolist() != [0.0] * 3


@pytest.mark.parametrize("how, args", [
    ("standard_gamma", ([0.05, 0.5, 1.0, 3.0, 12.0, 40.0], "float32", None)),
    ("standard_gamma", ([0.05, 0.5, 1.0, 3.0, 12.0, 40.0], "float64", 0.25)),
    ("dirichlet", ([0.5, 2.0, 1.0, 4.0], 2, None)),
    ("poisson", ([0.5, 3.0, 12.0, 400.0],)),
    ("binomial", ([5.0, 30.0, 100.0, 7.0], [0.3, 0.6, 0.02, 0.999], "float32")),
    ("cauchy", (6, 1.0, 2.0)),
    ("log_normal", (7, 0.0, 1.0, None)),
])
def test_the_plain_python_host_draws_what_numpy_does(how, args):
    """Without numpy (the browser), torch_random_pure draws the same values from the same stream."""
    from webgrad.backends import torch_random as R
    from webgrad.backends import torch_random_pure as P
    a, b = getattr(R, how)(R.Stream(9), *args), getattr(P, how)(P.Stream(9), *args)
    if isinstance(a, tuple):
        assert a[1] == b[1]
        a, b = a[0], b[0]
    if how == "log_normal":
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-15)      # numpy's host fuses v * std + mean
    else:
        assert np.asarray(a).tolist() == list(b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dirichlet_gradient_is_pytorchs(backend, dtype):
    """_dirichlet_grad in its four regions (x near 0, x near 1, both concentrations large, the
    rational correction), and the gradient of _sample_dirichlet after the same seed."""
    x = [0.01, 0.3, 0.5, 0.7, 0.99, 0.45, 0.5, 0.2, 0.6, 0.3]
    alpha = [0.5, 2.0, 1.0, 3.0, 4.0, 8.0, 20.0, 1.5, 30.0, 7.0]
    total = [1.0, 5.0, 2.0, 4.0, 4.5, 15.0, 40.0, 9.0, 50.0, 20.0]
    want = torch._dirichlet_grad(*(torch.tensor(v, dtype=getattr(torch, dtype)) for v in (x, alpha, total)))
    got = wg.ops.random_samplers.dirichlet_grad(*(wg.tensor(v, dtype=getattr(wg, dtype)) for v in (x, alpha, total)))
    # float32 on a backend without float64 computes in float32 (PyTorch's CPU kernel in double)
    wide = wg.float64 in wg.registry.backend(backend).dtypes
    np.testing.assert_allclose(got.tolist(), want.tolist(), rtol=1e-6 if dtype == "float32" and wide else
                               1e-3 if dtype == "float32" else 1e-12)
    c = wg.tensor([[0.5, 2.0, 3.0], [4.0, 1.0, 9.0]], dtype=getattr(wg, dtype), requires_grad=True)
    tc = torch.tensor([[0.5, 2.0, 3.0], [4.0, 1.0, 9.0]], dtype=getattr(torch, dtype), requires_grad=True)
    weights = [1.0, 2.0, 3.0]
    seeded(lambda: (wg._sample_dirichlet(c) * wg.tensor(weights, dtype=getattr(wg, dtype))).sum().backward())
    sample = torch.distributions.dirichlet._Dirichlet.apply      # torch._sample_dirichlet itself has no derivative
    seeded(lambda: (sample(tc) * torch.tensor(weights, dtype=getattr(torch, dtype))).sum().backward())
    np.testing.assert_allclose(c.grad.tolist(), tc.grad.tolist(), rtol=1e-3 if dtype == "float32" else 1e-10,
                               atol=1e-6)
