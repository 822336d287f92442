"""linalg.matrix_exp, vander, tensorinv, tensorsolve and torch.kron (compositions) against torch: values on
every backend, gradients by finite differences (float64, cpu), backends agreeing in float32 (and float16
for the compositions without a factorization); and the names refused with their reasons."""
import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests
from test_linalg_lu import torch_ref

L = wg.linalg
rng = np.random.default_rng(17)


def _case(name, fn, *inputs, **kw):
    return OpCase(name, lambda *ts: fn(wg, *ts), torch_ref(lambda *ts: fn(torch, *ts)), inputs, **kw)


COMPOSED = [
    _case("vander", lambda m, x: m.linalg.vander(x), rng.standard_normal((2, 4))),
    _case("vander_N", lambda m, x: m.linalg.vander(x, N=5), rng.standard_normal(3)),
    _case("kron", lambda m, a, b: m.kron(a, b), rng.standard_normal((2, 3)), rng.standard_normal((2, 1, 2))),
    _case("tensor_kron", lambda m, a, b: a.kron(b), rng.standard_normal(3), rng.standard_normal(2)),
]
FACTORED = [
    _case("matrix_exp", lambda m, a: m.linalg.matrix_exp(a), rng.standard_normal((2, 3, 3)), rtol=1e-4,
          second_order=True),
    _case("matrix_exp_large_norm", lambda m, a: m.matrix_exp(a), 3 * rng.standard_normal((3, 3)), rtol=1e-4),
    _case("tensorinv", lambda m, a: m.linalg.tensorinv(a, ind=1), rng.standard_normal((6, 2, 3)) + 3 * np.eye(6)
          .reshape(6, 2, 3)),
    _case("tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a, b), rng.standard_normal((2, 3, 6)) + 3 * np.eye(6)
          .reshape(2, 3, 6), rng.standard_normal((2, 3))),
    _case("tensorsolve_dims", lambda m, a, b: m.linalg.tensorsolve(a, b, dims=(0,)),
          (rng.standard_normal((2, 3, 6)) + 3 * np.eye(6).reshape(2, 3, 6)).transpose(2, 0, 1).copy(),
          rng.standard_normal((2, 3))),
]
_TESTS = op_tests(COMPOSED)
globals().update({f"{name}_composed": fn for name, fn in _TESTS.items()})
_TESTS = op_tests(FACTORED)
del _TESTS["test_half_agreement"]   # inverse and solve take float32 and float64, as PyTorch's on the CPU
globals().update({f"{name}_factored": fn for name, fn in _TESTS.items()})


def test_vander_of_integers_and_edge_sizes_as_torch(backend):
    for x, n in (([1, 2, 3], None), ([2, 3], 2)):
        got, want = L.vander(wg.tensor(x), N=n), torch.linalg.vander(torch.tensor(x), N=n)
        assert got.dtype is wg.int64 and got.tolist() == want.tolist()
    for x, n in (([2, 3], 0), ([2, 3], 1), ([5], None)):
        with pytest.raises(RuntimeError, match="greater than 1"):
            torch.linalg.vander(torch.tensor(x), N=n)
        with pytest.raises(RuntimeError, match="greater than 1"):
            L.vander(wg.tensor(x), N=n)


def test_matrix_exp_of_large_and_zero_matrices(backend):
    a = 10 * rng.standard_normal((4, 4)).astype(np.float32) / 4
    want = torch.linalg.matrix_exp(torch.tensor(a)).numpy()
    np.testing.assert_allclose(L.matrix_exp(wg.tensor(a)).numpy(), want, rtol=2e-4, atol=2e-4 * np.abs(want).max())
    assert L.matrix_exp(wg.zeros(2, 2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize("owner,name", [("linalg", "eig"), ("linalg", "eigvals"), ("", "eig"), ("", "symeig"),
                                        ("", "lstsq"), ("", "matrix_rank")])
def test_refused_names_say_why(owner, name):
    with pytest.raises(AttributeError, match="complex|removed from PyTorch"):
        getattr(wg.linalg if owner else wg, name)


def test_errors_match_torch_types():
    for call in (lambda m: m.linalg.tensorinv(m.ones(6, 4, 2, 3)), lambda m: m.linalg.matrix_exp(m.ones(2, 3)),
                 lambda m: m.linalg.vander(m.tensor(1.0))):
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value)):
            call(wg)


NODE_NAMES = {
    "det": lambda m, a, s, b: m.linalg.det(a), "slogdet": lambda m, a, s, b: m.linalg.slogdet(a)[1],
    "inv": lambda m, a, s, b: m.linalg.inv(a), "solve": lambda m, a, s, b: m.linalg.solve(a, b),
    "lu_factor": lambda m, a, s, b: m.linalg.lu_factor(a)[0], "lu": lambda m, a, s, b: m.linalg.lu(a)[1],
    "solve_triangular": lambda m, a, s, b: m.linalg.solve_triangular(a, b, upper=True),
    "cholesky": lambda m, a, s, b: m.linalg.cholesky(s), "cholesky_upper": lambda m, a, s, b: m.linalg.cholesky(
        s, upper=True), "qr": lambda m, a, s, b: m.linalg.qr(a)[0], "svd": lambda m, a, s, b: m.linalg.svd(a)[0],
    "svdvals": lambda m, a, s, b: m.linalg.svdvals(a), "eigh": lambda m, a, s, b: m.linalg.eigh(s)[0],
    "pinv": lambda m, a, s, b: m.linalg.pinv(a), "matrix_exp": lambda m, a, s, b: m.linalg.matrix_exp(a),
    "cross": lambda m, a, s, b: m.linalg.cross(a, a),
    "lu_solve": lambda m, a, s, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
}


@pytest.mark.parametrize("name", sorted(NODE_NAMES))
def test_backward_nodes_carry_pytorchs_names(name):
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    s, b = a @ a.T, rng.standard_normal((3, 2))
    got = NODE_NAMES[name](wg, wg.tensor(a, requires_grad=True), wg.tensor(s, requires_grad=True), wg.tensor(b))
    want = NODE_NAMES[name](torch, torch.tensor(a, requires_grad=True), torch.tensor(s, requires_grad=True),
                            torch.tensor(b))
    assert got.grad_fn.name() == want.grad_fn.name()


def test_a_matrix_past_the_gpu_loop_limit_is_refused_there_and_factored_on_cpu(backend):
    """Some devices stop a shader's loops after 65,535 trips: on a GPU backend a matrix needing more is
    refused, saying so; cpu factors it."""
    a = wg.ones(70000, 2)
    a[:, 1] = wg.arange(70000.0)
    if backend == "cpu":
        q, r = wg.linalg.qr(a)
        assert q.shape == (70000, 2) and r.shape == (2, 2)
        return
    from webgrad.backends.gpu.device import GpuLimitError
    with pytest.raises(GpuLimitError, match="70000, 2.*cpu backend"):
        wg.linalg.qr(a)
