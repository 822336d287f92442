"""Spectral linear algebra: svd, svdvals, eigh, eigvalsh (kernels Svd and Eigh, each one node whose backward
is PyTorch's formula written with ops), and what follows from them: pinv, matrix_rank, cond, lstsq, and
torch.svd / torch.pinverse. eig and eigvals need complex dtypes (docs/porting.md says so)."""
from __future__ import annotations

import math

from .. import kernel_names as K
from ..dtype_info import finfo
from ..engine import no_grad, record_function, run_kernel
from ..node_names import labelled
from ..ops.binary import where
from ..ops.creation import eye
from ..ops.movement import cat
from ..return_types import linalg_eigh, linalg_lstsq, linalg_svd, svd as _svd_result
from .errors import factorizable, same_dtype, square
from .qr_ops import qr


def _eye(k, like):
    return eye(k, dtype=like.dtype, device=like.device)


def _svd_backward(dy, saved, attrs):
    """PyTorch's svd_backward (real): the thin factors' gradients (the completed columns carry none)."""
    gu, gs, gvh = dy
    u, s, vh = saved
    k = s.shape[-1]
    u, vh, gu, gvh = u[..., :k], vh[..., :k, :], gu[..., :k], gvh[..., :k, :]
    m, n = u.shape[-2], vh.shape[-1]
    uhgu, vhgv = u.mT @ gu, vh @ gvh.mT
    uhgu, vhgv = uhgu - uhgu.mT, vhgv - vhgv.mT
    s2 = s * s
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + _eye(k, s)
    ga = (uhgu * s.unsqueeze(-2) + s.unsqueeze(-1) * vhgv) / e + _eye(k, s) * gs.unsqueeze(-2)
    if m > n:
        gus = gu / s.unsqueeze(-2)
        return ((u @ ga + gus - u @ (u.mT @ gus)) @ vh,)
    if m < n:
        sgvh = gvh / s.unsqueeze(-1)
        return (u @ (ga @ vh + sgvh - (sgvh @ vh.mT) @ vh),)
    return (u @ ga @ vh,)


def _complete(q, k):
    """``q`` ([..., m, k], orthonormal columns) with m - k more orthonormal columns (from a complete QR)."""
    m = q.shape[-2]
    if m == k:
        return q
    full = qr(q, "complete").Q
    return cat([q, full[..., k:]], -1)


def _check_driver(op, driver):
    if driver is not None:
        raise RuntimeError(f"{op}: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
                           f"backend (got {driver!r}; webgrad has one algorithm per backend)")


def svd(A, full_matrices=True, *, driver=None):
    """The singular value decomposition ``A = U @ diag(S) @ Vh``, S descending; with ``full_matrices`` U is
    m x m and Vh n x n (their extra columns an orthonormal completion), else thin (k = min(m, n)). Singular
    vectors are unique up to sign only: cpu gives LAPACK's (gesdd), the GPU backends one-sided Jacobi's.

    >>> import webgrad as wg
    >>> wg.linalg.svd(wg.tensor([[3.0, 0.0], [0.0, -4.0]])).S.tolist()
    [4.0, 3.0]
    """
    op = "linalg.svd"
    _check_driver(op, driver)
    factorizable(op, A)
    with no_grad():
        u, s, vh = run_kernel(K.SVD, A)
        k = s.shape[-1]
        if full_matrices:
            u, vh = _complete(u, k), _complete(vh.mT, k).mT
    node = record_function("LinalgSvd", _svd_backward, [A], (u, s, vh), saved=(u, s, vh))
    if node is not None:
        node.label = "LinalgSvdBackward0"
    return linalg_svd(u, s, vh)


def svdvals(A, *, driver=None):
    """The singular values of ``A``, descending.

    >>> import webgrad as wg
    >>> wg.linalg.svdvals(wg.tensor([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    _check_driver("linalg.svdvals", driver)
    return svd(A, full_matrices=False).S


def torch_svd(input, some=True, compute_uv=True):
    """``torch.svd``: ``(U, S, V)`` with ``A = U @ diag(S) @ V.mT`` (V, not Vh), thin when ``some``; zeros for
    U and V (m x m and n x n) when not ``compute_uv``.

    >>> import webgrad as wg
    >>> wg.svd(wg.tensor([[2.0, 0.0], [0.0, 1.0]])).S.tolist()
    [2.0, 1.0]
    """
    if not compute_uv:   # PyTorch's zeros, m x m and n x n whatever ``some``
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return _svd_result(input.new_zeros(batch + (m, m)), svdvals(input), input.new_zeros(batch + (n, n)))
    u, s, vh = svd(input, full_matrices=not some)
    return _svd_result(u, s, vh.mT)


def _symmetric(A, uplo):
    """A symmetric matrix from one triangle of ``A``."""
    if uplo not in ("L", "U"):
        raise RuntimeError(f"linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    t = A.tril() if uplo == "L" else A.triu()
    return t + (t.tril(-1) if uplo == "L" else t.triu(1)).mT


def _eigh_backward(dy, saved, attrs):
    """PyTorch's rule (hermitian): dA = V (skew(V^T dV) / E + diag(dL)) V^T, E_ij = L_j - L_i."""
    gl, gv = dy
    w, v = saved
    n = w.shape[-1]
    x = v.mT @ gv
    x = 0.5 * (x - x.mT)
    e = w.unsqueeze(-2) - w.unsqueeze(-1) + _eye(n, w)
    ga = x / e * (1 - _eye(n, w)) + _eye(n, w) * gl.unsqueeze(-2)
    return (v @ ga @ v.mT,)


