"""LU-based linear algebra (the LuFactor and TriangularSolve kernels and the ops around them) against
torch.linalg: values on every backend, gradients by finite differences (float64, cpu) and second
order where composed, backends agreeing in float32, PyTorch's return types and errors."""
import re

import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests

L = wg.linalg
rng = np.random.default_rng(3)


def well_conditioned(*batch, n=3):
    """Matrices whose LU swaps rows (a row permutation of a diagonally heavy matrix)."""
    a = rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)
    return a[..., rng.permutation(n), :]


A = well_conditioned(2)
A4 = well_conditioned(n=4)
B = rng.standard_normal((2, 3, 2))
VEC = rng.standard_normal((2, 3))
UPPER = np.triu(A[0]) + 2 * np.eye(3)


def torch_ref(fn):
    """A numpy reference calling PyTorch's ``fn`` (one tensor or a tuple of them)."""
    def ref(*arrays):
        out = fn(*[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays])
        return tuple(o.numpy() for o in out) if isinstance(out, tuple) else out.numpy()
    return ref


def _case(name, fn, ref, *inputs, **kw):
    return OpCase(name, fn, torch_ref(ref), inputs, **kw)


CASES = [
    _case("det", L.det, torch.linalg.det, A, second_order=True),
    _case("torch_det", wg.det, torch.det, A4),
    _case("slogdet", L.slogdet, lambda x: tuple(torch.linalg.slogdet(x)), A),
    _case("logdet", wg.logdet, torch.logdet, A @ A.transpose(0, 2, 1)),
    _case("inv", L.inv, torch.linalg.inv, A, second_order=True),
    _case("torch_inverse", wg.inverse, torch.inverse, A4),
    _case("inv_ex", lambda x: L.inv_ex(x).inverse, lambda x: torch.linalg.inv_ex(x).inverse, A4),
    _case("solve", L.solve, torch.linalg.solve, A, B, second_order=True),
    _case("solve_vector", L.solve, torch.linalg.solve, A, VEC),
    _case("solve_broadcast", L.solve, torch.linalg.solve, A[:1], B),
    _case("solve_right", lambda a, b: L.solve(a, b, left=False), lambda a, b: torch.linalg.solve(a, b, left=False),
          A, B.transpose(0, 2, 1).copy()),
    _case("lu_factor", lambda x: L.lu_factor(x).LU, lambda x: torch.linalg.lu_factor(x).LU, A),
    _case("lu", lambda x: tuple(L.lu(x)), lambda x: tuple(torch.linalg.lu(x)), A),
    *[_case(f"lu_solve_left{left}_adjoint{adj}",
            lambda a, b, left=left, adj=adj: L.lu_solve(*L.lu_factor(a), b if left else b.mT, left=left, adjoint=adj),
            lambda a, b, left=left, adj=adj: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b if left else b.mT,
                                                                   left=left, adjoint=adj), A, B)
      for left in (True, False) for adj in (False, True)],
    *[_case(f"solve_triangular_upper{up}_left{left}_unit{unit}",
            lambda a, b, up=up, left=left, unit=unit: L.solve_triangular(a, b if left else b.mT, upper=up, left=left,
                                                                         unitriangular=unit),
            lambda a, b, up=up, left=left, unit=unit: torch.linalg.solve_triangular(
                a, b if left else b.mT, upper=up, left=left, unitriangular=unit),
            A + 2 * np.eye(3) * np.sign(np.diagonal(A, 0, 1, 2))[..., None], B)
      for up in (True, False) for left in (True, False) for unit in (False, True)],
    _case("torch_triangular_solve", lambda b, a: tuple(wg.triangular_solve(b, a, transpose=True)),
          lambda b, a: tuple(torch.triangular_solve(b, a, transpose=True)), B[0], UPPER),
    _case("torch_lu_solve", lambda a, b: wg.lu_solve(b, *wg.lu(a)), lambda a, b: torch.lu_solve(b, *torch.lu(a)),
          A, B),
    _case("lu_unpack", lambda a: tuple(wg.lu_unpack(*L.lu_factor(a))),
          lambda a: tuple(torch.lu_unpack(*torch.linalg.lu_factor(a))), A4),
]
_TESTS = op_tests(CASES)
del _TESTS["test_half_agreement"]   # factorizations take float32 and float64 (as PyTorch's on the CPU): see below
globals().update(_TESTS)


@pytest.mark.parametrize("n", [1, 5, 17, 70])
def test_values_match_torch_at_sizes_and_batches(backend, n):
    a = rng.standard_normal((2, 1, n, n)).astype(np.float32)
    b = rng.standard_normal((3, n, 2)).astype(np.float32)
    ta, tb = torch.tensor(a), torch.tensor(b)
    x, y = wg.tensor(a), wg.tensor(b)
    LU, pivots = L.lu_factor(x)
    assert pivots.dtype is wg.int32 and pivots.tolist() == torch.linalg.lu_factor(ta).pivots.tolist()
    tol = dict(rtol=1e-3, atol=1e-3 * n)
    np.testing.assert_allclose(LU.numpy(), torch.linalg.lu_factor(ta).LU.numpy(), **tol)
    np.testing.assert_allclose(L.solve(x, y).numpy(), torch.linalg.solve(ta, tb).numpy(), **tol)
    np.testing.assert_allclose(L.slogdet(x).logabsdet.numpy(), torch.linalg.slogdet(ta).logabsdet.numpy(), **tol)
    np.testing.assert_array_equal(L.slogdet(x).sign.numpy(), torch.linalg.slogdet(ta).sign.numpy())


