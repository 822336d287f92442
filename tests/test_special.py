"""The special functions (``webgrad.special``, and their ``torch``/``Tensor`` names): kernels on every
backend (cpu numpy, WGSL), their gradients by finite differences, values and edge values against
PyTorch, float64 accuracy against mpmath, and ``nn.init.trunc_normal_``'s draws against PyTorch's."""
import math
import warnings

import numpy as np
import pytest

import webgrad as wg
from opinfo import OpCase, gradcheck, op_tests, torch_reference as tref

torch = pytest.importorskip("torch")
mpmath = pytest.importorskip("mpmath")   # a dependency of torch (through sympy)

rng = np.random.default_rng(23)


def uniform(lo, hi, *shape):
    return rng.uniform(lo, hi, shape)


def torch_fn(fn):
    """A reference calling ``fn`` on the inputs as torch tensors."""
    return lambda *arrays: fn(*[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]).numpy()


CASES = [
    OpCase("erfinv", wg.erfinv, tref(torch.erfinv), [uniform(-0.95, 0.95, 5, 7)], second_order=True),
    OpCase("erfinv_tails", wg.erfinv, tref(torch.erfinv), [1 - np.geomspace(1e-3, 0.4, 64)], grad_rtol=1e-3),
    OpCase("erfc", wg.erfc, tref(torch.erfc), [uniform(-3, 5, 4, 9)], second_order=True),
    OpCase("erfc_far", wg.erfc, tref(torch.erfc), [uniform(4, 9, 33)], rtol=1e-5, atol=1e-30, grad=False),
    OpCase("erfcx", wg.special.erfcx, tref(torch.special.erfcx), [uniform(-2, 12, 3, 11)], second_order=True),
    OpCase("erfc_empty", wg.erfc, tref(torch.erfc), [np.zeros((0, 2))]),
    OpCase("ndtr", wg.special.ndtr, tref(torch.special.ndtr), [uniform(-9, 5, 4, 6)], atol=1e-30, second_order=True),
    OpCase("log_ndtr", wg.special.log_ndtr, tref(torch.special.log_ndtr), [uniform(-30, 6, 40)]),
    OpCase("log_ndtr_near", wg.special.log_ndtr, tref(torch.special.log_ndtr), [uniform(-3, 3, 9)], second_order=True),
    OpCase("ndtri", wg.special.ndtri, tref(torch.special.ndtri), [uniform(0.01, 0.99, 3, 5)], second_order=True),
    OpCase("ndtri_tails", wg.special.ndtri, tref(torch.special.ndtri), [np.geomspace(1e-30, 0.3, 40)], rtol=2e-6,
           grad=False),
    OpCase("sinc", wg.special.sinc, tref(torch.special.sinc), [np.concatenate([uniform(-4, 4, 20), [0.0]])],
           second_order=True),
    OpCase("entr", wg.special.entr, tref(torch.special.entr), [uniform(0.05, 3, 4, 5)], second_order=True),
    OpCase("lgamma", wg.lgamma, tref(torch.lgamma), [np.concatenate([uniform(0.5, 6, 20), [1.0, 2.0]])],
           second_order=True),
    OpCase("lgamma_wide", wg.lgamma, tref(torch.lgamma), [np.concatenate([uniform(0.01, 40, 30), [1e-3, 1e4]])]),
    OpCase("lgamma_negative", wg.lgamma, tref(torch.lgamma), [uniform(-6, 0, 4, 5)], grad_rtol=1e-3),
    OpCase("digamma", wg.digamma, tref(torch.digamma), [uniform(0.3, 12, 5, 6)], rtol=1e-5, second_order=True),
    OpCase("digamma_negative", wg.digamma, tref(torch.digamma), [uniform(-6, 0, 4, 5)], rtol=1e-5, grad_rtol=1e-3),
    OpCase("polygamma2", lambda x: wg.polygamma(2, x), torch_fn(lambda x: torch.polygamma(2, x)),
           [uniform(0.3, 9, 4, 5)], rtol=1e-5),
    OpCase("mvlgamma", lambda x: wg.mvlgamma(x, 3), torch_fn(lambda x: torch.mvlgamma(x, 3)), [uniform(1.2, 7, 3, 4)]),
    OpCase("zeta_q", lambda q: wg.special.zeta(3.0, q),
           torch_fn(lambda q: torch.special.zeta(torch.tensor(3.0, dtype=q.dtype), q)), [uniform(0.5, 9, 4, 5)]),
    OpCase("zeta", wg.special.zeta, tref(torch.special.zeta), [uniform(1.1, 6, 3, 1), uniform(-5, 9, 5)], grad=False,
           rtol=1e-5),
    OpCase("i0", wg.i0, tref(torch.i0), [uniform(-12, 12, 5, 7)], rtol=2e-6),
    OpCase("i0_near", wg.i0, tref(torch.i0), [uniform(-3, 3, 9)], second_order=True),
    OpCase("i0e", wg.special.i0e, tref(torch.special.i0e), [uniform(-12, 12, 5, 7)], second_order=True),
    OpCase("i1", wg.special.i1, tref(torch.special.i1), [np.concatenate([uniform(-12, 12, 30), [0.0]])], rtol=2e-6),
    OpCase("i1_near", wg.special.i1, tref(torch.special.i1), [np.concatenate([uniform(-3, 3, 9), [0.0]])],
           second_order=True),
    OpCase("i1e", wg.special.i1e, tref(torch.special.i1e), [np.concatenate([uniform(-12, 12, 30), [0.0]])], rtol=2e-6,
           second_order=True),
    OpCase("gammainc", wg.special.gammainc, tref(torch.special.gammainc), [uniform(0.1, 12, 3, 1), uniform(0, 20, 6)],
           grad=False, rtol=2e-6),
    OpCase("gammaincc", wg.special.gammaincc, tref(torch.special.gammaincc),
           [uniform(0.1, 12, 3, 1), uniform(0, 20, 6)], grad=False, rtol=2e-6),
    OpCase("gammainc_x", lambda x: wg.special.gammainc(2.5, x), torch_fn(lambda x: torch.special.gammainc(
           torch.tensor(2.5, dtype=x.dtype), x)), [uniform(0.2, 9, 4, 5)], second_order=True),
    OpCase("gammaincc_x", lambda x: wg.igammac(0.7, x),
           torch_fn(lambda x: torch.igammac(torch.tensor(0.7, dtype=x.dtype), x)), [uniform(0.2, 9, 4, 5)],
           second_order=True),
    OpCase("xlog1py", wg.special.xlog1py, tref(torch.special.xlog1py), [uniform(-2, 2, 3, 4), uniform(-0.9, 3, 4)],
           second_order=True),
]

