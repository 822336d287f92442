"""LU-based linear algebra: lu_factor(_ex), lu, lu_unpack, lu_solve, solve(_ex), inv(_ex), det, slogdet,
solve_triangular. Two kernels do the work, LuFactor (partial pivoting, as LAPACK's getrf) and
TriangularSolve; everything else is ops around them, so gradients (and their gradients) follow from
the two kernels' rules (``webgrad/gradients/factorizations.py``)."""
from __future__ import annotations

import math

from .. import kernel_names as K
from ..engine import run_kernel
from ..ops.binary import where
from ..ops.creation import arange, eye
from ..node_names import labelled
from ..ops.joining import broadcast_shapes
from ..return_types import (linalg_inv_ex, linalg_lu, linalg_lu_factor, linalg_lu_factor_ex, linalg_slogdet,
                            linalg_solve_ex, lu_unpack as _lu_unpack_result)
from .errors import LinAlgError, factorizable, same_dtype, square


def _no_pivot(op, pivot):
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented (as on PyTorch's CPU); use pivot=True")


def _factor(op, A):
    """LuFactor's (lu, pivots, perm, info) of square ``A``."""
    return run_kernel(K.LU_FACTOR, square(op, A))


def _failed(info):
    """The first batch element (flat index) whose info is nonzero, and that info; None when none is."""
    flat = info.reshape(-1)
    if flat.numel() == 0:
        return None
    bad = (flat != 0).long()
    if not bad.any().item():
        return None
    at = int(bad.argmax().item())
    return at, int(flat[at].item())


def _batch_note(info, at):
    return f"(Batch element {at}): " if info.ndim else ""


def _raise_singular(op, info, why):
    failed = _failed(info)
    if failed is not None:
        at, k = failed
        raise LinAlgError(f"{op}: {_batch_note(info, at)}{why.format(k=k)}")


# ---------------------------------------------------------------- factorizations


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """The LU factorization with partial pivoting of square ``A``: ``LU`` (L below the diagonal, its unit
    diagonal not stored, U on and above), LAPACK's 1-based row swaps ``pivots`` (int32) and ``info``
    (0, or the 1-based index of the first zero pivot). ``check_errors`` raises LinAlgError for info > 0.

    >>> import webgrad as wg
    >>> LU, pivots, info = wg.linalg.lu_factor_ex(wg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> LU.tolist(), pivots.tolist(), info.item()
    ([[3.0, 4.0], [0.3333333432674408, 0.6666666269302368]], [2, 2], 0)
    """
    _no_pivot("linalg.lu_factor_ex", pivot)
    lu, pivots, _, info = _factor("linalg.lu_factor_ex", A)
    if check_errors:
        _raise_zero_pivot("torch.linalg.lu_factor_ex", info)
    return linalg_lu_factor_ex(lu, pivots, info)


def lu_factor(A, *, pivot=True):
    """``lu_factor_ex`` without ``info``; a singular ``A`` (a zero pivot) raises RuntimeError, as PyTorch's.

    >>> import webgrad as wg
    >>> wg.linalg.lu_factor(wg.tensor([[0.0, 1.0], [2.0, 0.0]])).pivots.tolist()
    [2, 2]
    """
    _no_pivot("linalg.lu_factor", pivot)
    lu, pivots, _, info = _factor("linalg.lu_factor", A)
    _raise_zero_pivot("torch.linalg.lu_factor", info)
    return linalg_lu_factor(lu, pivots)


def _raise_zero_pivot(op, info):
    """PyTorch's RuntimeError (not a LinAlgError) for a factorization with a zero pivot."""
    failed = _failed(info)
    if failed is not None:
        at, k = failed
        raise RuntimeError(f"{op}: {_batch_note(info, at)}U[{k},{k}] is zero and using it on lu_solve would result "
                           f"in a division by zero. If you still want to perform the factorization, consider "
                           f"calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _permutation(pivots, m):
    """The rows of A in the order LU holds them (int64 [..., m]), from LAPACK's sequential swaps: swap
    i with pivots[i] - 1 for each i, as ops (a gather and two wheres a swap: no readback)."""
    positions = arange(m, device=pivots.device)
    perm = positions.expand(tuple(pivots.shape[:-1]) + (m,))
    for i in range(pivots.shape[-1]):
        j = (pivots[..., i:i + 1] - 1).long()
        at_i, at_j = perm[..., i:i + 1], perm.gather(-1, j)
        perm = where(positions == i, at_j, where(positions == j, at_i, perm))
    return perm


def _permutation_matrix(perm, dtype):
    """P with A = P (LU): P[perm[i], i] = 1."""
    m = perm.shape[-1]
    return (perm.unsqueeze(-2) == arange(m, device=perm.device).unsqueeze(-1)).to(dtype)


def _unpack_lu(LU):
    m, n = LU.shape[-2:]
    k = min(m, n)
    L = LU[..., :, :k].tril(-1) + eye(m, k, dtype=LU.dtype, device=LU.device)
    return L, LU[..., :k, :].triu()


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from a packed LU factorization and its pivots, with ``A = P @ L @ U``; what is not
    unpacked comes back empty.

    >>> import webgrad as wg
    >>> A = wg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> P, L, U = wg.lu_unpack(*wg.linalg.lu_factor(A))
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    factorizable("lu_unpack", LU_data, "LU_data")
    empty = LU_data.new_zeros(0)
    L, U = _unpack_lu(LU_data) if unpack_data else (empty, empty)
    if not unpack_pivots:
        return _lu_unpack_result(empty, L, U)
    if LU_pivots.dtype.name != "int32":
        raise RuntimeError(f"lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype, got "
                           f"{LU_pivots.dtype.name}")
    perm = _permutation(LU_pivots, LU_data.shape[-2])
    return _lu_unpack_result(_permutation_matrix(perm, LU_data.dtype), L, U)


def lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P @ L @ U``: L unit lower triangular, U upper triangular, P a permutation
    matrix (singular ``A`` too: no error).

    >>> import webgrad as wg
    >>> P, L, U = wg.linalg.lu(wg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> P.tolist(), U.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[3.0, 4.0], [0.0, 0.6666666269302368]])
    """
    _no_pivot("linalg.lu", pivot)
    lu_, _, perm, _ = _factor("linalg.lu", A)
    L, U = _unpack_lu(lu_)
    return linalg_lu(_permutation_matrix(perm, A.dtype), labelled(L, "LinalgLuBackward0"),
                     labelled(U, "LinalgLuBackward0"))


# ---------------------------------------------------------------- solving


def _triangular(A, B, upper, unit):
    return run_kernel(K.TRIANGULAR_SOLVE, A, B, upper=bool(upper), unitriangular=bool(unit))


def _batched(op, A, B):
    """A and B expanded to one batch shape (A's matrices, B's right-hand sides)."""
    _check_rhs(op, A, B)
    batch = tuple(broadcast_shapes(A.shape[:-2], B.shape[:-2]))
    return A.expand(batch + tuple(A.shape[-2:])), B.expand(batch + tuple(B.shape[-2:]))


def _check_rhs(op, A, B):
    if A.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation AX = B ({A.shape[-2]}x"
                           f"{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with ``A @ X = B`` (``X @ A = B`` when not ``left``), A triangular (``upper`` or lower; its
    other triangle is not read; its diagonal taken as ones when ``unitriangular``); batches broadcast.

    >>> import webgrad as wg
    >>> wg.linalg.solve_triangular(wg.tensor([[2.0, 1.0], [0.0, 4.0]]), wg.tensor([[3.0], [4.0]]),
    ...                            upper=True).tolist()
    [[1.0], [1.0]]
    """
    op = "linalg.solve_triangular"
    square(op, A)
    factorizable(op, B, "B")
    same_dtype(op, A, B)
    if not left:
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    return _triangular(*_batched(op, A, B), upper, unitriangular)


def _permute_rows(B, perm):
    return B.gather(-2, perm.unsqueeze(-1).expand(tuple(B.shape)))


def _solve_factored(lu_, perm, B, adjoint=False):
    """X with ``A X = B`` (``A^T X = B`` when ``adjoint``), from A's packed LU and row order ``perm``
    (A[perm] = L U); lu, perm and B of one batch shape."""
    if adjoint:   # A^T = U^T L^T P^T: X = P L^-T U^-T B
        y = _triangular(lu_.mT, _triangular(lu_.mT, B, False, False), True, True)
        return y.scatter(-2, perm.unsqueeze(-1).expand(tuple(y.shape)), y)
    return _triangular(lu_, _triangular(lu_, _permute_rows(B, perm), False, True), True, False)


def _expand_factors(lu_, perm, B):
    batch = tuple(broadcast_shapes(lu_.shape[:-2], B.shape[:-2]))
    n = lu_.shape[-1]
    return lu_.expand(batch + (n, n)), perm.expand(batch + (n,)), B.expand(batch + tuple(B.shape[-2:]))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with ``A @ X = B`` from ``lu_factor``'s ``(LU, pivots)`` of A (``A^T`` when ``adjoint``;
    ``X @ A = B`` when not ``left``); batches broadcast.

    >>> import webgrad as wg
    >>> A = wg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> LU, pivots = wg.linalg.lu_factor(A)
    >>> wg.linalg.lu_solve(LU, pivots, wg.tensor([[5.0], [11.0]])).tolist()
    [[1.0], [2.0]]
    """
    op = "linalg.lu_solve"
    square(op, LU, "LU")
    factorizable(op, B, "B")
    same_dtype(op, LU, B)
    if not left:
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    _check_rhs(op, LU, B)
    perm = _permutation(pivots, LU.shape[-1])
    return labelled(_solve_factored(*_expand_factors(LU, perm, B), adjoint=adjoint), "LinalgLuSolveBackward0")


def _is_vector(A, B):
    """PyTorch's rule: B is a vector (or a batch of them) when 1-D, or when shaped as A without its last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve_ex(A, B, *, left=True, check_errors=False):
    """``(result, info)``: X with ``A @ X = B`` (``X @ A = B`` when not ``left``) and the LU's info (nonzero
    for a singular A, whose X is then inf or NaN). B may be a vector (1-D, or A's shape without its last dim).

    >>> import webgrad as wg
    >>> wg.linalg.solve_ex(wg.tensor([[2.0, 0.0], [0.0, 4.0]]), wg.tensor([2.0, 2.0])).result.tolist()
    [1.0, 0.5]
    """
    op = "linalg.solve"
    square(op, A)
    factorizable(op, B, "B", ndim=1)
    same_dtype(op, A, B)
    vector = _is_vector(A, B)
    A = A if left else A.mT
    rhs = B.unsqueeze(-1) if vector else (B if left else B.mT)
    _check_rhs(op, A, rhs)
    lu_, _, perm, info = _factor(op, A)
    x = _solve_factored(*_expand_factors(lu_, perm, rhs))
    x = x.squeeze(-1) if vector else (x if left else x.mT)
    if check_errors:
        _raise_singular(op, info, "The solver failed because the input matrix is singular.")
    return linalg_solve_ex(labelled(x, "LinalgSolveExBackward0"), info)


