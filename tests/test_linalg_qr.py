"""QR (the Geqrf and HouseholderProduct kernels; linalg.qr, torch.qr, geqrf, orgqr, ormqr,
householder_product) and nn.init.orthogonal_ against torch: values on every backend, gradients by
finite differences and second order (float64, cpu), backends agreeing in float32, PyTorch's errors,
and orthogonal_'s numbers after manual_seed."""
import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests
from test_linalg_lu import torch_ref

L = wg.linalg
rng = np.random.default_rng(5)
TALL = rng.standard_normal((2, 4, 3))
WIDE = rng.standard_normal((3, 5))
SQUARE = rng.standard_normal((3, 3))
OTHER = rng.standard_normal((4, 2))


def _case(name, fn, *inputs, **kw):
    return OpCase(name, lambda *ts: fn(wg, *ts), torch_ref(lambda *ts: fn(torch, *ts)), inputs, **kw)


CASES = [
    _case("qr_tall", lambda m, a: tuple(m.linalg.qr(a)), TALL),
    _case("qr_tall_q", lambda m, a: m.linalg.qr(a).Q, TALL[0], second_order=True),
    _case("qr_wide", lambda m, a: tuple(m.linalg.qr(a)), WIDE),
    _case("qr_square_complete", lambda m, a: tuple(m.linalg.qr(a, "complete")), SQUARE),
    _case("qr_wide_complete", lambda m, a: tuple(m.linalg.qr(a, mode="complete")), WIDE),
    _case("torch_qr", lambda m, a: tuple(m.qr(a)), TALL),
    OpCase("qr_tall_complete", lambda a: tuple(L.qr(a, "complete")),
           torch_ref(lambda a: tuple(torch.linalg.qr(a, "complete"))), [TALL], grad=False),
    OpCase("qr_r", lambda a: L.qr(a, "r").R, torch_ref(lambda a: torch.linalg.qr(a, "r").R), [TALL], grad=False),
    OpCase("geqrf", lambda a: tuple(wg.geqrf(a)), torch_ref(lambda a: tuple(torch.geqrf(a))), [TALL], grad=False),
    OpCase("householder_product", lambda a: L.householder_product(*wg.geqrf(a)),
           torch_ref(lambda a: torch.linalg.householder_product(*torch.geqrf(a))), [TALL], grad=False),
    OpCase("orgqr", lambda a: wg.orgqr(*wg.geqrf(a)), torch_ref(lambda a: torch.orgqr(*torch.geqrf(a))), [SQUARE],
           grad=False),
    *[OpCase(f"ormqr_left{left}_transpose{tr}",
             lambda a, c, left=left, tr=tr: wg.ormqr(*wg.geqrf(a), c if left else c.mT, left=left, transpose=tr),
             torch_ref(lambda a, c, left=left, tr=tr: torch.ormqr(*torch.geqrf(a), c if left else c.mT, left=left,
                                                                  transpose=tr)), [TALL[0], OTHER], grad=False)
      for left in (True, False) for tr in (False, True)],
]
_TESTS = op_tests(CASES)
del _TESTS["test_half_agreement"]   # factorizations take float32 and float64, as PyTorch's on the CPU
globals().update(_TESTS)


@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (3, 7), (2, 30, 30)])
def test_sizes_match_torch(backend, shape):
    a = rng.standard_normal(shape).astype(np.float32)
    q, r = L.qr(wg.tensor(a))
    tq, tr = torch.linalg.qr(torch.tensor(a))
    np.testing.assert_allclose(q.numpy(), tq.numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(r.numpy(), tr.numpy(), rtol=1e-3, atol=1e-4)


def test_return_types_and_modes():
    a = wg.tensor(TALL)
    assert type(L.qr(a)).__name__ == "linalg_qr" and L.qr(a)._fields == ("Q", "R")
    with pytest.warns(UserWarning, match="deprecated"):
        from webgrad.linalg.errors import DEPRECATION_WARNED
        DEPRECATION_WARNED.discard("qr")
        assert type(wg.qr(a)).__name__ == "qr"
    assert tuple(L.qr(a, "r").Q.shape) == tuple(torch.linalg.qr(torch.tensor(TALL), "r").Q.shape) == (0,)
    assert type(wg.geqrf(a)).__name__ == "geqrf" and wg.geqrf(a)._fields == ("a", "tau")


def test_backward_of_mode_r_and_tall_complete_raise_as_torch():
    for mode in ("r", "complete"):
        a = wg.tensor(TALL, requires_grad=True)
        with pytest.raises(RuntimeError, match="differentiable|depends on Q"):
            L.qr(a, mode).R.sum().backward()
        t = torch.tensor(TALL, requires_grad=True)
        with pytest.raises(RuntimeError):
            torch.linalg.qr(t, mode).R.sum().backward()


def test_bad_input_raises_torchs_error_types():
    for call in (lambda m: m.linalg.qr(m.ones(2, 2), "full"), lambda m: m.linalg.qr(m.ones(3)),
                 lambda m: m.linalg.householder_product(m.ones(2, 3), m.ones(2)),
                 lambda m: m.linalg.householder_product(m.ones(3, 2), m.ones(3))):
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value)):
            call(wg)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3), (6, 6)])
def test_orthogonal_gives_pytorchs_numbers_after_manual_seed(backend, shape):
    wg.manual_seed(7)
    torch.manual_seed(7)
    got = wg.nn.init.orthogonal_(wg.empty(*shape), gain=1.5)
    want = torch.nn.init.orthogonal_(torch.empty(*shape), gain=1.5)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    g, tg = wg.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    np.testing.assert_allclose(wg.nn.init.orthogonal_(wg.empty(*shape), generator=g).numpy(),
                               torch.nn.init.orthogonal_(torch.empty(*shape), generator=tg).numpy(), rtol=1e-4,
                               atol=1e-5)


def test_orthogonal_errors_and_empty_as_torch():
    with pytest.raises(ValueError, match="2 or more dimensions"):
        wg.nn.init.orthogonal_(wg.empty(3))
    w = wg.empty(0, 3)
    assert wg.nn.init.orthogonal_(w) is w
    p = wg.nn.Parameter(wg.empty(2, 2))
    wg.nn.init.orthogonal_(p)
    assert p.requires_grad and p.grad_fn is None
