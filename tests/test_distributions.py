"""webgrad.distributions against torch.distributions on every backend: log_prob, cdf, icdf,
entropy, moments, shapes, expand, enumerate_support and kl_divergence with PyTorch's numbers for
the same parameters; gradients of log_prob, entropy, kl and rsample in the parameters; samples
checked statistically (webgrad's generator is not PyTorch's: seeded draws repeat within webgrad,
their distribution is what must agree); PyTorch's validation errors; the module layout scripts
import from."""
import doctest
import importlib
import inspect
import math

import numpy as np
import pytest
import torch
import torch.distributions as td

import webgrad as wg
import webgrad.distributions as wd
from test_random_ops import assert_fits, assert_moments, binned, normal_cdf

N = 20000
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-10, 1e-12)}
DTYPES = ["float32", pytest.param("float64", marks=pytest.mark.float64)]

PROBS = [[0.1, 0.2, 0.3, 0.4], [0.5, 0.0, 0.25, 0.25]]
LOGITS = [[0.5, -1.0, 2.0, 0.0], [-3.0, 1.5, 0.25, 1.0]]

# name -> (class name, parameters as keyword arguments of nested lists / numbers, values to score)
CASES = {
    "normal": ("Normal", {"loc": [[0.0, 1.0, -2.0]], "scale": [[1.0], [0.5]]},
               [[[0.3, -1.0, 2.0], [1.5, 0.0, -2.5]], [[0.0, 1.0, -2.0], [4.0, -4.0, 0.1]]]),
    "normal_scalars": ("Normal", {"loc": 0.5, "scale": 2.0}, [0.0, 1.0, -3.0]),
    "uniform": ("Uniform", {"low": [-1.0, 0.0, 2.0], "high": [1.0, 0.5, 5.0]}, [[0.0, 0.25, 3.0], [-0.5, 0.1, 4.9]]),
    "bernoulli_probs": ("Bernoulli", {"probs": [0.1, 0.5, 0.9, 0.3]}, [[0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0]]),
    "bernoulli_logits": ("Bernoulli", {"logits": [-2.0, 0.0, 3.0]}, [1.0, 0.0, 1.0]),
    "categorical_probs": ("Categorical", {"probs": PROBS}, [[3, 0], [1, 2]]),
    "categorical_unnormalised": ("Categorical", {"probs": [1.0, 2.0, 5.0]}, [0, 2, 1, 2]),
    "categorical_logits": ("Categorical", {"logits": LOGITS}, [2, 1]),
    "one_hot_categorical": ("OneHotCategorical", {"logits": LOGITS},
                            [[[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]]]),
}
DISCRETE = {"Bernoulli", "Categorical", "OneHotCategorical"}


def params(lib, case, dtype, requires_grad=False):
    """The case's parameters as ``lib``'s tensors (numbers stay numbers)."""
    _, kwargs, _ = CASES[case]
    make = (lambda v: torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=requires_grad)) if lib is torch \
        else (lambda v: wg.tensor(v, dtype=getattr(wg, dtype), requires_grad=requires_grad))
    return {k: v if isinstance(v, float) else make(v) for k, v in kwargs.items()}


def build(lib, case, dtype, requires_grad=False, **options):
    cls, _, _ = CASES[case]
    module = td if lib is torch else wd
    kwargs = params(lib, case, dtype, requires_grad)
    return getattr(module, cls)(**kwargs, **options), kwargs


def value(lib, case, dtype):
    cls, _, v = CASES[case]
    if cls == "Categorical":
        return torch.tensor(v) if lib is torch else wg.tensor(v)
    return torch.tensor(v, dtype=getattr(torch, dtype)) if lib is torch else wg.tensor(v, dtype=getattr(wg, dtype))


def assert_close(got, want, dtype, what=""):
    assert tuple(got.shape) == tuple(want.shape), (what, tuple(got.shape), tuple(want.shape))
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=rtol, atol=atol,
                               err_msg=what)


