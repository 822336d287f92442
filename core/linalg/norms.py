"""Norms: linalg.vector_norm, matrix_norm, norm, and torch's dist, frobenius_norm, nuclear_norm.
Vector norms are ``webgrad.norm``'s (with PyTorch's gradients at 0 and at ties); matrix norms are
sums and extremes of them, or of the singular values (ord 2, -2, 'nuc')."""
from __future__ import annotations

import math
import numbers

from ..ops.common import check_tensor
from ..ops.reduce import norm as _vector_norm
from ..shapes import normalize_axis
from .errors import floating, matrices


def _number(op, ord):
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise TypeError(f"{op}: argument 'ord' must be a number, not {type(ord).__name__}")
    return float(ord) if math.isinf(ord) else ord


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ``ord``-norm of ``x`` over ``dim`` (an int or tuple; all elements by default): ord 2, 1,
    inf, -inf, 0 (the count of nonzeros) or any other number, computed in ``dtype`` when given.

    >>> import webgrad as wg
    >>> wg.linalg.vector_norm(wg.tensor([[3.0, 4.0], [0.0, 1.0]]), dim=1).tolist()
    [5.0, 1.0]
    """
    floating("linalg.vector_norm", x, "x", complex_ok=True)
    ord = _number("linalg.vector_norm", ord)
    return _vector_norm(x, ord, dim=dim, keepdim=keepdim, dtype=dtype)


def _dims(op, A, dim):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple of ints, got {dim!r}")
    d0, d1 = (normalize_axis(d, A.ndim, op) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different, got {tuple(dim)}")
    return d0, d1


def _spectral(A, d0, d1, keepdim, pick):
    from .spectral_ops import svdvals
    s = svdvals(A.movedim((d0, d1), (-2, -1)))
    out = pick(s)
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


# ord -> (the norm of each column (or row) summed along the first dim, or the singular values' reduction)
_MATRIX = {
    1: lambda A, d0, d1, k: A.abs().sum(d0, keepdim=True).amax(d1, keepdim=True),
    -1: lambda A, d0, d1, k: A.abs().sum(d0, keepdim=True).amin(d1, keepdim=True),
    math.inf: lambda A, d0, d1, k: A.abs().sum(d1, keepdim=True).amax(d0, keepdim=True),
    -math.inf: lambda A, d0, d1, k: A.abs().sum(d1, keepdim=True).amin(d0, keepdim=True),
}
_SINGULAR = {2: lambda s: s.amax(-1), -2: lambda s: s.amin(-1), "nuc": lambda s: s.sum(-1)}


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of ``A`` over the two dims ``dim``: 'fro' (the default), 'nuc' (the sum of the
    singular values), 2 and -2 (the largest and smallest singular value), 1, -1, inf, -inf (the largest
    or smallest absolute column or row sum).

    >>> import webgrad as wg
    >>> wg.linalg.matrix_norm(wg.tensor([[1.0, -2.0], [3.0, 4.0]]), 1).item()
    6.0
    """
    op = "linalg.matrix_norm"
    matrices(op, A, complex_ok=True)
    A = A if dtype is None else A.to(dtype)
    d0, d1 = _dims(op, A, dim)
    if ord == "fro":
        return _vector_norm(A, 2, dim=(d0, d1), keepdim=keepdim)
    if ord in _SINGULAR and not isinstance(ord, bool):
        return _spectral(A, d0, d1, keepdim, _SINGULAR[ord])
    rule = _MATRIX.get(ord) if not isinstance(ord, (bool, str)) else None
    if rule is None:
        raise RuntimeError(f"{op}: Order {ord} not supported (use 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2)")
    if 0 in (A.shape[d0], A.shape[d1]):
        raise RuntimeError(f"{op}: cannot compute the {ord} norm of an empty matrix of shape {tuple(A.shape)}")
    out = rule(A, d0, d1, keepdim)
    return out if keepdim else out.squeeze((d0, d1))


def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (``dim`` an int or 1-tuple, or a 1-D input) or a matrix norm (``dim`` a 2-tuple,
    or a 2-D input with ``ord`` given); with neither ``ord`` nor ``dim``, the 2-norm of all elements.

    >>> import webgrad as wg
    >>> wg.linalg.norm(wg.tensor([[3.0, 0.0], [0.0, 4.0]])).item()
    5.0
    >>> wg.linalg.norm(wg.tensor([[3.0, 0.0], [0.0, 4.0]]), 1).item()
    4.0
    """
    op = "linalg.norm"
    floating(op, input, "input", complex_ok=True)
    if isinstance(dim, int) and not isinstance(dim, bool):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return _vector_norm(input, 2, dim=None, keepdim=keepdim, dtype=dtype)
        if input.ndim not in (1, 2):
            raise RuntimeError(f"{op}: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{input.ndim}D.")
        dim = tuple(range(input.ndim))
    dim = tuple(dim)
    if len(dim) == 2:
        return matrix_norm(input, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) != 1:
        raise RuntimeError(f"{op}: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if isinstance(ord, str):
        raise RuntimeError(f"{op}: ord {ord!r} needs a matrix: give dim as a 2-tuple")
    return vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast), over all elements.

    >>> import webgrad as wg
    >>> wg.dist(wg.tensor([1.0, 1.0]), wg.tensor([4.0, 5.0])).item()
    5.0
    """
    check_tensor("dist", input)
    check_tensor("dist", other, "other")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dist: expected both inputs to have the same dtype, got {input.dtype.name} and "
                           f"{other.dtype.name}")
    return vector_norm(input - other, _number("dist", p))


def frobenius_norm(input, dim=(-2, -1), keepdim=False):
    """``torch.frobenius_norm``: the 2-norm of the elements over ``dim``.

    >>> import webgrad as wg
    >>> wg.frobenius_norm(wg.tensor([[3.0, 0.0], [0.0, 4.0]])).item()
    5.0
    """
    floating("frobenius_norm", input, "input")
    return _vector_norm(input, 2, dim=tuple(dim) if isinstance(dim, (tuple, list)) else dim, keepdim=keepdim)


def nuclear_norm(input, dim=(-2, -1), keepdim=False):
    """``torch.nuclear_norm``: the sum of the singular values of the matrices over ``dim``.

    >>> import webgrad as wg
    >>> round(wg.nuclear_norm(wg.tensor([[3.0, 0.0], [0.0, -4.0]])).item(), 4)
    7.0
    """
    if isinstance(dim, bool):      # nuclear_norm(x, keepdim): PyTorch's overload without dim
        dim, keepdim = (-2, -1), dim
    return matrix_norm(input, "nuc", dim, keepdim)