def test_return_types_are_pytorchs():
    a = wg.tensor(A)
    t = torch.tensor(A)
    for got, want in [(L.slogdet(a), torch.linalg.slogdet(t)), (wg.slogdet(a), torch.slogdet(t)),
                      (L.inv_ex(a), torch.linalg.inv_ex(torch.tensor(A))),
                      (L.solve_ex(a, wg.tensor(B)), torch.linalg.solve_ex(torch.tensor(A), torch.tensor(B))),
                      (L.lu_factor(a), torch.linalg.lu_factor(torch.tensor(A))),
                      (L.lu_factor_ex(a), torch.linalg.lu_factor_ex(torch.tensor(A))),
                      (L.lu(a), torch.linalg.lu(torch.tensor(A)))]:
        assert type(got).__name__ == type(want).__name__
        assert list(got._fields) == re.findall(r"^(\w+)=", repr(want), re.M)
        assert all(getattr(got, f) is got[i] for i, f in enumerate(got._fields))


def test_info_and_dtypes_as_torch(backend):
    a = torch.tensor([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    got = L.lu_factor_ex(wg.tensor(a.numpy()))
    want = torch.linalg.lu_factor_ex(a)
    assert got.info.dtype is wg.int32 and got.info.tolist() == want.info.tolist()
    assert L.inv_ex(wg.tensor(a.numpy())).info.tolist() == torch.linalg.inv_ex(a).info.tolist()
    assert L.det(wg.tensor(a.numpy())).tolist() == [0.0, 1.0]
    sign, logabsdet = L.slogdet(wg.tensor(a.numpy()))
    assert sign.tolist() == [0.0, 1.0] and logabsdet.tolist()[0] == -np.inf


SINGULAR = [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]


@pytest.mark.parametrize("call", ["inv", "solve", "inverse", "lu_factor_ex", "lu_factor"])
def test_singular_input_raises_as_torch(backend, call):
    calls = {"inv": lambda m, a: m.linalg.inv(a), "solve": lambda m, a: m.linalg.solve(a, a),
             "inverse": lambda m, a: m.inverse(a),
             "lu_factor_ex": lambda m, a: m.linalg.lu_factor_ex(a, check_errors=True),
             "lu_factor": lambda m, a: m.linalg.lu_factor(a)}
    with pytest.raises(RuntimeError) as theirs:
        calls[call](torch, torch.tensor(SINGULAR))
    want = L.LinAlgError if isinstance(theirs.value, torch.linalg.LinAlgError) else RuntimeError
    with pytest.raises(want, match="Batch element 1") as ours:
        calls[call](wg, wg.tensor(SINGULAR))
    assert isinstance(ours.value, L.LinAlgError) == isinstance(theirs.value, torch.linalg.LinAlgError)


def test_torch_lu_of_a_singular_matrix_gives_its_infos_as_torch():
    _, _, infos = wg.lu(wg.tensor(SINGULAR), get_infos=True)
    assert infos.tolist() == torch.lu(torch.tensor(SINGULAR), get_infos=True)[2].tolist() == [0, 2]
    assert len(wg.lu(wg.tensor(SINGULAR))) == 2


def test_linalg_error_is_a_runtime_error_and_named_as_torch():
    assert issubclass(L.LinAlgError, RuntimeError)
    with pytest.raises(L.LinAlgError, match="linalg.inv.*singular"):
        L.inv(wg.zeros(2, 2))


BAD = [
    (lambda m: m.linalg.det(m.ones(2, 3)), "square"),
    (lambda m: m.linalg.det(m.ones(3)), "at least 2 dimensions"),
    (lambda m: m.linalg.det(m.ones(2, 2, dtype=m.int64)), "floating point"),
    (lambda m: m.linalg.det(m.ones(2, 2, dtype=m.float16)), "float16|Half"),
    (lambda m: m.linalg.solve(m.ones(2, 2), m.ones(3, 1)), "Incompatible shapes"),
    (lambda m: m.linalg.solve(m.eye(2), m.ones(2, 1, dtype=m.float64)), "dtype"),
    (lambda m: m.linalg.lu_factor(m.eye(2), pivot=False), "pivot"),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_bad_input_raises_torchs_error_type(k):
    call, words = BAD[k]
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value), match=words):
        call(wg)


def test_empty_matrices_as_torch(backend):
    assert L.det(wg.zeros(0, 0)).item() == torch.linalg.det(torch.zeros(0, 0)).item() == 1.0
    assert L.inv(wg.zeros(2, 0, 0)).shape == (2, 0, 0)
    assert L.solve(wg.zeros(0, 0), wg.zeros(0, 3)).shape == (0, 3)


def test_lu_unpack_of_a_wide_factorization_matches_torch():
    a = torch.tensor(rng.standard_normal((3, 5)))
    LU, piv = torch.linalg.lu_factor_ex(a)[:2]
    got = wg.lu_unpack(wg.tensor(LU.numpy()), wg.tensor(piv.numpy()))
    for g, w in zip(got, torch.lu_unpack(LU, piv)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-12)


def test_tensor_methods(backend):
    a = wg.tensor(A4.astype(np.float32))
    t = torch.tensor(A4.astype(np.float32))
    for name in ("det", "logdet", "inverse"):
        np.testing.assert_allclose(getattr(a, name)().numpy(), getattr(t, name)().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(a.slogdet().logabsdet.numpy(), t.slogdet().logabsdet.numpy(), rtol=1e-5)
