"""Spectral linear algebra (the Svd and Eigh kernels; svd, svdvals, eigh, eigvalsh, pinv, matrix_rank,
cond, lstsq, matrix_norm's 2/-2/'nuc', torch.svd/pinverse/nuclear_norm) against torch: values on every
backend (singular and eigen-vectors compared up to sign, as they are unique only so), gradients by finite
differences and second order (float64, cpu), gradients equal to PyTorch's, backends agreeing in float32."""
import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests
from test_linalg_lu import torch_ref

L = wg.linalg
rng = np.random.default_rng(13)
TALL = rng.standard_normal((2, 4, 3))
WIDE = rng.standard_normal((3, 5))
SQUARE = rng.standard_normal((3, 3)) + 2 * np.eye(3)
B = rng.standard_normal((4, 2))


def aligned(u, s, vh):
    """The SVD with each singular pair's sign fixed (Vh's first column nonnegative): comparable across
    implementations, and differentiable."""
    sign = vh[..., :, :1].sign()
    return u * sign.mT, s, vh * sign


def aligned_eigh(w, v):
    return w, v * v[..., :1, :].sign()


def sym(x):
    return x + x.mT


def _case(name, fn, *inputs, **kw):
    return OpCase(name, lambda *ts: fn(wg, *ts), torch_ref(lambda *ts: fn(torch, *ts)), inputs, **kw)


CASES = [
    *[_case(f"svd_{name}", lambda m, a: aligned(*m.linalg.svd(a, full_matrices=False)), a)
      for name, a in (("tall", TALL), ("wide", WIDE), ("square", SQUARE))],
    _case("svdvals", lambda m, a: m.linalg.svdvals(a), TALL, second_order=True),
    _case("torch_svd", lambda m, a: aligned(*(lambda u, s, v: (u, s, v.mT))(*m.svd(a))), TALL),
    _case("eigh", lambda m, a: aligned_eigh(*m.linalg.eigh(sym(a))), SQUARE),
    _case("eigh_upper", lambda m, a: aligned_eigh(*m.linalg.eigh(sym(a), UPLO="U")), SQUARE),
    _case("eigvalsh", lambda m, a: m.linalg.eigvalsh(sym(a)), TALL[:, :3], second_order=True),
    _case("pinv", lambda m, a: m.linalg.pinv(a), TALL),
    _case("pinv_hermitian", lambda m, a: m.linalg.pinv(sym(a), hermitian=True), SQUARE),
    _case("torch_pinverse", lambda m, a: m.pinverse(a), WIDE),
    _case("cond", lambda m, a: m.linalg.cond(a), SQUARE),
    _case("cond_fro", lambda m, a: m.linalg.cond(a, "fro"), SQUARE),
    _case("matrix_norm_nuc", lambda m, a: m.linalg.matrix_norm(a, "nuc"), TALL),
    _case("matrix_norm_2", lambda m, a: m.linalg.matrix_norm(a, 2), TALL),
    _case("matrix_norm_-2", lambda m, a: m.linalg.norm(a, -2, dim=(1, 0), keepdim=True), TALL[0]),
    _case("nuclear_norm", lambda m, a: m.nuclear_norm(a), WIDE),
    _case("lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution, TALL[0], B),
]
_TESTS = op_tests(CASES)
del _TESTS["test_half_agreement"]   # factorizations take float32 and float64, as PyTorch's on the CPU
globals().update(_TESTS)


@pytest.mark.parametrize("shape", [(1, 1), (5, 2), (2, 5), (3, 16, 16), (40, 12)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_shapes_and_factors_as_torch(backend, shape, full):
    a = rng.standard_normal(shape).astype(np.float32)
    u, s, vh = L.svd(wg.tensor(a), full_matrices=full)
    tu, ts, tvh = torch.linalg.svd(torch.tensor(a), full_matrices=full)
    assert u.shape == tu.shape and s.shape == ts.shape and vh.shape == tvh.shape
    np.testing.assert_allclose(s.numpy(), ts.numpy(), rtol=1e-4, atol=1e-5)
    k = s.shape[-1]
    np.testing.assert_allclose((u.numpy()[..., :k] * s.numpy()[..., None, :]) @ vh.numpy()[..., :k, :], a,
                               atol=2e-5 * max(shape))
    for q in (u.numpy(), vh.numpy().swapaxes(-1, -2)):
        np.testing.assert_allclose(q.swapaxes(-1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2]
                                                                         + (q.shape[-1],) * 2), atol=2e-5 * max(shape))


@pytest.mark.parametrize("n", [1, 4, 20])
def test_eigh_as_torch(backend, n):
    x = rng.standard_normal((2, n, n)).astype(np.float32)
    a = x + x.transpose(0, 2, 1)
    w, v = L.eigh(wg.tensor(a))
    tw, tv = torch.linalg.eigh(torch.tensor(a))
    np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-4, atol=1e-4 * n)
    np.testing.assert_allclose(np.abs((tv.numpy().swapaxes(-1, -2) @ v.numpy()).diagonal(0, -2, -1)), 1, atol=1e-3)


def test_gradients_equal_pytorchs():
    a = rng.standard_normal((4, 3))
    x, t = wg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    for fn in (lambda m, y: m.linalg.svdvals(y).sum() + m.linalg.pinv(y).square().sum(),
               lambda m, y: (lambda w, v: w[-1] + (v[:, :1] * v[:1, :1].sign()).sum())(*m.linalg.eigh(y.mT @ y))):
        x.grad = t.grad = None
        fn(wg, x).backward()
        fn(torch, t).backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-8)


