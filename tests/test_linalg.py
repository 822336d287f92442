"""Linear algebra: matmul / @ (1-D operands, batching, batch broadcasting), dot, mm, bmm, outer, einsum."""
import numpy as np
import pytest

import webgrad as wg
from opinfo import OpCase, assert_close, gradcheck, op_tests

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def ein(eq):
    return lambda *xs: wg.einsum(eq, *xs), lambda *xs: np.einsum(eq, *xs)


CASES = [
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(3, 4), r(4, 2)], second_order=True),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(4), r(4)], second_order=True, id="matmul-1d-1d"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(3), r(2, 3, 4)], id="matmul-1d-3d"),
    OpCase("matmul", lambda a, b: wg.matmul(a, b), np.matmul, [r(2, 3, 4), r(4)], id="matmul-3d-1d"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(2, 1, 3, 2), r(3, 2, 4)], second_order=True,
           id="matmul-batch-broadcast"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(2, 3), r(4, 3, 2)], id="matmul-2d-batched"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(65, 33), r(33, 17)], grad=False, rtol=1e-4, atol=1e-4,
           id="matmul-65x33x17"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(3, 37, 29), r(1, 29, 41)], grad=False, rtol=1e-4,
           atol=1e-4, id="matmul-batched-odd"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(4, 1), r(1, 3)], second_order=True, id="matmul-k1"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(2, 1, 3, 1), r(3, 1, 4)], id="matmul-k1-batch-broadcast"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(0, 3), r(3, 2)], grad=False, id="matmul-empty-rows"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(2, 0), r(0, 3)], grad=False, id="matmul-empty-k"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(2, 3, 0), r(0, 4)], id="matmul-batched-2d-empty-k"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(2, 3, 4), r(4, 0)], id="matmul-batched-2d-empty-n"),
    OpCase("matmul", lambda a, b: a @ b, np.matmul, [r(2, 3, 4), r(4, 5)], second_order=True,
           id="matmul-batched-2d"),            # the cpu kernel folds the batch; b's gradient summed as made
    OpCase("linear", lambda x, w: wg.nn.functional.linear(x, w), lambda x, w: x @ w.T, [r(2, 1, 3, 4), r(5, 4)],
           second_order=True, id="linear-batched"),   # MatMul with transpose_b over a batch
    OpCase("dot", wg.dot, np.dot, [r(5), r(5)]),
    OpCase("mm", wg.mm, np.matmul, [r(2, 3), r(3, 5)]),
    OpCase("bmm", wg.bmm, np.matmul, [r(2, 2, 3), r(2, 3, 2)]),
    OpCase("outer", wg.outer, np.outer, [r(3), r(4)]),
    OpCase("einsum", *ein("ij,jk->ik"), [r(2, 3), r(3, 4)], id="einsum-ij,jk->ik"),
    OpCase("einsum", *ein("bij,bjk->bik"), [r(2, 2, 3), r(2, 3, 2)], id="einsum-bmm"),
    OpCase("einsum", *ein("ij->ji"), [r(2, 3)], id="einsum-transpose"),
    OpCase("einsum", *ein("ij->j"), [r(2, 3)], id="einsum-sum"),
    OpCase("einsum", *ein("i,i->"), [r(4), r(4)], id="einsum-dot"),
    OpCase("einsum", *ein("i,j->ij"), [r(3), r(2)], id="einsum-outer"),
    OpCase("einsum", *ein("bhqd,bhkd->bhqk"), [r(1, 2, 3, 2), r(1, 2, 2, 2)], id="einsum-attention"),
    OpCase("einsum", *ein("...ij,...jk->...ik"), [r(2, 1, 2, 3), r(3, 3, 2)], id="einsum-ellipsis-broadcast"),
    OpCase("einsum", *ein("ij,jk"), [r(2, 3), r(3, 2)], id="einsum-implicit"),
    OpCase("einsum", *ein("ba"), [r(2, 3)], id="einsum-implicit-transpose"),
    OpCase("einsum", *ein("ij,jk,kl->il"), [r(2, 3), r(3, 2), r(2, 2)], id="einsum-chain"),
    OpCase("einsum", *ein("ijk,ik->j"), [r(2, 3, 2), r(2, 2)], id="einsum-contract-two"),
    OpCase("einsum", *ein("bij,bjk->bik"), [r(5, 31, 19), r(5, 19, 23)], grad=False, rtol=1e-4, atol=1e-4,
           id="einsum-bmm-large"),
]

