"""Products added to a tensor (addmm, baddbmm, addbmm, addmv, addr), inner, trace, diag, and the
reductions composed from kernels (cumprod, diff, var_mean, std_mean, aminmax), against PyTorch:
forward on every backend, finite-difference gradients (float64, cpu), backends agreeing with cpu."""
import math

import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests
from test_elementary import torch_ref

rng = np.random.default_rng(11)


def r(*shape):
    return rng.standard_normal(shape)


CASES = [
    OpCase("addmm", lambda i, a, b: wg.addmm(i, a, b, beta=0.5, alpha=2.0),
           torch_ref(lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2.0)), [r(3), r(2, 4), r(4, 3)]),
    OpCase("addmm_default", wg.addmm, torch_ref(torch.addmm), [r(2, 3), r(2, 4), r(4, 3)]),
    OpCase("baddbmm", lambda i, a, b: wg.baddbmm(i, a, b, alpha=-1.5),
           torch_ref(lambda i, a, b: torch.baddbmm(i, a, b, alpha=-1.5)), [r(1, 2, 3), r(4, 2, 5), r(4, 5, 3)]),
    OpCase("addbmm", lambda i, a, b: wg.addbmm(i, a, b, beta=2.0),
           torch_ref(lambda i, a, b: torch.addbmm(i, a, b, beta=2.0)), [r(2, 3), r(4, 2, 5), r(4, 5, 3)]),
    OpCase("addmv", lambda i, m, v: wg.addmv(i, m, v, beta=0.25),
           torch_ref(lambda i, m, v: torch.addmv(i, m, v, beta=0.25)), [r(3), r(3, 4), r(4)]),
    OpCase("addr", lambda i, a, b: wg.addr(i, a, b, alpha=3.0),
           torch_ref(lambda i, a, b: torch.addr(i, a, b, alpha=3.0)), [r(3, 4), r(3), r(4)]),
    OpCase("inner", wg.inner, torch_ref(torch.inner), [r(2, 3, 4), r(5, 4)]),
    OpCase("inner_1d", wg.inner, torch_ref(torch.inner), [r(4), r(4)]),
    OpCase("inner_0d", wg.inner, torch_ref(torch.inner), [np.array(2.5), r(3, 2)]),
    OpCase("trace", wg.trace, torch_ref(torch.trace), [r(3, 4)]),
    OpCase("diag_vector", lambda v: wg.diag(v, 1), torch_ref(lambda v: torch.diag(v, 1)), [r(3)]),
    OpCase("diag_vector_below", lambda v: wg.diag(v, -2), torch_ref(lambda v: torch.diag(v, -2)), [r(3)]),
    OpCase("diag_matrix", lambda m: wg.diag(m, -1), torch_ref(lambda m: torch.diag(m, -1)), [r(4, 3)]),
    OpCase("cumprod", lambda x: wg.cumprod(x, 1), torch_ref(lambda x: torch.cumprod(x, 1)), [r(3, 9)]),
    OpCase("cumprod_zeros", lambda x: wg.cumprod(x, 0), torch_ref(lambda x: torch.cumprod(x, 0)),
           [np.array([[1.5, 0.0], [2.0, -1.0], [0.0, 3.0], [0.5, 2.0]])]),
    OpCase("cumprod_neg_dim", lambda x: x.cumprod(-1), torch_ref(lambda x: x.cumprod(-1)), [r(2, 3, 5)]),
    OpCase("diff", lambda x: wg.diff(x), torch_ref(torch.diff), [r(3, 6)]),
    OpCase("diff_n2_dim0", lambda x: wg.diff(x, n=2, dim=0), torch_ref(lambda x: torch.diff(x, n=2, dim=0)), [r(5, 3)]),
    OpCase("diff_prepend_append", lambda x, p, a: wg.diff(x, dim=1, prepend=p, append=a),
           torch_ref(lambda x, p, a: torch.diff(x, dim=1, prepend=p, append=a)), [r(2, 4), r(2, 1), r(2, 2)]),
    OpCase("var_mean", lambda x: wg.var_mean(x, 1), torch_ref(lambda x: torch.var_mean(x, 1)), [r(3, 5)]),
    OpCase("std_mean", lambda x: wg.std_mean(x, (0, 2), correction=0, keepdim=True),
           torch_ref(lambda x: torch.std_mean(x, (0, 2), correction=0, keepdim=True)), [r(3, 4, 5)]),
    OpCase("std_mean_all", lambda x: wg.std_mean(x), torch_ref(torch.std_mean), [r(4, 5)]),
    OpCase("aminmax", lambda x: wg.aminmax(x, dim=1), torch_ref(lambda x: torch.aminmax(x, dim=1)), [r(3, 5)],
           grad=False),
]
globals().update(op_tests(CASES))


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_scans_and_reductions_as_pytorch(dtype, backend):
    data = [[1, 0, 2], [3, 1, 1]] if dtype != "bool" else [[True, False, True], [True, True, False]]
    t, w = torch.tensor(data, dtype=getattr(torch, dtype)), wg.tensor(data, dtype=getattr(wg, dtype), device=backend)
    for fn in (lambda m, x: m.cumprod(x, 1), lambda m, x: m.diff(x, dim=1), lambda m, x: m.diag(x),
               lambda m, x: m.aminmax(x).max, lambda m, x: m.aminmax(x, dim=0).min):
        got, want = fn(wg, w), fn(torch, t)
        assert got.dtype.name == str(want.dtype)[6:] and got.tolist() == want.tolist()
    if dtype == "bool":
        with pytest.raises(NotImplementedError, match="trace"):
            wg.trace(w[:, :2])
    else:
        assert wg.trace(w[:, :2]).tolist() == torch.trace(t[:, :2]).tolist()


