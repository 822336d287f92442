"""webgrad.linalg's norms and products (compositions of existing ops) against torch.linalg: values on
every backend, gradients by finite differences (float64, cpu), backends agreeing in float32 and
float16, and PyTorch's errors."""
import math
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests, torch_reference

L = wg.linalg
rng = np.random.default_rng(7)
M = rng.standard_normal((2, 3, 4))
SQ = rng.standard_normal((2, 3, 3))
V3 = rng.standard_normal((4, 3))
W3 = rng.standard_normal((1, 3))


def _case(name, fn, ref, *inputs, **kw):
    return OpCase(name, fn, torch_reference(ref) if ref else None, inputs, **kw)


CASES = [
    _case("vector_norm", L.vector_norm, torch.linalg.vector_norm, M),
    _case("vector_norm_3_dim", lambda x: L.vector_norm(x, 3, dim=(0, 2), keepdim=True),
          lambda x: torch.linalg.vector_norm(x, 3, dim=(0, 2), keepdim=True), M),
    _case("vector_norm_inf", lambda x: L.vector_norm(x, math.inf, dim=-1),
          lambda x: torch.linalg.vector_norm(x, math.inf, dim=-1), M),
    _case("vector_norm_1", lambda x: L.vector_norm(x, 1, dim=1), lambda x: torch.linalg.vector_norm(x, 1, dim=1), M),
    *[_case(f"matrix_norm_{o}", lambda x, o=o: L.matrix_norm(x, o), lambda x, o=o: torch.linalg.matrix_norm(x, o), M)
      for o in ("fro", 1, -1, math.inf, -math.inf)],
    _case("matrix_norm_dims_keepdim", lambda x: L.matrix_norm(x, 1, dim=(2, 0), keepdim=True),
          lambda x: torch.linalg.matrix_norm(x, 1, dim=(2, 0), keepdim=True), M),
    _case("norm_default", L.norm, torch.linalg.norm, M),
    _case("norm_matrix_inf", lambda x: L.norm(x[0], math.inf), lambda x: torch.linalg.norm(x[0], math.inf), M),
    _case("norm_vector_dim", lambda x: L.norm(x, 0.5, dim=1), lambda x: torch.linalg.norm(x, 0.5, dim=1), M + 5),
    _case("vecdot", lambda x, y: L.vecdot(x, y, dim=1), lambda x, y: torch.linalg.vecdot(x, y, dim=1), V3, W3),
    _case("cross", L.cross, torch.linalg.cross, V3, W3),
    _case("torch_cross_dim0", lambda x, y: wg.cross(x, y, dim=0), lambda x, y: torch.cross(x, y, dim=0), V3.T,
          V3.T[:, ::-1].copy()),
    _case("matrix_power_5", lambda x: L.matrix_power(x, 5), lambda x: torch.linalg.matrix_power(x, 5), SQ,
          rtol=1e-4),
    _case("matrix_power_2", lambda x: x.matrix_power(2), lambda x: x.matrix_power(2), SQ),
    _case("multi_dot", lambda a, b, c: L.multi_dot([a, b, c]), lambda a, b, c: torch.linalg.multi_dot([a, b, c]),
          M[0].T.copy(), SQ[0], M[1]),
    _case("multi_dot_vectors", lambda a, b, c: L.multi_dot([a, b, c]),
          lambda a, b, c: torch.linalg.multi_dot([a, b, c]), M[0, :, 0], M[1], M[0, 0]),
    _case("dist", lambda x, y: wg.dist(x, y, 3), lambda x, y: torch.dist(x, y, 3), V3, W3),
    _case("vdot", wg.vdot, torch.vdot, V3[0], W3[0]),
    _case("frobenius_norm", lambda x: wg.frobenius_norm(x, (0, 1)),
          lambda x: torch.linalg.matrix_norm(x, dim=(0, 1)), M),
]
globals().update(op_tests(CASES))


def test_matrix_power_zero_and_one_are_identity_and_copy(backend):
    A = wg.tensor(SQ, dtype=wg.float32)
    np.testing.assert_array_equal(L.matrix_power(A, 0).numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))
    one = L.matrix_power(A, 1)
    assert one is not A and np.array_equal(one.numpy(), A.numpy())


def test_matrix_power_on_integers_as_torch(backend):
    got = L.matrix_power(wg.tensor([[1, 1], [1, 0]]), 10)
    assert got.dtype is wg.int64 and got.tolist() == torch.linalg.matrix_power(torch.tensor([[1, 1], [1, 0]]),
                                                                               10).tolist()


def test_multi_dot_order_is_the_cheapest():
    from webgrad.linalg.products import _chain_order
    split = _chain_order([10, 100, 5, 50])   # (AB)C costs 7500, A(BC) 75000
    assert split[0][2] == 1


def test_torch_cross_without_dim_warns_and_takes_the_first_dim_of_size_3():
    x, y = wg.tensor(V3.T.copy()), wg.tensor(V3.T[::-1].copy())
    with pytest.warns(UserWarning, match="without specifying the dim"):
        got = wg.cross(x, y)
    want = torch.cross(torch.tensor(V3.T.copy()), torch.tensor(V3.T[::-1].copy()), dim=0)
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_chain_matmul_warns_once_and_multiplies():
    from webgrad.linalg.errors import DEPRECATION_WARNED
    DEPRECATION_WARNED.discard("chain_matmul")
    with pytest.warns(UserWarning, match="deprecated"):
        got = wg.chain_matmul(wg.ones(2, 3), wg.ones(3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wg.chain_matmul(wg.ones(2, 3), wg.ones(3, 4))
    assert got.tolist() == [[3.0] * 4] * 2


ERRORS = [
    (lambda: L.vector_norm(wg.tensor([1, 2])), RuntimeError, "floating point"),
    (lambda: L.vector_norm(wg.ones(2), "fro"), TypeError, "ord"),
    (lambda: L.matrix_norm(wg.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda: L.matrix_norm(wg.ones(2, 2), 3), RuntimeError, "Order 3 not supported"),
    (lambda: L.norm(wg.ones(2, 2, 2), 2), RuntimeError, "must be 1D or 2D"),
    (lambda: L.cross(wg.ones(2), wg.ones(2)), RuntimeError, "length 3"),
    (lambda: L.vecdot(wg.ones(3), wg.ones(3, dtype=wg.float64)), RuntimeError, "same dtype"),
    (lambda: L.multi_dot([wg.ones(2, 2)]), RuntimeError, "at least 2"),
    (lambda: L.multi_dot([wg.ones(2, 3), wg.ones(2, 3)]), RuntimeError, "cannot be multiplied"),
    (lambda: L.matrix_power(wg.ones(2, 3), 2), RuntimeError, "square"),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_are_pytorchs(k):
    call, kind, words = ERRORS[k]
    with pytest.raises(kind, match=words):
        call()


TORCH_ERRORS = [
    lambda m: m.linalg.vector_norm(m.tensor([1, 2])),
    lambda m: m.linalg.matrix_norm(m.ones(3)),
    lambda m: m.linalg.matrix_norm(m.ones(2, 2), 3),
    lambda m: m.linalg.norm(m.ones(2, 2, 2), 2),
    lambda m: m.linalg.cross(m.ones(2), m.ones(2)),
    lambda m: m.linalg.multi_dot([m.ones(2, 2)]),
]


@pytest.mark.parametrize("k", range(len(TORCH_ERRORS)))
def test_error_types_match_torch(k):
    with pytest.raises(Exception) as theirs:
        TORCH_ERRORS[k](torch)
    with pytest.raises(type(theirs.value)):
        TORCH_ERRORS[k](wg)
