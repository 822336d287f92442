"""linalg.vander, tensorinv, tensorsolve and matrix_exp: compositions of reshapes, products,
cumprod and the LU-based inverse/solve, so they run on every backend with their gradients."""
from __future__ import annotations

import math

from ..node_names import labelled
from ..ops.common import check_tensor
from ..ops.creation import eye
from ..ops.movement import cat, movedim
from .errors import floating


def vander(x, N=None):
    """The Vandermonde matrix of ``x``'s last dim: columns ``x**0, x**1, ..., x**(N-1)`` (N = its length by
    default), as cumulative products (PyTorch's order, so its gradient too).

    >>> import webgrad as wg
    >>> wg.linalg.vander(wg.tensor([1, 2, 3])).tolist()
    [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    """
    check_tensor("linalg.vander", x, "x")
    if x.ndim < 1:
        raise RuntimeError(f"linalg.vander: x must have at least one dimension, got shape {tuple(x.shape)}")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {n} (x of shape {tuple(x.shape)}, N={N})")
    ones = x.new_ones(tuple(x.shape) + (1,))
    return cat([ones, x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,))], -1).cumprod(-1)


def _prod(dims):
    return math.prod(dims)


def tensorinv(A, ind=2):
    """The inverse of ``A`` seen as a matrix of its first ``ind`` dims by the rest (their sizes' products
    equal): shaped ``A.shape[ind:] + A.shape[:ind]``, so that ``tensordot(tensorinv(A), A, ind)`` is the identity.

    >>> import webgrad as wg
    >>> wg.linalg.tensorinv(2 * wg.eye(4).reshape(4, 2, 2), ind=1).shape
    webgrad.Size([2, 2, 4])
    """
    from .lu_ops import inv
    floating("linalg.tensorinv", A)
    if not isinstance(ind, int) or ind <= 0:
        raise RuntimeError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = _prod(A.shape[:ind]), _prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"linalg.tensorinv: Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def tensorsolve(A, B, dims=None):
    """X with ``tensordot(A, X, X.ndim) = B``: ``A`` seen as a matrix of B's dims by the rest (``dims`` of A
    moved to the end first); X is shaped as those rest dims.

    >>> import webgrad as wg
    >>> wg.linalg.tensorsolve(2 * wg.eye(6).reshape(2, 3, 6), wg.ones(2, 3)).shape
    webgrad.Size([6])
    """
    from .lu_ops import solve
    floating("linalg.tensorsolve", A)
    floating("linalg.tensorsolve", B, "B")
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = movedim(A, dims, list(range(A.ndim - len(dims), A.ndim)))
    rest = tuple(A.shape[B.ndim:])
    rows = B.numel()
    if tuple(A.shape[:B.ndim]) != tuple(B.shape) or _prod(rest) != rows:
        raise RuntimeError(f"linalg.tensorsolve: Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), and other's shape {tuple(B.shape)} to lead A's "
                           f"{tuple(A.shape)}")
    return solve(A.reshape(rows, rows), B.reshape(rows)).reshape(rest)


def matrix_exp(A):
    """The matrix exponential of square ``A`` (batched): scaling by a power of 2 until the 1-norm is at most
    1/2 (read back, as PyTorch's CPU kernel branches on it), a degree-18 Taylor polynomial by Horner, and
    as many squarings. Differentiable through the products.

    >>> import webgrad as wg
    >>> [[round(v, 5) for v in row] for row in wg.linalg.matrix_exp(wg.tensor([[0.0, 1.0], [0.0, 0.0]])).tolist()]
    [[1.0, 1.0], [0.0, 1.0]]
    """
    op = "linalg.matrix_exp"
    check_tensor(op, A, "A")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, got shape {tuple(A.shape)}")
    floating(op, A)
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    norm = float(A.detach().abs().sum(-2).amax().item())
    squarings = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 and math.isfinite(norm) else 0
    x = A / 2 ** squarings if squarings else A
    identity = eye(n, dtype=A.dtype, device=A.device)
    result = identity + x / 18
    for k in range(17, 0, -1):
        result = identity + (x @ result) / k
    for _ in range(squarings):
        result = result @ result
    return labelled(result, "LinalgMatrixExpBackward0")


