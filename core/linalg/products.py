"""Products: vecdot, multi_dot, cross, matrix_power, vdot (torch.linalg's and torch's), all composed
of existing ops (matmul, sums, rolls), so they run on every backend with their gradients."""
from __future__ import annotations

import warnings

from ..node_names import labelled
from ..ops import linalg as products
from ..ops.common import check_tensor
from ..ops.creation import eye
from ..ops.joining import broadcast_tensors
from ..ops.movement import roll
from ..shapes import normalize_axis
from .errors import deprecated, floating, same_dtype, square


def vecdot(x, y, *, dim=-1):
    """The dot product of ``x`` (conjugated) and ``y`` (broadcast) along ``dim``.

    >>> import webgrad as wg
    >>> wg.linalg.vecdot(wg.tensor([[1.0, 2.0], [3.0, 4.0]]), wg.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    floating("linalg.vecdot", x, "x")
    floating("linalg.vecdot", y, "y")
    same_dtype("linalg.vecdot", x, y)
    x, y = broadcast_tensors(x, y)
    normalize_axis(dim, x.ndim, "linalg.vecdot")
    return (x.conj() * y).sum(dim)


def vdot(input, other):
    """The dot product of two 1-D tensors, the first conjugated (``torch.vdot``).

    >>> import webgrad as wg
    >>> wg.vdot(wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0])).item()
    11.0
    """
    check_tensor("vdot", input)
    check_tensor("vdot", other, "other")
    same_dtype("vdot", input, other)
    return products.dot(input.conj(), other)


def _chain_order(dims):
    """PyTorch's (and the textbook's) cheapest parenthesization of a chain of matrices whose shapes
    are ``dims[i] x dims[i + 1]``: ``split[i][j]`` is where the product of i..j splits."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min((cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                                          for k in range(i, j))
    return split


def _chain(tensors, split, i, j):
    if i == j:
        return tensors[i]
    k = split[i][j]
    return products.matmul(_chain(tensors, split, i, k), _chain(tensors, split, k + 1, j))


def multi_dot(tensors):
    """The product of a chain of matrices in the cheapest order; the first may be a 1-D row vector
    and the last a 1-D column vector (their dims are dropped from the result), as PyTorch's.

    >>> import webgrad as wg
    >>> wg.linalg.multi_dot([wg.ones(3), wg.ones(3, 2), wg.ones(2)]).item()
    6.0
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        check_tensor("multi_dot", t, f"tensor {i}")
        want = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in want:
            raise RuntimeError(f"multi_dot(): tensor {i} must be {' or '.join(f'{w}D' for w in want)}, got shape "
                               f"{tuple(t.shape)}")
        same_dtype("multi_dot", tensors[0], t)
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = [tensors[0].unsqueeze(0) if first else tensors[0], *tensors[1:-1],
            tensors[-1].unsqueeze(1) if last else tensors[-1]]
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(tensors[i].shape)} and "
                               f"{tuple(tensors[i + 1].shape)} cannot be multiplied")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    out = _chain(mats, _chain_order(dims), 0, len(mats) - 1)
    out = out.squeeze(-1) if last else out
    return out.squeeze(0) if first else out


def chain_matmul(*matrices):
    """The product of 2-D matrices in the cheapest order (deprecated in PyTorch for ``linalg.multi_dot``,
    with its warning, once).

    >>> import webgrad as wg, warnings
    >>> with warnings.catch_warnings(record=True):
    ...     wg.chain_matmul(wg.ones(2, 3), wg.ones(3, 4)).shape
    webgrad.Size([2, 4])
    """
    deprecated("chain_matmul", "torch.linalg.multi_dot", "torch.chain_matmul is deprecated and will be removed in a "
               "future PyTorch release. Use torch.linalg.multi_dot instead, which accepts a list of two or more "
               "tensors rather than multiple parameters.")
    if len(matrices) == 1:
        return matrices[0].clone()
    for i, m in enumerate(matrices):
        if check_tensor("chain_matmul", m, f"matrix {i}").ndim != 2:
            raise RuntimeError(f"chain_matmul(): Expected 2D tensors, tensor {i} has shape {tuple(m.shape)}")
    return multi_dot(matrices)


def _cross_dim(input, other, dim, op):
    x, y = broadcast_tensors(check_tensor(op, input), check_tensor(op, other, "other"))
    if dim is None:   # torch.cross's deprecated default: the first dim of size 3
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.", UserWarning, stacklevel=3)
        dim = next((d for d, s in enumerate(x.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError(f"{op}: no dimension of size 3 in input of shape {tuple(x.shape)}")
    d = normalize_axis(dim, x.ndim, op)
    if x.shape[d] != 3:
        raise RuntimeError(f"{op}: inputs dimension {dim} must have length 3, got shapes {tuple(input.shape)} and "
                           f"{tuple(other.shape)}")
    return x, y, d


def _cross(x, y, d):
    """x[i+1] y[i+2] - x[i+2] y[i+1] (indices mod 3) for each i along ``d``."""
    return roll(x, -1, d) * roll(y, -2, d) - roll(x, -2, d) * roll(y, -1, d)


def linalg_cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (inputs broadcast).

    >>> import webgrad as wg
    >>> wg.linalg.cross(wg.tensor([1.0, 0.0, 0.0]), wg.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    same_dtype("linalg.cross", check_tensor("linalg.cross", input), check_tensor("linalg.cross", other, "other"))
    return labelled(_cross(*_cross_dim(input, other, dim, "linalg.cross")), "LinalgCrossBackward0")


def cross(input, other, dim=None):
    """``torch.cross``: the cross product along ``dim`` (default: the first dim of size 3, deprecated,
    with PyTorch's warning).

    >>> import webgrad as wg
    >>> wg.cross(wg.tensor([0.0, 1.0, 0.0]), wg.tensor([0.0, 0.0, 1.0]), dim=0).tolist()
    [1.0, 0.0, 0.0]
    """
    same_dtype("cross", check_tensor("cross", input), check_tensor("cross", other, "other"))
    return labelled(_cross(*_cross_dim(input, other, dim, "cross")), "LinalgCrossBackward0")


def matrix_power(A, n):
    """``A`` (square matrices, batched) to the integer power ``n``: the identity for 0, powers of the
    inverse for negative ``n``, by PyTorch's binary decomposition (the same products in the same order).

    >>> import webgrad as wg
    >>> wg.linalg.matrix_power(wg.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    check_tensor("linalg.matrix_power", A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, got shape {tuple(A.shape)}")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    if n == 0:
        return eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape).clone()
    if n < 0:
        from .lu_ops import inv
        A, n = inv(square("linalg.matrix_power", A)), -n
    return _power(A, n)


def _power(a, n):
    if n <= 3:
        return (a.clone(), a @ a, (a @ a) @ a)[n - 1]
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else z @ z
        if bit:
            result = z if result is None else result @ z
    return result