def attributes(case):
    cls = CASES[case][0]
    names = ["mean", "variance", "stddev", "mode", "probs", "logits", "param_shape"]
    if cls in ("Normal", "Uniform"):
        names = ["mean", "variance", "stddev", "mode"]
    return names


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES)
def test_numbers_match_torch(backend, case, dtype):
    ours, _ = build(wg, case, dtype)
    theirs, _ = build(torch, case, dtype)
    assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
    assert isinstance(ours.batch_shape, wg.Size)
    for name in attributes(case):
        got, want = getattr(ours, name), getattr(theirs, name)
        if name == "param_shape":
            assert got == want
        elif name == "mode" and CASES[case][0] == "Uniform":
            assert all(math.isnan(x) for x in got.tolist()) and tuple(got.shape) == tuple(want.shape)
        else:
            assert_close(got, want, dtype, name)
    assert_close(ours.log_prob(value(wg, case, dtype)), theirs.log_prob(value(torch, case, dtype)), dtype, "log_prob")
    assert_close(ours.entropy(), theirs.entropy(), dtype, "entropy")
    assert_close(ours.perplexity(), theirs.perplexity(), dtype, "perplexity")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", ["normal", "normal_scalars", "uniform"])
def test_cdf_and_icdf_match_torch(backend, case, dtype):
    ours, _ = build(wg, case, dtype)
    theirs, _ = build(torch, case, dtype)
    assert_close(ours.cdf(value(wg, case, dtype)), theirs.cdf(value(torch, case, dtype)), dtype, "cdf")
    q = [[1e-6, 0.01, 0.3], [0.5, 0.9, 0.999999]]
    shape = tuple(theirs.batch_shape) or (2, 3)
    qs = np.broadcast_to(np.array(q), shape if len(shape) == 2 else (2, 3))
    got = ours.icdf(wg.tensor(qs.tolist(), dtype=getattr(wg, dtype)))
    want = theirs.icdf(torch.tensor(qs.tolist(), dtype=getattr(torch, dtype)))
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=max(rtol, 1e-5) if dtype == "float32" else 1e-9,
                               atol=1e-5 if dtype == "float32" else 1e-9)


@pytest.mark.float64
def test_normal_icdf_edges_and_round_trip(backend):
    d = wd.Normal(wg.tensor(1.0, dtype=wg.float64), wg.tensor(2.0, dtype=wg.float64))
    assert d.icdf(wg.tensor([0.0, 1.0], dtype=wg.float64)).tolist() == [-math.inf, math.inf]
    p = wg.tensor([1e-12, 1e-5, 0.2, 0.5, 0.7, 1 - 1e-9], dtype=wg.float64)
    want = td.Normal(1.0, 2.0).icdf(torch.tensor(p.tolist(), dtype=torch.float64)).tolist()
    got = d.icdf(p).tolist()
    np.testing.assert_allclose(got[1:-1], want[1:-1], rtol=1e-12)
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-9)    # erf's cancellation near 1 (special.py)
    np.testing.assert_allclose(got[0], want[0], rtol=3e-5)      # p = 1e-12: the same, worse
    np.testing.assert_allclose(d.cdf(d.icdf(p)).tolist()[1:], p.tolist()[1:], rtol=1e-9)


@pytest.mark.parametrize("case", [c for c in CASES if c != "normal_scalars"])
def test_log_prob_and_entropy_gradients_match_torch(backend, case):
    ours, our_params = build(wg, case, "float32", requires_grad=True)
    theirs, their_params = build(torch, case, "float32", requires_grad=True)
    got = ours.log_prob(value(wg, case, "float32")).sum() + ours.entropy().sum() * 0.5
    want = theirs.log_prob(value(torch, case, "float32")).sum() + theirs.entropy().sum() * 0.5
    got.backward()
    want.backward()
    for name, p in their_params.items():
        if isinstance(p, torch.Tensor):
            assert_close(our_params[name].grad, p.grad, "float32", f"d/d{name}")