globals().update(op_tests(CASES))

EDGES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 1.5, -2.0, 0.5, 0.7, 1e-30, 4.5, 9.0, 27.0]


@pytest.mark.parametrize("name", ["erfinv", "erfc", "special.erfcx", "special.ndtri"])
def test_edge_values_as_torch(backend, name):
    fn, tfn = wg, torch
    for part in name.split("."):
        fn, tfn = getattr(fn, part), getattr(tfn, part)
    got = fn(wg.tensor(EDGES)).numpy()
    want = tfn(torch.tensor(EDGES)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
    finite = np.isfinite(want) & (np.abs(want) > 1e-37)   # a GPU may flush subnormals to zero
    rtol = 2e-6 if backend == "cpu" else 2e-5   # WGSL's exp may be a few ulp off far out (erfc(9))
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, err_msg=name)
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)], err_msg=name)


SPECIAL_EDGES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -40.0, 1e-30, 30.0, -2.5, 1e30]
NAMES = ["ndtr", "log_ndtr", "ndtri", "sinc", "entr", "expit", "exp2", "expm1", "log1p", "erf", "logit", "round",
         "gammaln", "psi", "digamma", "i0", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1"]


@pytest.mark.parametrize("name", NAMES)
def test_special_names_edge_values_as_torch(backend, name):
    got = getattr(wg.special, name)(wg.tensor(SPECIAL_EDGES)).numpy()
    want = getattr(torch.special, name)(torch.tensor(SPECIAL_EDGES)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-5, atol=1e-30, err_msg=name)
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)], err_msg=name)