def test_aminmax_named_tuple_and_keepdim(backend):
    x = wg.tensor([[3.0, -1.0], [2.0, 5.0]], device=backend)
    mn, mx = wg.aminmax(x, dim=0, keepdim=True)
    want = torch.aminmax(torch.tensor([[3.0, -1.0], [2.0, 5.0]]), dim=0, keepdim=True)
    assert mn.tolist() == want.min.tolist() and x.aminmax(dim=0, keepdim=True).max.tolist() == want.max.tolist()


def test_cumprod_long_and_with_nan(backend):
    x = [1.01] * 300 + [math.nan, 2.0]
    got = wg.cumprod(wg.tensor(x, device=backend), 0).numpy()
    want = torch.cumprod(torch.tensor(x), 0).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-5, equal_nan=True)


def test_cumprod_dtype_argument(backend):
    got = wg.tensor([1, 2, 3], device=backend).cumprod(0, dtype=wg.float32)
    assert got.dtype == wg.float32 and got.tolist() == [1.0, 2.0, 6.0]


def test_refusals():
    with pytest.raises(ValueError, match="addmv"):
        wg.addmv(wg.ones(2), wg.ones(2), wg.ones(2))
    with pytest.raises(ValueError, match="addmm"):
        wg.addmm(wg.ones(4), wg.ones(2, 3), wg.ones(3, 2))
    with pytest.raises(ValueError, match="inner"):
        wg.inner(wg.ones(2), wg.ones(3))
    with pytest.raises(ValueError, match="trace"):
        wg.trace(wg.ones(2))
    with pytest.raises(RuntimeError, match="diff"):
        wg.diff(wg.tensor(1.0))
    assert wg.diff(wg.arange(3), n=5).shape == torch.diff(torch.arange(3), n=5).shape


def test_beta_zero_ignores_nan_input_as_pytorch(backend):
    i = wg.full((2, 2), math.nan, device=backend)
    got = wg.addmm(i, wg.ones(2, 3, device=backend), wg.ones(3, 2, device=backend), beta=0)
    assert got.tolist() == torch.addmm(torch.full((2, 2), math.nan), torch.ones(2, 3), torch.ones(3, 2),
                                       beta=0).tolist()


def test_in_place_products(backend):
    t = wg.zeros(2, 2, device=backend)
    out = t.addmm_(wg.ones(2, 3, device=backend), wg.ones(3, 2, device=backend), alpha=0.5)
    assert out is t and t.tolist() == [[1.5, 1.5], [1.5, 1.5]]
    t = wg.ones(2, 3, device=backend)
    t.addr_(wg.tensor([1.0, 2.0], device=backend), wg.tensor([1.0, 0.0, -1.0], device=backend))
    assert t.tolist() == torch.ones(2, 3).addr_(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0, -1.0])).tolist()
