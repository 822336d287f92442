"""Svd and Eigh in WGSL: one-sided Jacobi (Hestenes). The columns of W (A, or A^T when A is wide) are
rotated pairwise until orthogonal, the rotations accumulated in V: then W = U S and A = U S V^T. A sweep
pairs every two columns once, in N - 1 rounds of N / 2 disjoint pairs (the circle method), a dispatch per
round; ``SWEEPS`` sweeps (quadratic convergence: float32 is reached in well under that for the matrices
scripts factor). Then the norms, and a dispatch that sorts them (descending) and writes U, S and Vh.
Eigh factors A + c I (c the largest absolute row sum: positive semi-definite, same eigenvectors): its
singular values, less c, are A's eigenvalues. No invocation loops more than about 2m + n times (a larger
matrix is refused: ``factorizations.check_trips``).
Singular vectors are determined up to sign (and within repeated values): they may differ from LAPACK's."""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.registry import get_kernel

from .factorizations import WG, check_trips, program

SWEEPS = 12


def _jacobi(be, w, label):
    """Rotate the columns of ``w`` ([count, m, n], m >= n) in place; returns V ([count, n, n])."""
    count, m, n = w.shape
    check_trips(label, w.shape[1:], 2 * m + n)
    v = be.alloc((count, n, n), w.dtype)
    be.run(("eye_batch",), program("eye_batch", [], [("q", "f32")],
                                   [("m", "u32", 1), ("n", "u32", 1), ("total", "u32", 1)], label),
           [], [v], [n, n, v.size], -(-v.size // WG))
    half = (n + 1) // 2
    build = program("jacobi_round", [], [("w", "f32"), ("v", "f32")],
                    [("m", "u32", 1), ("n", "u32", 1), ("half", "u32", 1), ("count", "u32", 1), ("round", "u32", 1)],
                    label)
    for _ in range(SWEEPS if n > 1 else 0):
        for r in range(2 * half - 1):
            be.run(("jacobi_round",), build, [], [w, v], [m, n, half, count, r], -(-count * half // WG))
    return v


def _thin_svd(be, a, label):
    m0, n0 = a.shape[-2:]
    batch = a.shape[:-2]
    flip = m0 < n0
    m, n = (n0, m0) if flip else (m0, n0)
    count = a.size // (m0 * n0) if m0 and n0 else 0
    if flip:
        w = get_kernel(K.TRANSPOSE, be.name)(a, perm=tuple(range(len(batch))) + (len(batch) + 1, len(batch)))
    else:
        w = get_kernel(K.IDENTITY, be.name)(a)
    w.shape = (count, m, n)
    s = be.alloc(batch + (n,), a.dtype)
    left, right = be.alloc((count, m, n), a.dtype), be.alloc((count, n, n), a.dtype)
    if count:
        v = _jacobi(be, w, label)
        norms = be.alloc((count, n), a.dtype)
        uniforms = [("m", "u32", 1), ("n", "u32", 1), ("count", "u32", 1)]
        be.run(("svd_norms",), program("svd_norms", [("w", "f32")], [("norms", "f32")], uniforms, label),
               [w], [norms], [m, n, count], -(-count * n // WG))
        be.run(("svd_finish", flip), program("svd_finish", [("w", "f32"), ("v", "f32"), ("norms", "f32")],
                                             [("s", "f32"), ("left", "f32"), ("right", "f32")], uniforms, label,
                                             {"FLIP": "true" if flip else "false"}),
               [w, v, norms], [s, left, right], [m, n, count], -(-count * n // WG))
    k = n
    if flip:
        right.shape, left.shape = batch + (m0, k), batch + (k, n0)
        return right, s, left
    left.shape, right.shape = batch + (m0, k), batch + (k, n0)
    return left, s, right


def svd(be, a):
    return _thin_svd(be, a, K.SVD)


def eigh(be, a):
    """Eigenvalues ascending (the shifted singular values, reversed), eigenvectors as columns."""
    n = a.shape[-1]
    rank = len(a.shape)
    if a.size == 0:
        return be.alloc(a.shape[:-1], a.dtype), be.alloc(a.shape, a.dtype)
    absolute = get_kernel(K.ABS, be.name)(a)
    rows = get_kernel(K.SUM, be.name)(absolute, axes=(rank - 1,), keepdim=False)
    shift = get_kernel(K.MAX, be.name)(rows, axes=(rank - 2,), keepdim=False)
    b = be.alloc(a.shape, a.dtype)
    be.run(("eigh_shift",), program("eigh_shift", [("a", "f32"), ("shift", "f32")], [("out", "f32")],
                                    [("n", "u32", 1), ("total", "u32", 1)], K.EIGH),
           [a, shift], [b], [n, a.size], -(-a.size // WG))
    u, s, vh = _thin_svd(be, b, K.EIGH)
    w = get_kernel(K.SUB, be.name)(s, get_kernel(K.RESHAPE, be.name)(shift, shape=tuple(shift.shape) + (1,)))
    reverse = get_kernel(K.SLICE, be.name)
    batch = tuple(a.shape[:-2])
    keep = lambda dims: ((0,) * len(dims), dims, (1,) * len(dims))  # noqa: E731
    (b0, e0, s0), (b1, e1, s1) = keep(batch), keep((n,))
    w = reverse(w, begin=b0 + (n - 1,), end=e0 + (-1,), step=s0 + (-1,))                  # ascending
    v = reverse(vh, begin=b0 + (n - 1,) + b1, end=e0 + (-1,) + e1, step=s0 + (-1,) + s1)   # rows in that order
    return w, get_kernel(K.TRANSPOSE, be.name)(v, perm=tuple(range(rank - 2)) + (rank - 1, rank - 2))


KERNELS = {K.SVD: svd, K.EIGH: eigh}