def test_special_names_with_arguments(backend):
    x = torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.5, 0.25]])
    w = wg.tensor(x.numpy())
    for got, want in [(wg.special.softmax(w, 1), torch.special.softmax(x, 1)),
                      (wg.special.log_softmax(w, 0), torch.special.log_softmax(x, 0)),
                      (wg.special.logsumexp(w, 1, keepdim=True), torch.special.logsumexp(x, 1, keepdim=True)),
                      (wg.special.logit(w, eps=0.2), torch.special.logit(x, eps=0.2)),
                      (wg.special.xlogy(w, w.flip(0)), torch.special.xlogy(x, x.flip(0))),
                      (wg.special.round(w, decimals=1), torch.special.round(x, decimals=1))]:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    assert wg.special.ndtr(wg.tensor([0, 1])).dtype is wg.float32   # integers promote, as in PyTorch


@pytest.mark.parametrize("n", [1, 2, 4])
def test_polygamma_as_torch(backend, n):
    x = np.array([0.5, 1.0, 2.0, 3.7, -2.5, -0.3, 25.0, math.inf, math.nan, 1e-3], np.float32)   # no poles: PyTorch's
    got = wg.polygamma(n, wg.tensor(x)).numpy()                                             # trigamma gives noise there
    want = torch.polygamma(n, torch.from_numpy(x)).numpy()
    # on the GPU (float32 sums, as PyTorch's CUDA) the Hurwitz sum at a negative x cancels terms of +-32
    tolerance = dict(rtol=1e-5) if backend == "cpu" else dict(rtol=3e-5, atol=1e-4)
    np.testing.assert_allclose(got, want, equal_nan=True, **tolerance)
    np.testing.assert_array_equal(wg.tensor(x).polygamma(n).numpy(), got)


def test_gamma_family_arguments_and_errors(backend):
    with pytest.raises(RuntimeError, match="p has to be"):
        wg.mvlgamma(wg.tensor([3.0]), 0)
    with pytest.raises(RuntimeError, match="greater than"):
        wg.special.multigammaln(wg.tensor([0.9, 3.0]), 3)
    with pytest.raises(RuntimeError, match="polygamma"):
        wg.polygamma(-1, wg.tensor([1.0]))
    x = wg.tensor([1.5, 3.0])
    assert x.lgamma_() is x and x.digamma_() is x
    np.testing.assert_allclose(x.numpy(), torch.tensor([1.5, 3.0]).lgamma_().digamma_().numpy(), rtol=1e-5)
    assert wg.lgamma(wg.tensor([1, 3])).dtype is wg.float32


def test_incomplete_gamma_edges_and_gradient(backend):
    inf, nan = math.inf, math.nan
    a = np.array([0.0, 0.0, -1.0, 1.0, inf, inf, 1.0, 2.0, 1.0, nan, 1.0, 0.5, 100.0, 1e-3], np.float32)
    x = np.array([0.0, 1.0, 1.0, -1.0, 1.0, inf, inf, 0.0, nan, 1.0, 0.0, 0.3, 101.0, 5.0], np.float32)
    for name in ("gammainc", "gammaincc"):
        got = getattr(wg.special, name)(wg.tensor(a), wg.tensor(x)).numpy()
        want = getattr(torch.special, name)(torch.from_numpy(a), torch.from_numpy(x)).numpy()
        # the GPU's float32 prefactor x^a e^-x / Gamma(a) loses ~1e-4 at a = 100 (a log x - x - lgamma(a) cancels)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6 if backend == "cpu" else 2e-4, equal_nan=True)
    with pytest.raises(NotImplementedError, match="igamma"):
        wg.igamma(wg.tensor([2.0], requires_grad=True), wg.tensor([1.0])).sum().backward()
    assert wg.tensor([1.0]).igamma(wg.tensor([1.0])).tolist() == wg.igamma(wg.tensor([1.0]), wg.tensor([1.0])).tolist()


def test_zeta_gradient_only_in_q():
    x = wg.tensor([2.0, 3.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="zeta"):
        wg.special.zeta(x, wg.tensor([1.0, 2.0])).sum().backward()
    q = wg.tensor([1.0, 2.0], requires_grad=True)
    wg.special.zeta(wg.tensor([2.0, 3.0]), q).sum().backward()
    tq = torch.tensor([1.0, 2.0], requires_grad=True)
    torch.special.zeta(torch.tensor([2.0, 3.0]), tq).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), rtol=1e-5)