def test_rsample_is_differentiable_in_loc_and_scale(backend):
    wg.manual_seed(0)
    loc = wg.tensor([0.5, -1.0], requires_grad=True)
    scale = wg.tensor([2.0, 0.5], requires_grad=True)
    x = wd.Normal(loc, scale).rsample((3,))
    assert x.shape == (3, 2) and x.requires_grad
    x.sum().backward()
    eps = ((x.detach() - loc.detach()) / scale.detach()).sum(0)
    assert loc.grad.tolist() == [3.0, 3.0]
    np.testing.assert_allclose(scale.grad.tolist(), eps.tolist(), rtol=1e-5, atol=1e-6)
    low, high = wg.tensor([0.0], requires_grad=True), wg.tensor([2.0], requires_grad=True)
    u = wd.Uniform(low, high).rsample((4,))
    u.sum().backward()
    frac = (u.detach() / 2.0).sum(0)
    np.testing.assert_allclose(high.grad.tolist(), frac.tolist(), rtol=1e-5)
    np.testing.assert_allclose(low.grad.tolist(), (4 - frac).tolist(), rtol=1e-5)
    assert not wd.Normal(loc, scale).sample().requires_grad


@pytest.mark.float64
def test_gradients_by_finite_differences(backend):
    """log_prob/cdf/icdf/entropy of Normal in loc and scale, float64: central differences."""
    def f(loc, scale):
        d = wd.Normal(loc, scale)
        x = wg.tensor([0.3, -1.2], dtype=wg.float64)
        p = wg.tensor([0.2, 0.9], dtype=wg.float64)
        return d.log_prob(x).sum() + d.cdf(x).sum() + d.icdf(p).sum() + d.entropy().sum()
    loc = wg.tensor([0.1, 0.4], dtype=wg.float64, requires_grad=True)
    scale = wg.tensor([1.5, 0.7], dtype=wg.float64, requires_grad=True)
    f(loc, scale).backward()
    for t in (loc, scale):
        for i in range(2):
            h = [0.0, 0.0]
            h[i] = 1e-6
            step = wg.tensor(h, dtype=wg.float64)
            up = f(loc.detach() + step if t is loc else loc.detach(), scale.detach() + step if t is scale
                   else scale.detach()).item()
            down = f(loc.detach() - step if t is loc else loc.detach(), scale.detach() - step if t is scale
                     else scale.detach()).item()
            assert abs(t.grad.tolist()[i] - (up - down) / 2e-6) < 1e-6


# ---------------------------------------------------------------- sampling

@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 3)])
def test_sample_shapes_match_torch(backend, case, sample_shape):
    ours, _ = build(wg, case, "float32")
    theirs, _ = build(torch, case, "float32")
    got, want = ours.sample(sample_shape), theirs.sample(sample_shape)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.dtype == (wg.long if CASES[case][0] == "Categorical" else wg.float32)
    assert ours.support.check(got).all().item()


def test_normal_samples_have_the_right_moments(backend):
    wg.manual_seed(0)
    d = wd.Normal(wg.tensor([1.0, -2.0]), wg.tensor([0.5, 3.0]))
    for draw in (d.sample, d.rsample):
        x = draw((N,))
        for j, (m, s) in enumerate([(1.0, 0.5), (-2.0, 3.0)]):
            values = x[:, j].tolist()
            assert_moments(values, m, s * s, "Normal")
            edges = [m + s * e for e in (-2, -1, -0.5, 0, 0.5, 1, 2)]
            cdf = [0] + [normal_cdf((e - m) / s) for e in edges] + [1]
            assert_fits(binned(values, edges), {i: cdf[i + 1] - cdf[i] for i in range(len(cdf) - 1)}, "Normal")


def test_uniform_samples_cover_the_interval(backend):
    wg.manual_seed(1)
    x = wd.Uniform(-1.0, 3.0).sample((N,)).tolist()
    assert -1.0 <= min(x) and max(x) < 3.0
    assert_moments(x, 1.0, 16 / 12, "Uniform")
    assert_fits(binned(x, [-1 + 0.4 * i for i in range(1, 10)]), {i: 0.1 for i in range(10)}, "Uniform")


def test_categorical_samples_follow_probs(backend):
    wg.manual_seed(2)
    d = wd.Categorical(wg.tensor(PROBS))
    x = d.sample((N,))
    assert x.shape == (N, 2)
    for row, probs in enumerate(PROBS):
        assert_fits(x[:, row].tolist(), dict(enumerate(probs)), f"Categorical row {row}")
    logits = wd.Categorical(logits=wg.tensor(LOGITS[0])).sample((N,)).tolist()
    assert_fits(logits, dict(enumerate(torch.tensor(LOGITS[0]).softmax(-1).tolist())), "Categorical logits")


