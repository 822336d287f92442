"""Cholesky-based linear algebra (the Cholesky kernel, and TriangularSolve around it) against torch:
values on every backend, gradients by finite differences and second order (float64, cpu), backends
agreeing in float32, info and PyTorch's LinAlgError for an input that is not positive-definite."""
import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests
from test_linalg_lu import torch_ref

L = wg.linalg
rng = np.random.default_rng(11)
X = rng.standard_normal((2, 3, 3))
B = rng.standard_normal((2, 3, 2))


def spd(m, x):
    """A symmetric positive-definite matrix made from any x (so that finite differences stay symmetric)."""
    return x @ x.mT + m.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def _case(name, fn, *inputs, **kw):
    return OpCase(name, lambda *ts: fn(wg, *ts), torch_ref(lambda *ts: fn(torch, *ts)), inputs, **kw)


CASES = [
    _case("cholesky", lambda m, x: m.linalg.cholesky(spd(m, x)), X, second_order=True),
    _case("cholesky_upper", lambda m, x: m.linalg.cholesky(spd(m, x), upper=True), X),
    _case("cholesky_ex", lambda m, x: m.linalg.cholesky_ex(spd(m, x)).L, X[0]),
    _case("cholesky_solve", lambda m, x, b: m.cholesky_solve(b, m.linalg.cholesky(spd(m, x))), X, B),
    _case("cholesky_solve_upper_broadcast", lambda m, x, b: m.cholesky_solve(b, m.linalg.cholesky(spd(m, x[:1]))
                                                                            .mT, upper=True), X, B),
    _case("cholesky_inverse", lambda m, x: m.cholesky_inverse(m.linalg.cholesky(spd(m, x))), X),
    _case("cholesky_inverse_upper", lambda m, x: m.cholesky_inverse(m.linalg.cholesky(spd(m, x), upper=True),
                                                                    upper=True), X[0]),
]
_TESTS = op_tests(CASES)
del _TESTS["test_half_agreement"]   # factorizations take float32 and float64, as PyTorch's on the CPU
globals().update(_TESTS)

NOT_PD = [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]]


def test_info_as_torch(backend):
    got = L.cholesky_ex(wg.tensor(NOT_PD))
    assert got.info.dtype is wg.int32
    assert got.info.tolist() == torch.linalg.cholesky_ex(torch.tensor(NOT_PD)).info.tolist() == [0, 2, 1]


def test_not_positive_definite_raises_linalg_error_as_torch(backend):
    with pytest.raises(torch.linalg.LinAlgError, match="order 2"):
        torch.linalg.cholesky(torch.tensor(NOT_PD[:2]))
    with pytest.raises(L.LinAlgError, match=r"linalg.cholesky: \(Batch element 1\).*order 2 is not positive-definite"):
        L.cholesky(wg.tensor(NOT_PD[:2]))
    with pytest.raises(L.LinAlgError):
        L.cholesky_ex(wg.tensor(NOT_PD), check_errors=True)


@pytest.mark.parametrize("n", [1, 6, 40])
def test_sizes_match_torch(backend, n):
    x = rng.standard_normal((3, n, n)).astype(np.float32)
    a = x @ x.transpose(0, 2, 1) + n * np.eye(n, dtype=np.float32)
    np.testing.assert_allclose(L.cholesky(wg.tensor(a)).numpy(), torch.linalg.cholesky(torch.tensor(a)).numpy(),
                               rtol=1e-4, atol=1e-4)


def test_only_the_lower_triangle_is_read(backend):
    a = np.array([[4.0, 99.0], [2.0, 5.0]], dtype=np.float32)
    assert L.cholesky(wg.tensor(a)).tolist() == torch.linalg.cholesky(torch.tensor(a)).tolist()


def test_torch_cholesky_warns_once_and_takes_upper():
    from webgrad.linalg.errors import DEPRECATION_WARNED
    DEPRECATION_WARNED.discard("cholesky")
    with pytest.warns(UserWarning, match="deprecated"):
        got = wg.cholesky(wg.tensor([[4.0, 2.0], [2.0, 5.0]]), True)
    assert got.tolist() == [[2.0, 1.0], [0.0, 2.0]]


def test_errors_match_torch_types():
    for call in (lambda m: m.linalg.cholesky(m.ones(2, 3)), lambda m: m.linalg.cholesky(m.ones(2, 2, dtype=m.int64)),
                 lambda m: m.cholesky_solve(m.ones(3, 1), m.eye(2))):
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value)):
            call(wg)
