"""QR: linalg.qr, torch.qr, geqrf, householder_product (orgqr), ormqr. Two kernels, Geqrf (LAPACK's
Householder QR, packed) and HouseholderProduct (LAPACK's orgqr); qr records one node whose backward is
PyTorch's formula written with ops (geqrf has no derivative, in PyTorch either)."""
from __future__ import annotations

from .. import kernel_names as K
from ..engine import no_grad, record_function, run_kernel
from ..ops.creation import eye
from ..ops.movement import pad
from ..return_types import geqrf as _geqrf_result
from ..return_types import linalg_qr, qr as _qr_result
from .errors import deprecated, factorizable, same_dtype

_MODES = ("reduced", "complete", "r")


def geqrf(input):
    """LAPACK's geqrf: ``(a, tau)``, R on and above ``a``'s diagonal and the Householder reflectors below it,
    their scales in ``tau`` (``householder_product(a, tau)`` is Q).

    >>> import webgrad as wg
    >>> wg.geqrf(wg.tensor([[3.0, 1.0], [4.0, 2.0]])).a.tolist()[0]
    [-5.0, -2.200000047683716]
    """
    a, tau = run_kernel(K.GEQRF, factorizable("geqrf", input, "input"))
    return _geqrf_result(a, tau)


def householder_product(A, tau):
    """The first n columns of the product of the Householder reflectors ``I - tau[i] v_i v_i^T`` whose vectors
    are below the diagonal of ``A``'s first ``tau.shape[-1]`` columns (LAPACK's orgqr).

    >>> import webgrad as wg
    >>> a, tau = wg.geqrf(wg.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> [[round(v, 4) for v in row] for row in wg.linalg.householder_product(a, tau).tolist()]
    [[-0.6, -0.8], [-0.8, 0.6]]
    """
    op = "torch.linalg.householder_product"
    factorizable(op, A, "input")
    factorizable(op, tau, "tau", ndim=1)
    same_dtype(op, A, tau)
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1], got shape "
                           f"{tuple(A.shape)}")
    if tau.shape[-1] > n or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{op}: tau must have shape {tuple(A.shape[:-2])} + (k,) with k <= {n}, got "
                           f"{tuple(tau.shape)}")
    return run_kernel(K.HOUSEHOLDER_PRODUCT, A, tau)


def orgqr(input, input2):
    """``torch.orgqr``: ``linalg.householder_product`` (``input2`` the scales tau).

    >>> import webgrad as wg
    >>> a, tau = wg.geqrf(wg.eye(2))
    >>> wg.orgqr(a, tau).abs().tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return householder_product(input, input2)


def _full_q(input, tau):
    """The m x m product of the reflectors (columns beyond the reflectors' start as the identity's)."""
    m, n = input.shape[-2:]
    a = pad(input, (0, m - n)) if m > n else input[..., :m]
    return run_kernel(K.HOUSEHOLDER_PRODUCT, a, tau)


def ormqr(input, input2, input3, left=True, transpose=False):
    """``Q @ input3`` (``Q^T`` when ``transpose``; ``input3 @ Q`` when not ``left``), Q the product of the
    Householder reflectors that ``geqrf`` left in ``input`` and ``input2`` (tau).

    >>> import webgrad as wg
    >>> a, tau = wg.geqrf(wg.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> [round(v, 4) for v in wg.ormqr(a, tau, wg.tensor([[1.0], [0.0]])).flatten().tolist()]
    [-0.6, -0.8]
    """
    op = "ormqr"
    factorizable(op, input, "input")
    factorizable(op, input3, "input3")
    same_dtype(op, input, input3)
    q = _full_q(input, input2)
    q = q.mT if transpose else q
    return q @ input3 if left else input3 @ q


def _right_solve_upper(g, r):
    """X with X R^T = G, R upper triangular: (R^-1 G^T)^T."""
    return run_kernel(K.TRIANGULAR_SOLVE, r, g.mT, upper=True, unitriangular=False).mT


def _qr_backward(dy, saved, attrs):
    """PyTorch's rule. m >= n: dA = (dQ + Q sym(triu(dR R^T - Q^T dQ))) R^-T, sym(X) = X + X^T with the
    diagonal counted once. m < n: the first m columns of R take Q's share, dQ R's share is Q dR."""
    if attrs["mode"] == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    gq, gr = dy
    q, r = saved
    m, n = q.shape[-2], r.shape[-1]
    if attrs["mode"] == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    x = gr @ r.mT - q.mT @ gq
    if m >= n:
        upper = x.triu()
        halve_diagonal = 1 - 0.5 * eye(n, dtype=x.dtype, device=x.device)
        return (_right_solve_upper(q @ ((upper + upper.mT) * halve_diagonal) + gq, r),)
    skew = (x.mT - x).tril(-1)
    g = _right_solve_upper(q @ skew, r[..., :m])
    return (pad(g, (0, n - m)) + q @ gr,)


def qr(A, mode="reduced"):
    """The QR factorization ``A = Q @ R`` (Householder, as LAPACK's: R's diagonal may be negative): mode
    'reduced' (Q m x k, R k x n, k = min(m, n)), 'complete' (Q m x m, R m x n) or 'r' (R only; Q empty).

    >>> import webgrad as wg
    >>> Q, R = wg.linalg.qr(wg.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> [[round(v, 4) for v in row] for row in R.tolist()]
    [[-5.0, -2.2], [0.0, 0.4]]
    """
    op = "linalg.qr"
    factorizable(op, A)
    if mode not in _MODES:
        raise RuntimeError(f"{op}: qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           f"'r', or 'complete'")
    m, n = A.shape[-2:]
    k = min(m, n)
    with no_grad():
        a, tau = run_kernel(K.GEQRF, A)
        rows = m if mode == "complete" else k
        r = a[..., :rows, :].triu()
        if mode == "r":
            q = A.new_zeros(0)
        elif mode == "complete":
            q = _full_q(a, tau)
        else:
            q = run_kernel(K.HOUSEHOLDER_PRODUCT, a[..., :, :k], tau)
    node = record_function("LinalgQr", _qr_backward, [A], (q, r), saved=(q, r), attrs={"mode": mode})
    if node is not None:
        node.label = "LinalgQrBackward0"
    return linalg_qr(q, r)


def torch_qr(input, some=True):
    """``torch.qr`` (deprecated in PyTorch for ``linalg.qr``, with its warning, once): 'reduced' when
    ``some``, else 'complete'.

    >>> import webgrad as wg, warnings
    >>> with warnings.catch_warnings(record=True):
    ...     wg.qr(wg.eye(2)).R.abs().tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    deprecated("qr", "torch.linalg.qr")
    return _qr_result(*qr(input, "reduced" if some else "complete"))