def test_eigh_gradient_is_pytorchs_symmetric_one():
    a = sym(rng.standard_normal((3, 3)))
    x, t = wg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    L.eigvalsh(x)[-1].backward()
    torch.linalg.eigvalsh(t)[-1].backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-10)


def test_rank_lstsq_and_return_types_as_torch(backend):
    a = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 1.0]], dtype=np.float32)
    assert L.matrix_rank(wg.tensor(a)).item() == torch.linalg.matrix_rank(torch.tensor(a)).item() == 2
    assert L.matrix_rank(wg.tensor(a[:2])).dtype is wg.int64
    assert L.matrix_rank(wg.tensor(a[:2] @ a[:2].T), hermitian=True).item() == 1
    assert L.matrix_rank(wg.tensor(a), atol=10.0).item() == torch.linalg.matrix_rank(torch.tensor(a), atol=10.0).item()
    got, want = L.lstsq(wg.tensor(a), wg.ones(3, 1)), torch.linalg.lstsq(torch.tensor(a), torch.ones(3, 1))
    assert got._fields == ("solution", "residuals", "rank", "singular_values")
    assert got.rank.item() == want.rank.item() and got.residuals.shape == want.residuals.shape == (0,)
    np.testing.assert_allclose(got.solution.numpy(), want.solution.numpy(), rtol=1e-4, atol=1e-5)
    assert type(L.svd(wg.tensor(a))).__name__ == "linalg_svd" and L.svd(wg.tensor(a))._fields == ("U", "S", "Vh")
    assert type(wg.svd(wg.tensor(a))).__name__ == "svd" and wg.svd(wg.tensor(a))._fields == ("U", "S", "V")
    assert L.eigh(wg.eye(2))._fields == ("eigenvalues", "eigenvectors")


def test_torch_svd_without_uv_gives_zeros_as_torch():
    u, s, v = wg.svd(wg.tensor(WIDE), compute_uv=False)
    tu, ts, tv = torch.svd(torch.tensor(WIDE), compute_uv=False)
    assert u.shape == tu.shape and v.shape == tv.shape and not u.numpy().any() and not v.numpy().any()


def test_bad_input_raises_torchs_error_types():
    for call in (lambda m: m.linalg.svd(m.ones(2, 2), driver="gesvd"), lambda m: m.linalg.eigh(m.ones(2, 3)),
                 lambda m: m.linalg.eigh(m.eye(2), UPLO="X"), lambda m: m.linalg.svd(m.ones(3)),
                 lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(2, 1))):
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value)):
            call(wg)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3), (2, 0, 3), (3, 0)])
def test_empty_inputs_give_torchs_shapes(backend, shape):
    u, s, vh = L.svd(wg.zeros(*shape), full_matrices=False)
    tu, ts, tvh = torch.linalg.svd(torch.zeros(*shape), full_matrices=False)
    assert (u.shape, s.shape, vh.shape) == (tu.shape, ts.shape, tvh.shape)
    if shape[-1] == shape[-2]:
        w, v = L.eigh(wg.zeros(*shape))
        tw, tv = torch.linalg.eigh(torch.zeros(*shape))
        assert (w.shape, v.shape) == (tw.shape, tv.shape)
