"""cpu linear-algebra kernels."""
import math

import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel


@cpu_kernel(K.MATMUL)
def matmul(a, b, *, transpose_a=False, transpose_b=False):
    """``a @ b`` (batch dims broadcast), the last two dims of each swapped first where asked.
    A product over one element (an outer product: a batch-of-one layer's weight gradient) is a
    broadcast multiply: exact, and 3-4x faster than numpy's matmul, which runs it without BLAS.
    A batch of matrices times one matrix (a Linear layer on [B, T, C]) is folded into one 2-d product:
    numpy runs a stacked matmul whose second operand broadcasts ~4x slower than the folded one."""
    a = a.swapaxes(-1, -2) if transpose_a else a   # (the methods: np.swapaxes is a Python wrapper)
    b = b.swapaxes(-1, -2) if transpose_b else b
    if a.ndim > 1 and b.ndim > 1 and a.shape[-1] == 1 == b.shape[-2]:
        return np.asarray(np.multiply(a, b), dtype=a.dtype)
    if a.ndim > 2 and b.ndim == 2:
        rows = a.reshape(math.prod(a.shape[:-1]), a.shape[-1])   # (not -1: a.shape[-1] may be 0)
        out = np.asarray(np.matmul(rows, b), dtype=a.dtype)
        out.shape = (*a.shape[:-1], b.shape[1])   # in place: the array keeps owning its memory (a compiled
        return out                                 # plan's bias Add may write into it)
    return np.asarray(np.matmul(a, b), dtype=a.dtype)



def _batched(a):
    """``a`` as a stack of matrices [B, n, m] (a copy: the factorizations work in place)."""
    return np.array(a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:]), dtype=a.dtype, copy=True)


def _swap_rows(x, rows, k, p):
    """Swap rows ``k`` and ``p[b]`` of each matrix ``x[b]``."""
    top = x[rows, k].copy()
    x[rows, k] = x[rows, p]
    x[rows, p] = top


@cpu_kernel(K.LU_FACTOR)
def lu_factor(a):
    """LAPACK's getrf, unblocked: at step k the first row of largest |a[i, k]| (i >= k) becomes the
    pivot, the column below is divided by it (left as it is when it is 0, recorded in info) and the
    trailing block takes the rank-1 update. Every matrix of the batch moves in one numpy call a step."""
    n = a.shape[-1]
    lu = _batched(a)
    count = lu.shape[0]
    rows = np.arange(count)
    pivots = np.zeros((count, n), np.int32)
    perm = np.tile(np.arange(n, dtype=np.int64), (count, 1))
    info = np.zeros(count, np.int32)
    for k in range(n):
        p = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        pivots[:, k] = p + 1
        _swap_rows(lu, rows, k, p)
        _swap_rows(perm, rows, k, p)
        d = lu[:, k, k]
        zero = d == 0
        info[(info == 0) & zero] = k + 1
        lu[:, k + 1:, k] /= np.where(zero, 1, d)[:, None]
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k:k + 1] * lu[:, k:k + 1, k + 1:]
    batch = a.shape[:-2]
    return lu.reshape(a.shape), pivots.reshape(batch + (n,)), perm.reshape(batch + (n,)), info.reshape(batch)


@cpu_kernel(K.TRIANGULAR_SOLVE)
def triangular_solve(a, b, *, upper, unitriangular):
    """Substitution, a row at a time for the whole batch and every column of b: forward for a lower
    triangle, backward for an upper one (a zero on the diagonal gives inf or NaN, as LAPACK's trsm)."""
    n = a.shape[-1]
    x = np.zeros(b.shape, dtype=b.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in (range(n - 1, -1, -1) if upper else range(n)):
            done = slice(i + 1, n) if upper else slice(0, i)
            s = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :])
            x[..., i, :] = s if unitriangular else s / a[..., i, i][..., None]
    return x


@cpu_kernel(K.CHOLESKY)
def cholesky(a):
    """Cholesky–Banachiewicz by columns, the whole batch a column at a time: l[j, j] = sqrt(a[j, j] -
    |l[j, :j]|^2), then the column below. A pivot that is not positive (or NaN) sets info, as LAPACK's potrf."""
    n = a.shape[-1]
    src = _batched(a)
    l = np.zeros_like(src)
    info = np.zeros(src.shape[0], np.int32)
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(n):
            d = src[:, j, j] - np.einsum("bk,bk->b", l[:, j, :j], l[:, j, :j])
            info[(info == 0) & ~(d > 0)] = j + 1
            l[:, j, j] = np.sqrt(d)
            l[:, j + 1:, j] = (src[:, j + 1:, j] - np.einsum("bik,bk->bi", l[:, j + 1:, :j], l[:, j, :j])) \
                / l[:, j, j][:, None]
    return l.reshape(a.shape), info.reshape(a.shape[:-2])


@cpu_kernel(K.GEQRF)
def geqrf(a):
    """LAPACK's geqrf itself, through numpy's ``qr(mode='raw')`` (which returns the packed factors transposed)."""
    m, n = a.shape[-2:]
    if a.size == 0:
        return a.copy(), np.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    return np.ascontiguousarray(h.swapaxes(-1, -2), dtype=a.dtype), np.asarray(tau, dtype=a.dtype)


@cpu_kernel(K.HOUSEHOLDER_PRODUCT)
def householder_product(a, tau):
    """orgqr, unblocked: the identity's first n columns, with the reflectors applied from the last one,
    q[k:] -= tau_k v (v^T q[k:]), the whole batch a reflector at a time."""
    m, n = a.shape[-2:]
    src = _batched(a)
    t = tau.reshape((src.shape[0], tau.shape[-1]))
    q = np.zeros_like(src)
    q[:, range(n), range(n)] = 1
    for k in reversed(range(t.shape[-1])):
        v = src[:, k:, k].copy()
        v[:, 0] = 1
        w = np.einsum("bi,bij->bj", v, q[:, k:, :]) * t[:, k][:, None]
        q[:, k:, :] -= v[:, :, None] * w[:, None, :]
    return q.reshape(a.shape)


@cpu_kernel(K.SVD)
def svd(a):
    """LAPACK's gesdd through numpy (PyTorch's default driver on the CPU), thin."""
    m, n = a.shape[-2:]
    if a.size == 0:
        k = min(m, n)
        batch = a.shape[:-2]
        return (np.zeros(batch + (m, k), a.dtype), np.zeros(batch + (k,), a.dtype), np.zeros(batch + (k, n), a.dtype))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u.astype(a.dtype, copy=False), s.astype(a.dtype, copy=False), vh.astype(a.dtype, copy=False)


@cpu_kernel(K.EIGH)
def eigh(a):
    """LAPACK's syevd through numpy (as PyTorch's), on the lower triangle."""
    if a.size == 0:
        return np.zeros(a.shape[:-1], a.dtype), a.copy()
    w, v = np.linalg.eigh(a)
    return w.astype(a.dtype, copy=False), v.astype(a.dtype, copy=False)