def test_bernoulli_and_one_hot_samples_follow_probs(backend):
    wg.manual_seed(3)
    x = wd.Bernoulli(wg.tensor([0.2, 0.7])).sample((N,))
    for j, p in enumerate([0.2, 0.7]):
        assert_fits(x[:, j].tolist(), {0.0: 1 - p, 1.0: p}, "Bernoulli")
    h = wd.OneHotCategorical(wg.tensor(PROBS[0])).sample((N,))
    assert h.sum(-1).tolist() == [1.0] * N
    assert_fits(h.argmax(-1).tolist(), dict(enumerate(PROBS[0])), "OneHotCategorical")


def test_seeded_samples_repeat(backend):
    d = wd.Categorical(logits=wg.tensor(LOGITS))
    wg.manual_seed(7)
    a = (d.sample((50,)).tolist(), wd.Normal(0.0, 1.0).sample((4,)).tolist())
    wg.manual_seed(7)
    assert (d.sample((50,)).tolist(), wd.Normal(0.0, 1.0).sample((4,)).tolist()) == a


# ---------------------------------------------------------------- expand, enumerate_support, kl

@pytest.mark.parametrize("case", ["normal_scalars", "bernoulli_logits", "categorical_unnormalised",
                                  "one_hot_categorical", "uniform"])
def test_expand_matches_torch(backend, case):
    ours, _ = build(wg, case, "float32")
    theirs, _ = build(torch, case, "float32")
    batch = (3,) + tuple(theirs.batch_shape)
    e_ours, e_theirs = ours.expand(batch), theirs.expand(batch)
    assert type(e_ours) is type(ours) and e_ours.batch_shape == e_theirs.batch_shape
    assert e_ours.event_shape == e_theirs.event_shape
    x = e_theirs.sample()
    assert_close(e_ours.log_prob(wg.tensor(x.tolist(), dtype=wg.long if x.dtype == torch.long else wg.float32)),
                 e_theirs.log_prob(x), "float32", "expanded log_prob")
    assert_close(e_ours.entropy(), e_theirs.entropy(), "float32", "expanded entropy")
    assert tuple(e_ours.sample((4,)).shape) == tuple(e_theirs.sample((4,)).shape)


@pytest.mark.parametrize("case", ["bernoulli_probs", "categorical_probs", "one_hot_categorical"])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support_matches_torch(backend, case, expand):
    ours, _ = build(wg, case, "float32")
    theirs, _ = build(torch, case, "float32")
    got, want = ours.enumerate_support(expand), theirs.enumerate_support(expand)
    assert tuple(got.shape) == tuple(want.shape) and got.tolist() == want.tolist()