globals().update(op_tests(CASES))


def test_matmul_shapes_and_dtypes():
    assert (wg.ones(3) @ wg.ones(3)).shape == ()
    assert (wg.ones(5, 1, 2, 3) @ wg.ones(4, 3, 6)).shape == (5, 4, 2, 6)
    assert (wg.ones(2, 3, dtype=wg.int32) @ wg.ones(3, 2, dtype=wg.int32)).dtype is wg.int32
    assert (wg.ones(2, 3, dtype=wg.int32) @ wg.ones(3, dtype=wg.float64)).dtype is wg.float64
    assert (np.ones((2, 3)) @ wg.ones(3)).tolist() == [3.0, 3.0]        # __rmatmul__


def test_matmul_gradient_broadcast_batch_sums_back():
    a = wg.tensor(r(4, 2, 3), requires_grad=True)
    b = wg.tensor(r(3, 5), requires_grad=True)
    (a @ b).sum().backward()
    assert b.grad.shape == (3, 5)
    assert_close(b.grad, np.einsum("bij->j", a.detach().numpy())[:, None].repeat(5, 1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ta, tb", [(False, True), (True, False), (True, True)])
def test_matmul_kernel_transposed_operands(ta, tb):
    a, b = r(2, 4, 3), r(1, 3, 5)
    a_ = np.ascontiguousarray(a.swapaxes(-1, -2)) if ta else a      # what the kernel is given
    b_ = np.ascontiguousarray(b.swapaxes(-1, -2)) if tb else b
    want = a @ b
    fn = lambda x, y: wg.run_kernel("MatMul", x, y, transpose_a=ta, transpose_b=tb)  # noqa: E731
    assert_close(fn(wg.tensor(a_, dtype=wg.float64), wg.tensor(b_, dtype=wg.float64)), want)
    gradcheck(fn, a_, b_, what=f"MatMul transpose_a={ta} transpose_b={tb}")


@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_kernel_over_one_element_is_exact(ta, tb):
    """k == 1 (the cpu kernel multiplies instead): numpy's matmul to the bit, batch dims broadcast."""
    a, b = r(3, 1, 5, 1).astype(np.float32), r(2, 1, 4).astype(np.float32)
    a_ = np.ascontiguousarray(a.swapaxes(-1, -2)) if ta else a
    b_ = np.ascontiguousarray(b.swapaxes(-1, -2)) if tb else b
    got = wg.run_kernel("MatMul", wg.tensor(a_), wg.tensor(b_), transpose_a=ta, transpose_b=tb)
    assert got.dtype is wg.float32 and got.shape == (3, 2, 5, 4)
    np.testing.assert_array_equal(got.numpy(), np.matmul(a, b))


def test_einsum_list_form_and_three_operands():
    a, b = r(2, 3), r(3, 4)
    assert_close(wg.einsum("ij,jk->ik", [wg.tensor(a), wg.tensor(b)]), a @ b, rtol=1e-5, atol=1e-5)


def test_matches_torch():
    torch = pytest.importorskip("torch")
    a, b = r(2, 1, 3, 4), r(5, 4, 2)
    assert_close(wg.tensor(a, dtype=wg.float64) @ wg.tensor(b, dtype=wg.float64),
                 (torch.tensor(a) @ torch.tensor(b)).numpy())
    q, k = r(1, 2, 3, 4), r(1, 2, 5, 4)
    assert_close(wg.einsum("bhqd,bhkd->bhqk", wg.tensor(q, dtype=wg.float64), wg.tensor(k, dtype=wg.float64)),
                 torch.einsum("bhqd,bhkd->bhqk", torch.tensor(q), torch.tensor(k)).numpy())


# ---------------------------------------------------------------- bad inputs

def test_matmul_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"matmul: shapes \(2, 3\) and \(4, 5\) cannot be multiplied \(3 != 4\)"):
        wg.ones(2, 3) @ wg.ones(4, 5)
    with pytest.raises(ValueError, match=r"matmul: shapes \(3,\) and \(2,\)"):
        wg.ones(3) @ wg.ones(2)


def test_matmul_batch_mismatch():
    with pytest.raises(ValueError, match=r"matmul: shapes \(2,\) and \(3,\) cannot be broadcast"):
        wg.ones(2, 3, 4) @ wg.ones(3, 4, 5)


def test_matmul_0d_and_bool_refused():
    with pytest.raises(ValueError, match="matmul: both arguments need to be at least 1D"):
        wg.tensor(2.0) @ wg.ones(2)
    with pytest.raises(TypeError, match="matmul: bool"):
        wg.ones(2, 2, dtype=wg.bool) @ wg.ones(2, 2, dtype=wg.bool)


@pytest.mark.parametrize("fn, a, b, match", [
    (wg.dot, (2, 2), (2,), r"dot: expected two 1D tensors"),
    (wg.dot, (2,), (3,), r"dot: inconsistent sizes"),
    (wg.mm, (2,), (2, 2), r"mm: expected two 2D tensors, got shapes \(2,\) and \(2, 2\)"),
    (wg.bmm, (2, 2, 3), (3, 3, 2), r"bmm: batch sizes differ"),
    (wg.outer, (2, 1), (2,), r"outer: expected two 1D tensors"),
])
def test_fixed_rank_products_refuse_bad_shapes(fn, a, b, match):
    with pytest.raises(ValueError, match=match):
        fn(wg.ones(*a), wg.ones(*b))


@pytest.mark.parametrize("eq, shapes, err, match", [
    ("ii->i", [(2, 2)], NotImplementedError, r"einsum: label 'i' repeats in operand 0 \('ii'\): diagonals"),
    ("ij,jk->ik", [(2, 3)], ValueError, r"einsum: equation 'ij,jk->ik' names 2 operands but 1 were given"),
    ("ij->ik", [(2, 3)], ValueError, r"einsum: output label 'k'"),
    ("ijk->i", [(2, 3)], ValueError, r"einsum: operand 0 has shape \(2, 3\)"),
    ("ij,jk->ik", [(2, 3), (4, 2)], ValueError, r"einsum: label 'j' .* has sizes 3 and 4"),
    ("i1->i", [(2,)], ValueError, r"einsum: equation 'i1->i' may only hold letters"),
])
def test_einsum_bad_equations(eq, shapes, err, match):
    with pytest.raises(err, match=match):
        wg.einsum(eq, *[wg.ones(*s) for s in shapes])


@pytest.mark.parametrize("call", [
    lambda: wg.addmm(wg.zeros(3, 3), wg.zeros(2, 4), wg.zeros(4, 5)),
    lambda: wg.addmv(wg.zeros(2), wg.zeros(2), wg.zeros(2)),
    lambda: wg.inner(wg.zeros(2, 3), wg.zeros(4)),
    lambda: wg.trace(wg.zeros(3)),
    lambda: wg.diag(wg.zeros(2, 2, 2)),
    lambda: wg.zeros(2, 3) @ wg.zeros(2, 3),
    lambda: wg.bmm(wg.zeros(2, 2, 3), wg.zeros(3, 3, 2)),
], ids=["addmm", "addmv", "inner", "trace", "diag", "matmul", "bmm"])
def test_shape_errors_are_runtime_errors_as_torchs(call, backend):
    """PyTorch raises RuntimeError for operands whose shapes do not fit (webgrad's ShapeError is one)."""
    with pytest.raises(RuntimeError):
        call()


def test_linear_bias_on_a_large_batch_as_torch(backend):
    """F.linear on a batch large enough for a compiled plan's in-place bias: the result and
    gradients are PyTorch's, and the inputs are left untouched."""
    torch = pytest.importorskip("torch")
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((8, 16, 64), (96, 64), (96,)))
    X, W, B = (wg.tensor(a, backend=backend).requires_grad_() for a in (x, w, b))
    y = wg.nn.functional.linear(X, W, B)
    tX, tW, tB = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.linear(tX, tW, tB)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    for got, want in ((X, tX), (W, tW), (B, tB)):
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-4, atol=1e-3)
    for t, a in ((X, x), (W, w), (B, b)):
        assert np.array_equal(t.detach().numpy(), a)
