"""The rest of webgrad.distributions against torch.distributions, on every backend: each
distribution's moments, log_prob, cdf, icdf and entropy for the same parameters; its shapes; its
seeded samples (PyTorch's numbers: the same seed gives the same draws); gradients of log_prob,
entropy and rsample in the parameters; expand; validation errors; every KL pair PyTorch registers;
the transforms, biject_to/transform_to and the new constraints."""
import math

import numpy as np
import pytest
import torch
import torch.distributions as td
from torch.distributions.kl import _KL_REGISTRY

import webgrad as wg
import webgrad.distributions as wd
from test_random_ops import assert_moments

TOL = {"float32": (2e-5, 2e-6), "float64": (1e-9, 1e-11)}
DTYPES = ["float32", pytest.param("float64", marks=pytest.mark.float64)]
P3 = [0.2, 0.5, 0.9]
ROWS = [[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]]
LS = {"loc": [0.0, 1.0, -1.0], "scale": [1.0, 0.5, 2.0]}

# case -> (class, parameters, a value to score); numbers stay numbers
CASES = {
    "Exponential": ("Exponential", {"rate": [0.5, 1.0, 3.0]}, [0.1, 1.0, 2.5]),
    "Laplace": ("Laplace", LS, [0.3, 1.5, -4.0]),
    "Laplace_scalars": ("Laplace", {"loc": 0.5, "scale": 2.0}, [0.3, 1.5, -4.0]),
    "Cauchy": ("Cauchy", LS, [0.3, 1.5, -4.0]),
    "Gumbel": ("Gumbel", LS, [0.3, 1.5, -4.0]),
    "LogNormal": ("LogNormal", LS, [0.3, 1.5, 4.0]),
    "HalfNormal": ("HalfNormal", {"scale": [1.0, 0.5, 2.0]}, [0.3, 1.5, 4.0]),
    "HalfCauchy": ("HalfCauchy", {"scale": [1.0, 0.5, 2.0]}, [0.3, 1.5, 4.0]),
    "Geometric": ("Geometric", {"probs": P3}, [0.0, 3.0, 1.0]),
    "Geometric_logits": ("Geometric", {"logits": [-1.0, 0.0, 2.0]}, [0.0, 3.0, 1.0]),
    "Gamma": ("Gamma", {"concentration": [0.5, 2.0, 9.0], "rate": [1.0, 0.5, 3.0]}, [0.3, 1.5, 4.0]),
    "Chi2": ("Chi2", {"df": [1.0, 3.0, 10.0]}, [0.3, 1.5, 4.0]),
    "Beta": ("Beta", {"concentration1": [0.5, 2.0, 9.0], "concentration0": [1.0, 0.5, 3.0]}, [0.3, 0.5, 0.9]),
    "Dirichlet": ("Dirichlet", {"concentration": [[0.5, 2.0, 9.0], [1.0, 1.0, 1.0]]},
                  [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "StudentT": ("StudentT", {"df": [1.0, 3.0, 10.0], **LS}, [0.3, 1.5, -4.0]),
    "FisherSnedecor": ("FisherSnedecor", {"df1": [1.0, 3.0, 10.0], "df2": [2.0, 5.0, 12.0]}, [0.3, 1.5, 4.0]),
    "InverseGamma": ("InverseGamma", {"concentration": [0.5, 2.5, 9.0], "rate": [1.0, 0.5, 3.0]}, [0.3, 1.5, 4.0]),
    "Poisson": ("Poisson", {"rate": [0.5, 4.0, 30.0]}, [0.0, 3.0, 28.0]),
    "Binomial": ("Binomial", {"total_count": [5.0, 10.0, 20.0], "probs": P3}, [1.0, 5.0, 18.0]),
    "Binomial_logits": ("Binomial", {"total_count": 10, "logits": [-1.0, 0.0, 2.0]}, [1.0, 5.0, 9.0]),
    "NegativeBinomial": ("NegativeBinomial", {"total_count": [5.0, 10.0, 20.0], "probs": P3}, [1.0, 5.0, 18.0]),
    "Multinomial": ("Multinomial", {"total_count": 6, "probs": ROWS}, [[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]]),
    "Pareto": ("Pareto", {"scale": [1.0, 0.5, 2.0], "alpha": [0.5, 2.5, 3.0]}, [1.3, 1.5, 4.0]),
    "Weibull": ("Weibull", {"scale": [1.0, 0.5, 2.0], "concentration": [0.5, 2.5, 3.0]}, [0.3, 1.5, 4.0]),
    "Kumaraswamy": ("Kumaraswamy", {"concentration1": [0.5, 2.0, 3.0], "concentration0": [1.5, 0.5, 3.0]},
                    [0.3, 0.5, 0.9]),
    "LogisticNormal": ("LogisticNormal", {"loc": [[0.0, 1.0], [-1.0, 0.5]], "scale": [[1.0, 0.5], [2.0, 1.0]]},
                       [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "ContinuousBernoulli": ("ContinuousBernoulli", {"probs": [0.2, 0.5, 0.9]}, [0.3, 0.5, 0.9]),
    "RelaxedBernoulli": ("RelaxedBernoulli", {"temperature": [0.5], "probs": P3}, [0.3, 0.5, 0.9]),
    "RelaxedOneHotCategorical": ("RelaxedOneHotCategorical", {"temperature": [0.5], "probs": ROWS},
                                 [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "VonMises": ("VonMises", {"loc": [0.0, 1.0, -1.0], "concentration": [0.5, 2.0, 9.0]}, [0.3, 1.5, -3.0]),
    "GeneralizedPareto": ("GeneralizedPareto", {**LS, "concentration": [0.0, 0.3, -0.2]}, [0.3, 1.5, 1.0]),
    "MultivariateNormal": ("MultivariateNormal", {"loc": [[0.0, 1.0], [-1.0, 0.5]],
                                                  "covariance_matrix": [[2.0, 0.5], [0.5, 1.0]]},
                           [[0.2, 0.3], [0.1, -0.8]]),
    "MultivariateNormal_tril": ("MultivariateNormal", {"loc": [0.0, 1.0], "scale_tril": [[[2.0, 0.0], [0.5, 1.0]],
                                                                                         [[1.0, 0.0], [-0.3, 0.7]]]},
                                [[0.2, 0.3], [0.1, -0.8]]),
    "MultivariateNormal_precision": ("MultivariateNormal", {"loc": [0.0, 1.0],
                                                            "precision_matrix": [[2.0, 0.5], [0.5, 1.0]]},
                                     [[0.2, 0.3], [0.1, -0.8]]),
    "LowRankMultivariateNormal": ("LowRankMultivariateNormal", {"loc": [[0.0, 1.0, 2.0], [-1.0, 0.5, 0.0]],
                                                                "cov_factor": [[1.0], [0.5], [-0.3]],
                                                                "cov_diag": [1.0, 0.5, 2.0]},
                                  [[0.2, 0.3, 1.0], [0.1, -0.8, 0.0]]),
    "Wishart": ("Wishart", {"df": [4.0, 5.0], "covariance_matrix": [[2.0, 0.5], [0.5, 1.0]]},
                [[[1.0, 0.2], [0.2, 2.0]], [[3.0, -0.5], [-0.5, 1.0]]]),
    "Wishart_tril": ("Wishart", {"df": 3.0, "scale_tril": [[1.0, 0.0], [0.5, 2.0]]}, [[1.0, 0.2], [0.2, 2.0]]),
    "LKJCholesky": ("LKJCholesky", {"dim": 3, "concentration": [0.5, 2.0]},
                    [[[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]] * 2),
}
MOMENTS = ("mean", "mode", "variance", "stddev")
NEEDS_FLOAT64 = {"VonMises"}            # draws in float64 where the backend holds it (PyTorch's)


def make(lib, v, dtype):
    if not isinstance(v, list):
        return v
    return torch.tensor(v, dtype=getattr(torch, dtype)) if lib is torch else wg.tensor(v, dtype=getattr(wg, dtype))


def build(lib, case, dtype, requires_grad=False):
    cls, kwargs, _ = CASES[case]
    module = td if lib is torch else wd
    params = {k: make(lib, v, dtype) for k, v in kwargs.items()}
    if requires_grad:
        params = {k: v.requires_grad_() if k not in ("total_count", "temperature") and not isinstance(v, (int, float))
                  else v for k, v in params.items()}
    return getattr(module, cls)(**params), params


def close(got, want, dtype, what):
    assert tuple(got.shape) == tuple(want.shape), (what, tuple(got.shape), tuple(want.shape))
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(np.array(got.detach().tolist(), dtype=float), want.detach().numpy().astype(float),
                               rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def answers(d, name, *args):
    """d.name(*args) (or the property), or the error type when it raises."""
    try:
        attr = getattr(d, name)
        return attr(*args) if args or callable(attr) else attr
    except (NotImplementedError, ValueError, RuntimeError) as e:
        return type(e)


# PyTorch's own dtype slip: GeneralizedPareto compares a float64 concentration with a float32 zero
TORCH_FAILS = {("GeneralizedPareto", "float64", "log_prob"), ("GeneralizedPareto", "float64", "cdf")}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES)
def test_numbers_match_torch(backend, case, dtype):
    ours, _ = build(wg, case, dtype)
    theirs, _ = build(torch, case, dtype)
    assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
    value = CASES[case][2]
    checks = [(m, ()) for m in MOMENTS] + [("log_prob", (value,)), ("cdf", (value,)), ("entropy", ())]
    if not theirs.event_shape and len(theirs.batch_shape) == 1:
        checks.append(("icdf", ([0.1, 0.5, 0.8],)))
    for name, args in checks:
        want = answers(theirs, name, *(make(torch, a, dtype) for a in args))
        if (CASES[case][0], dtype, name) in TORCH_FAILS:
            assert want is RuntimeError
            ours_f32, _ = build(wg, case, "float32")
            close(answers(ours, name, *(make(wg, a, dtype) for a in args)).to(wg.float32),
                  answers(theirs.__class__(**build(torch, case, "float32")[1]), name, *(make(torch, a, "float32")
                                                                                       for a in args)),
                  "float32", f"{case}.{name} (float32's numbers)")
            continue
        if isinstance(want, type):
            with pytest.raises(want):
                got = answers(ours, name, *(make(wg, a, dtype) for a in args))
                if isinstance(got, type):
                    raise got(name)
            continue
        close(answers(ours, name, *(make(wg, a, dtype) for a in args)), want, dtype, f"{case}.{name}")


@pytest.mark.parametrize("case", CASES)
def test_seeded_samples_are_pytorchs(backend, case):
    """The same seed gives the same draws as torch.distributions (sample and rsample)."""
    ours, _ = build(wg, case, "float32")
    if CASES[case][0] in NEEDS_FLOAT64 and wg.float64 not in wg.registry.backend(backend).dtypes:
        wg.manual_seed(11)                   # draws in float32 here: not PyTorch's, but seeded and on the circle
        x = ours.sample((5,))
        wg.manual_seed(11)
        assert x.tolist() == ours.sample((5,)).tolist() and bool((x.abs() <= math.pi).all().item())
        return
    theirs, _ = build(torch, case, "float32")
    for method in ("sample", "rsample") if theirs.has_rsample else ("sample",):
        torch.manual_seed(11)
        wg.manual_seed(11)
        want = getattr(theirs, method)((5,))
        got = getattr(ours, method)((5,))
        assert got.dtype.name == str(want.dtype).split(".")[-1]
        close(got, want, "float32", f"{case}.{method}")
        assert ours.support.check(got).all().item()
    assert ours.has_rsample == theirs.has_rsample


GRAD_CASES = [c for c in CASES if not any(isinstance(v, (int, float)) for v in CASES[c][1].values())
              or c.startswith("Binomial") or c in ("Multinomial", "LKJCholesky")]


@pytest.mark.parametrize("case", GRAD_CASES)
def test_log_prob_and_entropy_gradients_match_torch(backend, case):
    ours, ours_p = build(wg, case, "float32", requires_grad=True)
    theirs, theirs_p = build(torch, case, "float32", requires_grad=True)
    value = CASES[case][2]
    total = {}
    for lib, d in ((wg, ours), (torch, theirs)):
        loss = d.log_prob(make(lib, value, "float32")).sum()
        if not isinstance(answers(theirs, "entropy"), type):
            loss = loss + d.entropy().sum() * 0.5
        loss.backward()
        total[lib] = loss
    close(total[wg], total[torch], "float32", "loss")
    for name, p in theirs_p.items():
        if isinstance(p, torch.Tensor) and p.requires_grad:
            close(ours_p[name].grad, p.grad, "float32", f"{case}: d/d{name}")


RSAMPLE_GRADS = [c for c in GRAD_CASES if getattr(td, CASES[c][0]).has_rsample
                 and CASES[c][0] != "Wishart"]                 # Wishart: PyTorch's own backward fails


@pytest.mark.parametrize("case", RSAMPLE_GRADS)
def test_rsample_gradients_match_torch(backend, case):
    """Same seed, same draws: d(sum of draws)/d(parameters) is PyTorch's (Gamma's through PyTorch's
    reparameterised gradient)."""
    ours, ours_p = build(wg, case, "float32", requires_grad=True)
    theirs, theirs_p = build(torch, case, "float32", requires_grad=True)
    torch.manual_seed(3)
    wg.manual_seed(3)
    (theirs.rsample((4,)) ** 2).sum().backward()
    (ours.rsample((4,)) ** 2).sum().backward()
    for name, p in theirs_p.items():
        if isinstance(p, torch.Tensor) and p.requires_grad and p.grad is not None:
            gammas = ("Gamma", "Chi2", "StudentT", "FisherSnedecor", "InverseGamma", "Beta", "Dirichlet", "LKJCholesky")
            rtol = 2e-4 if CASES[case][0] in gammas else 2e-5
            np.testing.assert_allclose(ours_p[name].grad.tolist(), p.grad.numpy(), rtol=rtol, atol=1e-5,
                                       err_msg=f"{case}: d rsample / d{name}")


@pytest.mark.parametrize("cls, params, mean", [
    ("Beta", {"concentration1": [2.0], "concentration0": [3.0]}, lambda a, b: a / (a + b)),
    ("Dirichlet", {"concentration": [[2.0, 3.0]]}, lambda c: c[..., 0] / c.sum(-1)),
])
def test_beta_and_dirichlet_rsample_gradients_are_unbiased(backend, cls, params, mean):
    """The average of the reparameterised gradient over many draws is the gradient of the mean."""
    wg.manual_seed(0)
    ours = {k: wg.tensor(v, requires_grad=True) for k, v in params.items()}
    x = getattr(wd, cls)(**ours).rsample((20000,))
    first = x[..., 0] if cls == "Dirichlet" else x
    first.mean().backward()
    exact = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    mean(*exact.values()).sum().backward()
    for k in params:
        np.testing.assert_allclose(ours[k].grad.tolist(), exact[k].grad.numpy(), rtol=0.08, atol=2e-3)


FD_CASES = {**{c: CASES[c] for c in ("Gamma", "Beta", "StudentT", "MultivariateNormal_tril",
                                     "LowRankMultivariateNormal", "Laplace", "Weibull", "Dirichlet",
                                     "ContinuousBernoulli", "Kumaraswamy", "NegativeBinomial", "VonMises")},
            "GeneralizedPareto": ("GeneralizedPareto", {**LS, "concentration": [0.1, 0.3, -0.2]}, [0.3, 1.5, 1.0])}


@pytest.mark.float64
def test_wishart_rsample_is_differentiable_in_its_scale(backend):
    """PyTorch's own backward through Wishart.rsample fails (its correction loop writes in place into
    a tensor autograd saved); webgrad's runs: checked by central differences with a fixed seed."""
    tril = [[1.0, 0.0], [0.5, 2.0]]

    def draw(t):
        wg.manual_seed(0)
        return wd.Wishart(4.0, scale_tril=t).rsample((3,))
    t = wg.tensor(tril, dtype=wg.float64, requires_grad=True)
    draw(t).sum().backward()
    for i, j in ((0, 0), (1, 0), (1, 1)):
        step = np.zeros((2, 2))
        step[i, j] = 1e-6
        up = draw(wg.tensor((np.array(tril) + step).tolist(), dtype=wg.float64)).sum().item()
        down = draw(wg.tensor((np.array(tril) - step).tolist(), dtype=wg.float64)).sum().item()
        assert abs(t.grad.tolist()[i][j] - (up - down) / 2e-6) < 1e-5 * max(1.0, abs(t.grad.tolist()[i][j]))
    with pytest.raises(RuntimeError):
        torch.manual_seed(0)
        torch_tril = torch.tensor(tril, requires_grad=True)
        td.Wishart(4.0, scale_tril=torch_tril).rsample((3,)).sum().backward()


@pytest.mark.float64
@pytest.mark.parametrize("case", FD_CASES)
def test_log_prob_gradients_by_finite_differences(backend, case):
    """float64 central differences, one parameter entry at a time (a covariance matrix's off-diagonal
    entries are a pair: PyTorch's gradient, checked against torch above, splits between them)."""
    cls, kwargs, value = FD_CASES[case]
    base = {k: np.array(v, dtype=float) for k, v in kwargs.items()}
    x = wg.tensor(value, dtype=wg.float64)

    def f(**arrays):
        return getattr(wd, cls)(**{k: wg.tensor(a.tolist(), dtype=wg.float64, requires_grad=True)
                                   for k, a in arrays.items()}, validate_args=False).log_prob(x).sum()
    params = {k: wg.tensor(a.tolist(), dtype=wg.float64, requires_grad=True) for k, a in base.items()}
    getattr(wd, cls)(**params).log_prob(x).sum().backward()
    for k, a in base.items():
        flat = a.reshape(-1)
        for i in range(flat.size):
            step = np.zeros_like(flat)
            step[i] = 1e-6
            up = f(**{**base, k: (flat + step).reshape(a.shape)}).item()
            down = f(**{**base, k: (flat - step).reshape(a.shape)}).item()
            got = np.array(params[k].grad.tolist()).reshape(-1)[i]
            assert abs(got - (up - down) / 2e-6) < 1e-5 * max(1, abs(got)), (case, k, i)


@pytest.mark.parametrize("case", ["Laplace_scalars", "Gamma", "Binomial", "Dirichlet", "MultivariateNormal_tril",
                                  "LowRankMultivariateNormal", "LogNormal", "Gumbel", "Weibull", "StudentT",
                                  "RelaxedOneHotCategorical", "Multinomial", "VonMises", "ContinuousBernoulli"])
def test_expand_matches_torch(backend, case):
    ours, _ = build(wg, case, "float32")
    theirs, _ = build(torch, case, "float32")
    batch = (4,) + tuple(theirs.batch_shape)
    e_ours, e_theirs = ours.expand(batch), theirs.expand(batch)
    assert type(e_ours) is type(ours)
    assert e_ours.batch_shape == e_theirs.batch_shape and e_ours.event_shape == e_theirs.event_shape
    value = e_theirs.sample()
    close(e_ours.log_prob(wg.tensor(value.tolist())), e_theirs.log_prob(value), "float32", "expanded log_prob")
    assert tuple(e_ours.sample((2,)).shape) == tuple(e_theirs.sample((2,)).shape)


# ---------------------------------------------------------------- validation

BAD = [
    ("Exponential", {"rate": [-1.0]}, "rate"),
    ("Gamma", {"concentration": [0.0], "rate": [1.0]}, "concentration"),
    ("Beta", {"concentration1": [1.0], "concentration0": [-2.0]}, "concentration"),    # its Dirichlet's, as PyTorch
    ("Dirichlet", {"concentration": [[1.0, -1.0]]}, "concentration"),
    ("Poisson", {"rate": [-0.5]}, "rate"),
    ("Binomial", {"total_count": [2.5], "probs": [0.5]}, "total_count"),
    ("Laplace", {"loc": [0.0], "scale": [0.0]}, "scale"),
    ("StudentT", {"df": [-1.0]}, "df"),
    ("MultivariateNormal", {"loc": [0.0, 0.0], "covariance_matrix": [[1.0, 2.0], [2.0, 1.0]]}, "covariance_matrix"),
    ("MultivariateNormal", {"loc": [0.0, 0.0], "scale_tril": [[1.0, 0.0], [0.5, -1.0]]}, "scale_tril"),
    ("LowRankMultivariateNormal", {"loc": [0.0], "cov_factor": [[1.0]], "cov_diag": [-4.0]}, "cov_diag"),
    ("Pareto", {"scale": [1.0], "alpha": [0.0]}, "rate"),                              # its Exponential's
]


@pytest.mark.parametrize("cls, kwargs, param", BAD)
def test_invalid_parameters_raise_value_error_naming_them(backend, cls, kwargs, param):
    for lib, module in ((torch, td), (wg, wd)):
        with pytest.raises(ValueError, match=f"parameter {param}"):
            getattr(module, cls)(**{k: make(lib, v, "float32") for k, v in kwargs.items()})


@pytest.mark.parametrize("cls, kwargs, bad", [
    ("Exponential", {"rate": [1.0]}, [-1.0]),
    ("Poisson", {"rate": [1.0]}, [1.5]),
    ("Beta", {"concentration1": [1.0], "concentration0": [1.0]}, [1.5]),
    ("Dirichlet", {"concentration": [1.0, 1.0]}, [0.3, 0.3]),
    ("Binomial", {"total_count": [3.0], "probs": [0.5]}, [4.0]),
    ("Pareto", {"scale": [1.0], "alpha": [1.0]}, [0.5]),
])
def test_values_outside_the_support_raise_value_error(backend, cls, kwargs, bad):
    for lib, module in ((torch, td), (wg, wd)):
        d = getattr(module, cls)(**{k: make(lib, v, "float32") for k, v in kwargs.items()})
        with pytest.raises(ValueError, match="support"):
            d.log_prob(make(lib, bad, "float32"))


def test_constructor_errors_match_torch():
    cases = [
        (lambda m, t: m.MultivariateNormal(t([0.0, 0.0])), ValueError),
        (lambda m, t: m.MultivariateNormal(t(0.0), t([[1.0]])), ValueError),
        (lambda m, t: m.Dirichlet(t(1.0)), ValueError),
        (lambda m, t: m.Multinomial(t([2.0]), t([0.5, 0.5])), NotImplementedError),
        (lambda m, t: m.Geometric(), ValueError),
        (lambda m, t: m.Independent(m.Normal(t([0.0]), t([1.0])), 2), ValueError),
        (lambda m, t: m.MixtureSameFamily(m.Normal(t(0.0), t(1.0)), m.Normal(t([0.0]), t([1.0]))), ValueError),
        (lambda m, t: m.MixtureSameFamily(m.Categorical(t([0.5, 0.5])), m.Normal(t([0.0] * 3), t([1.0] * 3))),
         ValueError),
        (lambda m, t: m.TransformedDistribution(m.Normal(t(0.0), t(1.0)), "exp"), ValueError),
        (lambda m, t: m.LowRankMultivariateNormal(t([0.0, 0.0]), t([[1.0]]), t([1.0, 1.0])), ValueError),
    ]
    for make_it, error in cases:
        for lib, module in ((torch, td), (wg, wd)):
            with pytest.raises(error):
                make_it(module, lib.tensor)


# ---------------------------------------------------------------- KL divergences

KL_PARAMS = {name: kwargs for name, (_, kwargs, _) in CASES.items() if "_" not in name}
KL_PARAMS.update({
    "Normal": LS, "Uniform": {"low": [0.1, 0.2, 0.3], "high": [0.5, 0.9, 0.95]}, "Bernoulli": {"probs": P3},
    "Categorical": {"probs": [[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]]},
    "OneHotCategorical": {"probs": [[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]]},
    "Pareto": {"scale": [1.0, 0.5, 2.0], "alpha": [2.5, 3.5, 3.0]},
    "LowRankMultivariateNormal": {"loc": [[0.0, 1.0], [-1.0, 0.5]], "cov_factor": [[1.0], [0.5]],
                                  "cov_diag": [1.0, 0.5]},
    "Independent": None, "TransformedDistribution": None, "ExponentialFamily": None,
})
KL_CASES = [(p.__name__, q.__name__) for p, q in _KL_REGISTRY
            if KL_PARAMS.get(p.__name__) and KL_PARAMS.get(q.__name__)]


def _kl_operands(lib, p, q, grad=False):
    module = td if lib is torch else wd
    made = []

    def one(name):
        params = {k: make(lib, v, "float32") for k, v in KL_PARAMS[name].items()}
        if grad:
            params = {k: v.requires_grad_() if isinstance(v, (torch.Tensor, wg.Tensor)) else v
                      for k, v in params.items()}
            made.extend(v for v in params.values() if isinstance(v, (torch.Tensor, wg.Tensor)))
        return getattr(module, name)(**params)
    return one(p), one(q), made


@pytest.mark.parametrize("p, q", KL_CASES)
def test_every_kl_pair_pytorch_registers_matches(backend, p, q):
    tp, tq, theirs = _kl_operands(torch, p, q, grad=True)
    op, oq, ours = _kl_operands(wg, p, q, grad=True)
    want, got = td.kl_divergence(tp, tq), wd.kl_divergence(op, oq)
    close(got, want, "float32", f"KL({p} || {q})")
    if torch.isfinite(want).all() and want.requires_grad:
        want.sum().backward()
        got.sum().backward()
        for a, b in zip(ours, theirs):
            if b.grad is not None:
                np.testing.assert_allclose(a.grad.tolist(), b.grad.numpy(), rtol=1e-4, atol=1e-5,
                                           err_msg=f"d KL({p} || {q})")


def test_kl_of_independent_and_transformed_and_exponential_families(backend):
    pairs = [
        (lambda m, t: (m.Independent(m.Normal(t([[0.0, 1.0]]), t([[1.0, 2.0]])), 1),
                       m.Independent(m.Normal(t([[0.5, 0.0]]), t([[2.0, 1.0]])), 1))),
        (lambda m, t: (m.LogNormal(t([0.0, 1.0]), t([1.0, 2.0])), m.LogNormal(t([0.5, 0.0]), t([2.0, 1.0])))),
        (lambda m, t: (m.MultivariateNormal(t([0.0, 1.0]), t([[2.0, 0.5], [0.5, 1.0]])),
                       m.LowRankMultivariateNormal(t([0.5, 0.0]), t([[1.0], [0.5]]), t([1.0, 0.5])))),
        (lambda m, t: (m.LowRankMultivariateNormal(t([0.5, 0.0]), t([[1.0], [0.5]]), t([1.0, 0.5])),
                       m.MultivariateNormal(t([0.0, 1.0]), t([[2.0, 0.5], [0.5, 1.0]])))),
    ]
    for pair in pairs:
        close(wd.kl_divergence(*pair(wd, wg.tensor)), td.kl_divergence(*pair(td, torch.tensor)), "float32", "kl")
    # the Bregman form for a family without a closed form, checked against Normal's
    p, q = wd.Normal(wg.tensor([0.0, 1.0]), wg.tensor([1.0, 2.0])), wd.Normal(wg.tensor([0.5, 0.0]),
                                                                             wg.tensor([2.0, 1.0]))
    bregman = wd.kl_pairs._kl_expfamily_expfamily(p, q)
    np.testing.assert_allclose(bregman.tolist(), wd.kl_divergence(p, q).tolist(), rtol=1e-5)
    with pytest.raises(NotImplementedError):
        wd.kl_divergence(wd.Independent(wd.Normal(wg.zeros(1, 2), 1.0), 1), wd.Independent(wd.Normal(wg.zeros(1, 2),
                                                                                                       1.0), 2))


# ---------------------------------------------------------------- mixtures, independent, straight-through

def test_mixture_same_family_matches_torch(backend):
    def gmm(m, t):
        return m.MixtureSameFamily(m.Categorical(t([[0.3, 0.7], [0.5, 0.5]])),
                                   m.Independent(m.Normal(t([[[0.0, 1.0], [2.0, -1.0]], [[1.0, 1.0], [0.0, 0.0]]]),
                                                          t([[[1.0, 0.5], [2.0, 1.0]], [[1.0, 1.0], [0.5, 0.5]]])), 1))
    ours, theirs = gmm(wd, wg.tensor), gmm(td, torch.tensor)
    assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
    x = [[[0.1, 0.2], [1.0, -1.0]]]
    close(ours.log_prob(wg.tensor(x)), theirs.log_prob(torch.tensor(x)), "float32", "log_prob")
    close(ours.mean, theirs.mean, "float32", "mean")
    close(ours.variance, theirs.variance, "float32", "variance")
    torch.manual_seed(4)
    wg.manual_seed(4)
    close(ours.sample((3,)), theirs.sample((3,)), "float32", "samples")
    one = (lambda m, t: m.MixtureSameFamily(m.Categorical(t([0.3, 0.7])), m.Normal(t([0.0, 2.0]), t([1.0, 0.5]))))
    close(one(wd, wg.tensor).cdf(wg.tensor([0.5, 1.5])), one(td, torch.tensor).cdf(torch.tensor([0.5, 1.5])),
          "float32", "cdf")
    assert ours.support.check(ours.sample()).all().item()


def test_independent_reinterprets_batch_dimensions(backend):
    base = (lambda m, t: m.Normal(t([[0.0, 1.0], [2.0, 3.0]]), t([[1.0, 2.0], [0.5, 1.0]])))
    ours, theirs = wd.Independent(base(wd, wg.tensor), 1), td.Independent(base(td, torch.tensor), 1)
    assert ours.batch_shape == theirs.batch_shape == (2,) and ours.event_shape == theirs.event_shape == (2,)
    x = [[0.5, 0.5], [1.0, 2.0]]
    close(ours.log_prob(wg.tensor(x)), theirs.log_prob(torch.tensor(x)), "float32", "log_prob")
    close(ours.entropy(), theirs.entropy(), "float32", "entropy")
    assert ours.has_rsample and not ours.has_enumerate_support
    assert ours.expand((3, 2)).batch_shape == (3, 2)
    assert repr(ours).startswith("Independent(Normal(")


def test_straight_through_passes_the_gradient_of_probs(backend):
    logits = wg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    t_logits = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    torch.manual_seed(2)
    wg.manual_seed(2)
    (wd.OneHotCategoricalStraightThrough(logits=logits).rsample() * wg.tensor([1.0, 2.0, 3.0])).sum().backward()
    (td.OneHotCategoricalStraightThrough(logits=t_logits).rsample() * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    close(logits.grad, t_logits.grad, "float32", "straight-through gradient")


def test_binomial_entropy_and_enumerate_support(backend):
    ours, theirs = wd.Binomial(4, wg.tensor([0.3, 0.6])), td.Binomial(4, torch.tensor([0.3, 0.6]))
    close(ours.entropy(), theirs.entropy(), "float32", "entropy")
    assert ours.enumerate_support().tolist() == theirs.enumerate_support().tolist()
    with pytest.raises(NotImplementedError, match="Inhomogeneous"):
        wd.Binomial(wg.tensor([2.0, 3.0]), wg.tensor([0.5, 0.5])).entropy()


# ---------------------------------------------------------------- statistical checks of the own-algorithm samplers

@pytest.mark.parametrize("cls, params, mean, var", [
    ("Gamma", {"concentration": 0.5, "rate": 2.0}, 0.25, 0.125),
    ("Gamma", {"concentration": 7.0, "rate": 1.0}, 7.0, 7.0),
    ("Poisson", {"rate": 3.0}, 3.0, 3.0),
    ("Poisson", {"rate": 40.0}, 40.0, 40.0),
    ("Binomial", {"total_count": 8.0, "probs": 0.3}, 2.4, 1.68),
    ("Binomial", {"total_count": 100.0, "probs": 0.7}, 70.0, 21.0),
    ("Beta", {"concentration1": 2.0, "concentration0": 5.0}, 2 / 7, 10 / (49 * 8)),
])
def test_samplers_have_the_right_moments(backend, cls, params, mean, var):
    wg.manual_seed(0)
    tensors = {k: wg.tensor(v) for k, v in params.items()}
    x = getattr(wd, cls)(**tensors).sample((20000,)).tolist()
    assert_moments(x, mean, var, cls)


# ---------------------------------------------------------------- transforms

T = wd.transforms
TRANSFORMS = [
    ("ExpTransform", (), [[-1.0, 0.0, 2.0]]),
    ("SigmoidTransform", (), [[-1.0, 0.0, 2.0]]),
    ("TanhTransform", (), [[-1.0, 0.0, 2.0]]),
    ("SoftplusTransform", (), [[-1.0, 0.0, 2.0]]),
    ("AffineTransform", (1.0, [2.0, -0.5, 3.0]), [[-1.0, 0.0, 2.0]]),
    ("AffineTransform", (0.5, 2.0, 1), [[-1.0, 0.0, 2.0]]),
    ("PowerTransform", ([2.0],), [[0.5, 1.0, 2.0]]),
    ("StickBreakingTransform", (), [[-1.0, 0.0, 2.0]]),
    ("SoftmaxTransform", (), [[-1.0, 0.0, 2.0]]),
    ("LowerCholeskyTransform", (), [[[0.5, 1.0], [-1.0, 0.2]]]),
    ("PositiveDefiniteTransform", (), [[[0.5, 1.0], [-1.0, 0.2]]]),
    ("CorrCholeskyTransform", (), [[0.3, -0.5, 1.0]]),
    ("ReshapeTransform", ((3,), (3, 1)), [[-1.0, 0.0, 2.0]]),
    ("AbsTransform", (), [[-1.0, 0.5, 2.0]]),
]


def _transform(lib, name, args):
    module = td.transforms if lib is torch else T
    made = [make(lib, a, "float32") if isinstance(a, list) else a for a in args]
    return getattr(module, name)(*made)


@pytest.mark.parametrize("i", range(len(TRANSFORMS)))
def test_transforms_match_torch(backend, i):
    name, args, x = TRANSFORMS[i]
    ours, theirs = _transform(wg, name, args), _transform(torch, name, args)
    xo, xt = wg.tensor(x), torch.tensor(x)
    yo, yt = ours(xo), theirs(xt)
    close(yo, yt, "float32", f"{name} forward")
    if name not in ("SoftmaxTransform", "AbsTransform"):
        close(ours.inv(yo), theirs.inv(yt), "float32", f"{name} inverse")
    if name not in ("SoftmaxTransform", "AbsTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform"):
        close(ours.log_abs_det_jacobian(xo, yo), theirs.log_abs_det_jacobian(xt, yt), "float32", f"{name} log|J|")
    assert tuple(ours.forward_shape(tuple(xo.shape))) == tuple(theirs.forward_shape(xt.shape))
    assert tuple(ours.inverse_shape(tuple(yo.shape))) == tuple(theirs.inverse_shape(yt.shape))
    assert ours.bijective == theirs.bijective
    assert ours.domain.event_dim == theirs.domain.event_dim and ours.codomain.event_dim == theirs.codomain.event_dim
    assert bool(ours.codomain.check(yo).all().item())


def test_transform_caching_composition_and_equality():
    t = T.ExpTransform(cache_size=1)
    x = wg.tensor([0.5])
    assert t.inv(t(x)) is x
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    c = T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.ExpTransform()])
    assert c.inv.inv is c and c.sign == 1 and c.bijective
    assert T.identity_transform(x) is x
    with pytest.raises(ValueError, match="cache_size"):
        T.ExpTransform(cache_size=2)
    assert T.AffineTransform(0.0, -2.0).sign == -1
    stacked = T.StackTransform([T.ExpTransform(), T.identity_transform], dim=1)
    theirs = td.transforms.StackTransform([td.transforms.ExpTransform(), td.transforms.identity_transform], dim=1)
    v = [[0.5, -1.0], [1.0, 2.0]]
    close(stacked(wg.tensor(v)), theirs(torch.tensor(v)), "float32", "stack")
    joined = T.CatTransform([T.ExpTransform(), T.identity_transform], dim=0, lengths=[1, 1])
    t_joined = td.transforms.CatTransform([td.transforms.ExpTransform(), td.transforms.identity_transform], 0, [1, 1])
    close(joined(wg.tensor([0.5, -1.0])), t_joined(torch.tensor([0.5, -1.0])), "float32", "cat")
    close(joined.log_abs_det_jacobian(wg.tensor([0.5, -1.0]), joined(wg.tensor([0.5, -1.0]))),
          t_joined.log_abs_det_jacobian(torch.tensor([0.5, -1.0]), t_joined(torch.tensor([0.5, -1.0]))),
          "float32", "cat log|J|")


def test_transformed_distribution_matches_torch(backend):
    def flow(m, t):
        tr = m.transforms
        return m.TransformedDistribution(m.Normal(t([0.0, 1.0]), t([1.0, 0.5])),
                                         [tr.AffineTransform(t(0.5), t(2.0)), tr.TanhTransform()])
    ours, theirs = flow(wd, wg.tensor), flow(td, torch.tensor)
    y = [0.3, -0.7]
    close(ours.log_prob(wg.tensor(y)), theirs.log_prob(torch.tensor(y)), "float32", "log_prob")
    close(ours.cdf(wg.tensor(y)), theirs.cdf(torch.tensor(y)), "float32", "cdf")
    close(ours.icdf(wg.tensor([0.2, 0.6])), theirs.icdf(torch.tensor([0.2, 0.6])), "float32", "icdf")
    torch.manual_seed(1)
    wg.manual_seed(1)
    close(ours.rsample((3,)), theirs.rsample((3,)), "float32", "rsample")
    assert ours.support.check(ours.sample((5,))).all().item()
    e = ours.expand((2, 2))
    assert e.batch_shape == theirs.expand((2, 2)).batch_shape


@pytest.mark.parametrize("name, args", [("positive", ()), ("real", ()), ("unit_interval", ()), ("simplex", ()),
                                        ("interval", (-1.0, 3.0)), ("greater_than", (2.0,)), ("less_than", (1.0,)),
                                        ("nonnegative", ()), ("real_vector", ()), ("corr_cholesky", ()),
                                        ("lower_cholesky", ()), ("positive_definite", ()), ("half_open_interval",
                                                                                            (0.0, 2.0))])
def test_biject_to_and_transform_to_match_torch(backend, name, args):
    ours_c, theirs_c = getattr(wd.constraints, name), getattr(td.constraints, name)
    if args:
        ours_c, theirs_c = ours_c(*args), theirs_c(*args)
    for ours_r, theirs_r in ((wd.biject_to, td.biject_to), (wd.transform_to, td.transform_to)):
        try:
            want = theirs_r(theirs_c)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                ours_r(ours_c)
            continue
        got = ours_r(ours_c)
        shape = (3,) if name == "corr_cholesky" else (2, 2) if name in ("lower_cholesky", "positive_definite") \
            else (2, 3)
        x = torch.linspace(-1.5, 1.5, math.prod(shape)).reshape(shape)
        close(got(wg.tensor(x.tolist())), want(x), "float32", f"{ours_r} {name}")
        assert bool(ours_c.check(got(wg.tensor(x.tolist()))).all().item())


@pytest.mark.parametrize("name, args, values", [
    ("lower_triangular", (), [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [2.0, 3.0]]]),
    ("lower_cholesky", (), [[[1.0, 0.0], [2.0, 3.0]], [[-1.0, 0.0], [2.0, 3.0]]]),
    ("corr_cholesky", (), [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.9]]]),
    ("square", (), [[[1.0, 0.0], [2.0, 3.0]]]),
    ("symmetric", (), [[[1.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.5, 3.0]]]),
    ("positive_definite", (), [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("positive_semidefinite", (), [[[2.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("multinomial", (4,), [[1.0, 3.0], [4.0, 1.0], [-1.0, 2.0]]),
])
def test_new_constraints_match_torch(backend, name, args, values):
    ours, theirs = getattr(wd.constraints, name), getattr(td.constraints, name)
    if args:
        ours, theirs = ours(*args), theirs(*args)
    assert ours.check(wg.tensor(values)).tolist() == theirs.check(torch.tensor(values)).tolist()
    assert ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete


def test_cat_stack_and_mixture_constraints_match_torch(backend):
    v = [[-1.0, 2.0, 0.5], [1.0, -2.0, 3.0]]
    for make_c in (lambda c: c.cat([c.positive, c.real, c.unit_interval], 1, [1, 1, 1]),
                   lambda c: c.stack([c.positive, c.real, c.unit_interval], 1),
                   lambda c: c.MixtureSameFamilyConstraint(c.positive)):
        ours, theirs = make_c(wd.constraints), make_c(td.constraints)
        assert ours.check(wg.tensor(v)).tolist() == theirs.check(torch.tensor(v)).tolist()
        assert ours.event_dim == theirs.event_dim