def eigh(A, UPLO="L"):
    """``(eigenvalues, eigenvectors)`` of symmetric ``A`` (its ``UPLO`` triangle read): eigenvalues ascending,
    eigenvectors as columns (unique up to sign: cpu gives LAPACK's syevd, the GPU backends Jacobi's).

    >>> import webgrad as wg
    >>> wg.linalg.eigh(wg.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.tolist()
    [1.0, 2.0]
    """
    square("linalg.eigh", A)
    with no_grad():
        w, v = run_kernel(K.EIGH, _symmetric(A, UPLO))
    node = record_function("LinalgEigh", _eigh_backward, [A], (w, v), saved=(w, v))
    if node is not None:
        node.label = "LinalgEighBackward0"
    return linalg_eigh(w, v)


def eigvalsh(A, UPLO="L"):
    """The eigenvalues of symmetric ``A``, ascending.

    >>> import webgrad as wg
    >>> wg.linalg.eigvalsh(wg.tensor([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    """
    return eigh(A, UPLO).eigenvalues


def _tolerance(op, s, atol, rtol, shape):
    """PyTorch's threshold max(atol, rtol * largest singular value), rtol eps * max(m, n) when neither is given."""
    if rtol is None:
        rtol = finfo(s.dtype).eps * max(shape[-2:]) if atol is None or (isinstance(atol, (int, float)) and atol <= 0) \
            else 0.0
    top = s.amax(-1, keepdim=True) if s.shape[-1] else s.new_zeros(tuple(s.shape[:-1]) + (1,))
    tol = top * rtol
    if atol is not None:
        tol = tol.maximum(atol if not isinstance(atol, (int, float)) else tol.new_full((), float(atol)))
    return tol


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse of ``A`` (batched), singular values at or below max(atol, rtol *
    largest) taken as zero; by eigh when ``hermitian``.

    >>> import webgrad as wg
    >>> wg.linalg.pinv(wg.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    op = "linalg.pinv"
    factorizable(op, A)
    if hermitian:
        w, v = eigh(A)
        keep = w.abs() > _tolerance(op, w.abs(), atol, rtol, A.shape)
        return labelled((v * where(keep, 1 / w, 0.0).unsqueeze(-2)) @ v.mT, "LinalgPinvBackward0")
    u, s, vh = svd(A, full_matrices=False)
    keep = s > _tolerance(op, s, atol, rtol, A.shape)
    return labelled(vh.mT @ (where(keep, 1 / s, 0.0).unsqueeze(-1) * u.mT), "LinalgPinvBackward0")


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: ``linalg.pinv`` with ``rtol=rcond``.

    >>> import webgrad as wg
    >>> wg.pinverse(wg.tensor([[4.0]])).item()
    0.25
    """
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values (absolute eigenvalues when ``hermitian``) above max(atol, rtol * largest),
    as int64.

    >>> import webgrad as wg
    >>> wg.linalg.matrix_rank(wg.ones(3, 3)).item()
    1
    """
    op = "linalg.matrix_rank"
    factorizable(op, A)
    s = eigvalsh(A).abs() if hermitian else svdvals(A)
    return (s > _tolerance(op, s, atol, rtol, A.shape)).long().sum(-1)


def cond(A, p=None):
    """The condition number of ``A`` in the norm ``p``: the ratio of the extreme singular values for None, 2
    and -2, else ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` (square A).

    >>> import webgrad as wg
    >>> wg.linalg.cond(wg.tensor([[2.0, 0.0], [0.0, 0.5]])).item()
    4.0
    """
    from .lu_ops import inv
    from .norms import matrix_norm
    op = "linalg.cond"
    factorizable(op, A)
    if p in (None, 2, -2):
        s = svdvals(A)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    square(op, A)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of ``A @ X = B`` (minimum norm where A's rank is deficient), as PyTorch's
    default driver on the CPU (gelsy) returns it: ``(solution, residuals, rank, singular_values)`` with
    residuals and singular values empty. Singular values below ``rcond`` (relative; eps * max(m, n) by
    default) count as zero.

    >>> import webgrad as wg
    >>> round(wg.linalg.lstsq(wg.tensor([[1.0], [1.0]]), wg.tensor([[1.0], [3.0]])).solution.item(), 5)
    2.0
    """
    op = "torch.linalg.lstsq"
    if driver not in (None, "gelsy", "gelsd", "gelss", "gels"):
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), got {driver!r}")
    factorizable(op, A)
    factorizable(op, B, "B", ndim=1)
    same_dtype(op, A, B)
    vector = B.ndim == A.ndim - 1
    rhs = B.unsqueeze(-1) if vector else B
    if A.shape[-2] != rhs.shape[-2]:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2), got shapes {tuple(A.shape)} and "
                           f"{tuple(B.shape)}")
    u, s, vh = svd(A, full_matrices=False)
    keep = s > _tolerance(op, s, None, rcond, A.shape)
    x = vh.mT @ (where(keep, 1 / s, 0.0).unsqueeze(-1) * (u.mT @ rhs))
    empty = A.new_zeros(0)
    return linalg_lstsq(x.squeeze(-1) if vector else x, empty, keep.long().sum(-1), empty)