def solve(A, B, *, left=True):
    """X with ``A @ X = B`` (``X @ A = B`` when not ``left``); a singular A raises LinAlgError.

    >>> import webgrad as wg
    >>> wg.linalg.solve(wg.tensor([[1.0, 2.0], [3.0, 4.0]]), wg.tensor([5.0, 11.0])).tolist()
    [1.0, 2.0]
    """
    return solve_ex(A, B, left=left, check_errors=True).result


def inv_ex(A, *, check_errors=False):
    """``(inverse, info)`` of square ``A`` (info nonzero, and the inverse inf or NaN, for a singular A).

    >>> import webgrad as wg
    >>> wg.linalg.inv_ex(wg.tensor([[2.0, 0.0], [0.0, 4.0]])).inverse.tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    op = "linalg.inv"
    square(op, A)
    lu_, _, perm, info = _factor(op, A)
    n = A.shape[-1]
    identity = eye(n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    if check_errors:
        _raise_singular(op, info, "The diagonal element {k} is zero, the inversion could not be completed because "
                                  "the input matrix is singular.")
    return linalg_inv_ex(labelled(_solve_factored(lu_, perm, identity), "LinalgInvExBackward0"), info)


def inv(A):
    """The inverse of square ``A`` (batched); a singular A raises LinAlgError.

    >>> import webgrad as wg
    >>> wg.linalg.inv(wg.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return inv_ex(A, check_errors=True).inverse


# ---------------------------------------------------------------- determinants


def _swap_sign(pivots, dtype):
    """(-1) to the number of row swaps the pivots make."""
    n = pivots.shape[-1]
    swaps = (pivots != arange(1, n + 1, dtype=pivots.dtype, device=pivots.device)).long().sum(-1)
    return (1 - 2 * (swaps % 2)).to(dtype)


def det(A):
    """The determinant of square ``A`` (batched): the product of U's diagonal, signed by the row swaps.

    >>> import webgrad as wg
    >>> wg.linalg.det(wg.tensor([[2.0, 1.0], [1.0, 2.0]])).item()
    3.0
    """
    lu_, pivots, _, _ = _factor("linalg.det", A)
    return labelled(lu_.diagonal(0, -2, -1).prod(-1) * _swap_sign(pivots, A.dtype), "LinalgDetBackward0")


def slogdet(A):
    """``(sign, logabsdet)``: the determinant's sign (0 for a singular A) and the log of its absolute value
    (-inf for a singular A), without the over- or underflow of the determinant itself.

    >>> import webgrad as wg
    >>> sign, logabsdet = wg.linalg.slogdet(wg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> sign.item(), round(logabsdet.item(), 6)
    (-1.0, 0.693147)
    """
    lu_, pivots, _, _ = _factor("linalg.slogdet", A)
    d = lu_.diagonal(0, -2, -1)
    sign = d.sign().prod(-1) * _swap_sign(pivots, A.dtype)
    return linalg_slogdet(sign, labelled(d.abs().log().sum(-1), "LinalgSlogdetBackward0"))


def logdet(input):
    """``torch.logdet``: the log of the determinant: NaN where it is negative, -inf where it is 0.

    >>> import webgrad as wg
    >>> round(wg.logdet(wg.tensor([[2.0, 0.0], [0.0, 3.0]])).item(), 6)
    1.791759
    """
    sign, logabsdet = slogdet(input)
    return where(sign < 0, math.nan, logabsdet)