def test_special_module_says_what_it_lacks():
    with pytest.raises(AttributeError, match="porting.md"):
        wg.special.no_such_function


def _ulps(got, want):
    ulp = np.spacing(np.abs(want))
    return np.abs(got - want) / np.where(ulp == 0, np.spacing(0.0), ulp)


def test_float64_accuracy_against_mpmath():
    p = np.geomspace(1e-300, 0.45, 200)
    x = wg.special.ndtri(wg.tensor(p, dtype=wg.float64, backend="cpu")).numpy()
    with mpmath.workdps(40):   # ndtr(x) against p: its error over ndtr'(x) is x's
        dx = np.array([float(abs(mpmath.ncdf(v) - w) / mpmath.npdf(v)) for v, w in zip(x, p)])
    assert (dx / np.spacing(np.abs(x))).max() <= 8
    y = np.concatenate([uniform(-1, 1, 400), 1 - np.geomspace(1e-15, 0.5, 40)])
    x = np.concatenate([uniform(-6, 27, 400), np.linspace(0.4, 1.2, 41)])
    with mpmath.workdps(40):
        erfinv = np.array([float(mpmath.erfinv(v)) for v in y])
        erfc = np.array([float(mpmath.erfc(v)) for v in x])
        erfcx = np.array([float(mpmath.erfc(v) * mpmath.exp(mpmath.mpf(v) ** 2)) for v in x[x > -1]])
    assert _ulps(wg.erfinv(wg.tensor(y, dtype=wg.float64, backend="cpu")).numpy(), erfinv).max() <= 4
    assert _ulps(wg.erfc(wg.tensor(x, dtype=wg.float64, backend="cpu")).numpy(), erfc).max() <= 8
    got = wg.special.erfcx(wg.tensor(x[x > -1], dtype=wg.float64, backend="cpu")).numpy()
    assert _ulps(got, erfcx).max() <= 8


def test_float32_within_an_ulp_of_torch_on_cpu():
    y = rng.uniform(-1, 1, 20000).astype(np.float32)
    got = wg.erfinv(wg.tensor(y, backend="cpu")).numpy()
    want = torch.erfinv(torch.from_numpy(y)).numpy()
    assert np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32)).max() <= 1


def test_integer_input_promotes_and_inplace(backend):
    assert wg.erfc(wg.tensor([0, 1])).dtype is wg.float32
    x = wg.tensor([0.5, -0.25])
    assert x.erfinv_() is x
    np.testing.assert_allclose(x.numpy(), torch.tensor([0.5, -0.25]).erfinv_().numpy(), rtol=1e-6)
    y = wg.tensor([1.0])
    y.erfc_()
    np.testing.assert_allclose(y.numpy(), [math.erfc(1.0)], rtol=1e-6)
    with pytest.raises(RuntimeError, match="erfinv_"):
        wg.tensor([1, 2]).erfinv_()   # a float result cannot go into an int tensor, as in PyTorch


TRUNC = [((1000,), {}), ((64, 33), dict(mean=0.5, std=0.02, a=0.45, b=0.6)), ((300,), dict(a=1.0, b=3.0)),
         ((7,), dict(std=0.02, a=-0.04, b=0.04)), ((2, 50), dict(mean=5.0, a=-1.0, b=1.0))]


@pytest.mark.parametrize("shape,kw", TRUNC, ids=[str(kw) for _, kw in TRUNC])
def test_trunc_normal_is_torchs(backend, shape, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(5)
        want = torch.nn.init.trunc_normal_(torch.empty(*shape), **kw).numpy()
        wg.manual_seed(5)
        got = wg.nn.init.trunc_normal_(wg.empty(*shape), **kw).numpy()
        again = wg.nn.init.trunc_normal_(wg.empty(*shape), generator=wg.Generator().manual_seed(9), **kw).numpy()
    assert np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32)).max() <= 1
    lo, hi = kw.get("a", -2.0), kw.get("b", 2.0)
    assert lo <= again.min() and again.max() <= hi


def test_trunc_normal_warns_as_torch():
    with pytest.warns(UserWarning, match="more than 2 std"):
        wg.nn.init.trunc_normal_(wg.empty(3), mean=5.0, a=-1.0, b=1.0)