KL_PAIRS = [
    ("Normal", {"loc": [0.0, 1.0, -1.0], "scale": [1.0, 0.5, 2.0]}, {"loc": [0.5, 1.0, 1.0], "scale": [2.0, 0.5, 1.0]}),
    ("Categorical", {"probs": PROBS}, {"logits": LOGITS}),
    ("Categorical", {"probs": [[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]}, {"probs": [[0.2, 0.3, 0.5], [0.5, 0.5, 0.0]]}),
    ("OneHotCategorical", {"logits": LOGITS}, {"probs": PROBS}),
    ("Bernoulli", {"probs": [0.1, 0.5, 0.0, 1.0, 0.3]}, {"logits": [0.5, -1.0, 2.0, 0.0, 1.0]}),
    ("Bernoulli", {"probs": [0.3, 0.3, 0.0, 1.0]}, {"probs": [0.0, 1.0, 0.5, 0.5]}),
    ("Uniform", {"low": [0.0, -1.0], "high": [1.0, 1.0]}, {"low": [-1.0, 0.0], "high": [2.0, 1.0]}),
]


def _kl_case(lib, cls, p, q, grad):
    module = td if lib is torch else wd
    make = (lambda v: torch.tensor(v, requires_grad=grad)) if lib is torch else \
        (lambda v: wg.tensor(v, requires_grad=grad))
    p_args, q_args = ({k: make(v) for k, v in a.items()} for a in (p, q))
    return getattr(module, cls)(**p_args), getattr(module, cls)(**q_args), [*p_args.values(), *q_args.values()]


@pytest.mark.parametrize("i", range(len(KL_PAIRS)))
def test_kl_divergence_matches_torch(backend, i):
    cls, p, q = KL_PAIRS[i]
    grad = not (cls == "Bernoulli" and i == 5) and cls != "Uniform"    # inf terms: no finite gradient
    op, oq, ours = _kl_case(wg, cls, p, q, grad)
    tp, tq, theirs = _kl_case(torch, cls, p, q, grad)
    got, want = wd.kl_divergence(op, oq), td.kl_divergence(tp, tq)
    assert_close(got, want, "float32", "kl")
    if grad:
        got.sum().backward()
        want.sum().backward()
        for a, b in zip(ours, theirs):
            assert_close(a.grad, b.grad, "float32", "kl gradient")


def test_kl_uniform_normal_matches_torch(backend):
    got = wd.kl_divergence(wd.Uniform(wg.tensor([0.0, -2.0]), wg.tensor([1.0, 3.0])), wd.Normal(0.5, 2.0))
    want = td.kl_divergence(td.Uniform(torch.tensor([0.0, -2.0]), torch.tensor([1.0, 3.0])), td.Normal(0.5, 2.0))
    assert_close(got, want, "float32", "kl")


def test_register_kl_dispatches_to_the_most_specific_pair():
    class MyNormal(wd.Normal):
        pass

    @wd.register_kl(MyNormal, wd.Normal)
    def _mine(p, q):
        return "mine"

    assert wd.kl_divergence(MyNormal(0.0, 1.0), wd.Normal(0.0, 1.0)) == "mine"
    assert wd.kl_divergence(wd.Normal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 0.0     # Normal-Normal
    with pytest.raises(NotImplementedError, match="Normal.*Cauchy"):
        wd.kl_divergence(wd.Normal(0.0, 1.0), wd.Cauchy(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="exponential families"):      # PyTorch's Bregman fallback
        wd.kl_divergence(wd.Normal(0.0, 1.0), wd.Bernoulli(0.5))
    with pytest.raises(NotImplementedError):
        td.kl_divergence(td.Normal(0.0, 1.0), td.Bernoulli(0.5))
    with pytest.raises(TypeError, match="register_kl"):
        wd.register_kl("Normal", wd.Normal)


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize("make, param, constraint", [
    (lambda m, t: m.Normal(t([0.0, 1.0]), t([1.0, -1.0])), "scale", "GreaterThan"),
    (lambda m, t: m.Normal(t([float("nan")]), t([1.0])), "loc", "Real"),
    (lambda m, t: m.Categorical(t([0.5, -0.1, 0.6])), "probs", "Simplex"),
    (lambda m, t: m.Bernoulli(t([1.5])), "probs", "Interval"),
    (lambda m, t: m.Uniform(t([1.0]), t([0.0])), "low", "LessThan"),
])
def test_invalid_parameters_raise_value_error_naming_them(backend, make, param, constraint):
    with pytest.raises(ValueError, match=f"parameter {param} .*constraint {constraint}"):
        make(wd, wg.tensor)
    with pytest.raises(ValueError, match=f"parameter {param} .*constraint {constraint}"):
        make(td, torch.tensor)
    wd.Distribution.set_default_validate_args(False)
    try:
        make(wd, wg.tensor)                       # not checked: PyTorch's behaviour too
    finally:
        wd.Distribution.set_default_validate_args(True)


def test_validate_args_false_skips_the_checks(backend):
    d = wd.Normal(wg.tensor([0.0]), wg.tensor([-1.0]), validate_args=False)
    assert d.scale.tolist() == [-1.0]
    u = wd.Uniform(wg.tensor([0.0]), wg.tensor([1.0]), validate_args=False)
    assert u.log_prob(wg.tensor([2.0])).tolist() == [-math.inf]
    with pytest.raises(ValueError):
        wd.Distribution.set_default_validate_args(1.5)


def test_probs_and_logits_are_exclusive():
    for cls in ("Categorical", "Bernoulli", "OneHotCategorical"):
        for kwargs in ({}, {"probs": wg.tensor([0.5, 0.5]), "logits": wg.tensor([0.0, 0.0])}):
            with pytest.raises(ValueError, match="probs.*logits"):
                getattr(wd, cls)(**kwargs)
            with pytest.raises(ValueError):
                getattr(td, cls)(**{k: torch.tensor(v.tolist()) for k, v in kwargs.items()})
    with pytest.raises(ValueError, match="one-dimensional"):
        wd.Categorical(wg.tensor(1.0))


@pytest.mark.parametrize("make, bad", [
    (lambda m, t: m.Categorical(t([0.2, 0.8])), [2]),
    (lambda m, t: m.Bernoulli(t([0.2, 0.8])), [0.5, 1.0]),
    (lambda m, t: m.Uniform(t([0.0]), t([1.0])), [1.5]),
])
def test_values_outside_the_support_raise_value_error(backend, make, bad):
    with pytest.raises(ValueError, match="support"):
        make(wd, wg.tensor).log_prob(wg.tensor(bad))
    with pytest.raises(ValueError, match="support"):
        make(td, torch.tensor).log_prob(torch.tensor(bad))


def test_values_of_the_wrong_shape_or_type_raise_value_error(backend):
    d = wd.Normal(wg.zeros(3), 1.0)
    with pytest.raises(ValueError, match="must be a Tensor"):
        d.log_prob(0.5)
    with pytest.raises(ValueError, match="broadcastable"):
        d.log_prob(wg.zeros(2))
    with pytest.raises(ValueError, match="event_shape"):
        wd.OneHotCategorical(wg.tensor([0.5, 0.5])).log_prob(wg.tensor([1.0, 0.0, 0.0]))


def test_repr_names_the_parameters():
    assert repr(wd.Normal(wg.zeros(2, 3), 1.0)) == "Normal(loc: webgrad.Size([2, 3]), scale: webgrad.Size([2, 3]))"
    assert repr(wd.Categorical(wg.tensor([0.5, 0.5]))) == "Categorical(probs: webgrad.Size([2]))"


# ---------------------------------------------------------------- the module as scripts import it

def test_module_layout_matches_torch():
    from webgrad.distributions import Categorical, Normal, kl_divergence
    from webgrad.distributions.categorical import Categorical as C
    from webgrad.distributions.kl import kl_divergence as kl
    from webgrad.distributions.normal import Normal as Nrm
    assert (C, Nrm, kl) == (Categorical, Normal, kl_divergence)
    assert wg.distributions is wd
    for name in wd.__all__:
        assert hasattr(td, name), name
    for sub in ("bernoulli", "categorical", "constraints", "distribution", "kl", "normal", "one_hot_categorical",
                "uniform", "utils"):
        ours, theirs = importlib.import_module(f"webgrad.distributions.{sub}"), getattr(td, sub)
        assert set(getattr(ours, "__all__", [])) <= set(dir(theirs)), sub
    assert wd.constraints.positive.check(wg.tensor([1.0])).tolist() == [True]


METHODS = ("__init__", "sample", "rsample", "log_prob", "cdf", "icdf", "entropy", "expand", "enumerate_support",
           "perplexity", "set_default_validate_args")


@pytest.mark.parametrize("name", [n for n in wd.__all__ if n != "constraints"])
def test_takes_pytorchs_parameters(name):
    ours, theirs = getattr(wd, name), getattr(td, name)
    pairs = [(getattr(ours, m), getattr(theirs, m)) for m in METHODS if hasattr(theirs, m)] \
        if isinstance(ours, type) else [(ours, theirs)]
    for o, t in pairs:
        params = [[(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()] for f in (o, t)]
        assert params[0] == params[1], (name, o.__name__)


def test_has_rsample_and_supports():
    for cls in ("Normal", "Uniform", "Bernoulli", "Categorical", "OneHotCategorical"):
        assert getattr(wd, cls).has_rsample == getattr(td, cls).has_rsample, cls
        assert getattr(wd, cls).has_enumerate_support == getattr(td, cls).has_enumerate_support, cls
    with pytest.raises(NotImplementedError):
        wd.Categorical(wg.tensor([0.5, 0.5])).rsample()


@pytest.mark.parametrize("module", ["", ".constraints", ".utils", ".distribution", ".special", ".normal", ".uniform",
                                    ".bernoulli", ".categorical", ".one_hot_categorical", ".kl"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module("webgrad.distributions" + module))
    assert result.failed == 0 and (result.attempted or module == "")
