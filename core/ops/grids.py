"""Grids of coordinates: ``meshgrid``, ``cartesian_prod``, ``triu_indices``, ``tril_indices``."""
from __future__ import annotations

import warnings

from ..dtypes import int64, to_dtype
from ..layouts import check_factory
from ..tensor import Tensor, tensor
from .common import check_tensor
from .creation import _backend
from .movement import _check_same_backend, expand, reshape, stack


def _tensors(op: str, tensors) -> list:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = [check_tensor(op, t, "each tensor") for t in tensors]
    if not out:
        raise ValueError(f"{op}: expects a non-empty list of tensors")
    if any(t.ndim > 1 for t in out):
        raise ValueError(f"{op}: expects 0-d or 1-d tensors, got shapes {[tuple(t.shape) for t in out]}")
    _check_same_backend(op, out)
    return out


def meshgrid(*tensors, indexing=None) -> tuple:
    """Coordinate grids from 1-d tensors: with ``indexing='ij'`` (the default, with PyTorch's warning
    when not given) output ``k`` varies along dim ``k``; with ``'xy'`` the first two dims are swapped.

    >>> import webgrad as wg
    >>> x, y = wg.meshgrid(wg.arange(2), wg.arange(3), indexing="ij")
    >>> x.tolist(), y.shape
    ([[0, 0, 0], [1, 1, 1]], webgrad.Size([2, 3]))
    """
    ts = _tensors("meshgrid", tensors)
    if indexing is None:
        warnings.warn("meshgrid: in an upcoming release, it will be required to pass the indexing argument "
                      "(as torch.meshgrid); using indexing='ij'", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    sizes = [t.numel() for t in ts]
    order = list(range(len(ts)))
    if indexing == "xy" and len(ts) >= 2:
        order[0], order[1] = 1, 0
    shape = tuple(sizes[i] for i in order)
    out = []
    for k, t in enumerate(ts):
        at = order.index(k)
        out.append(expand(reshape(t, tuple(-1 if d == at else 1 for d in range(len(ts)))), shape))
    return tuple(out)


def cartesian_prod(*tensors) -> Tensor:
    """The Cartesian product of 1-d tensors, one row per combination (a 1-d tensor for one input).

    >>> import webgrad as wg
    >>> wg.cartesian_prod(wg.tensor([1, 2]), wg.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    ts = _tensors("cartesian_prod", tensors)
    if len(ts) == 1:
        return reshape(ts[0], (-1,))
    grids = meshgrid(*ts, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def _triangle_indices(op, row, col, offset, options, keep):
    dtype, device, layout, requires_grad, pin_memory = options
    check_factory(op, layout, pin_memory)
    for name, value in (("row", row), ("col", col), ("offset", offset)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__}")
    if row < 0 or col < 0:
        raise ValueError(f"{op}: row and col must be non-negative, got row={row}, col={col}")
    pairs = [(r, c) for r in range(row) for c in keep(r, col, offset)]
    rows, cols = [p[0] for p in pairs], [p[1] for p in pairs]
    out = tensor([rows, cols], dtype=to_dtype(dtype), device=_backend(None, device)).reshape(2, len(pairs))
    return out.requires_grad_() if requires_grad else out


def tril_indices(row, col, offset=0, *, dtype=int64, device=None, layout=None, requires_grad=False,
                 pin_memory=False) -> Tensor:
    """The (row, column) coordinates, as a 2 x N tensor in row-major order, of the lower triangle
    (``c - r <= offset``) of a ``row`` x ``col`` matrix.

    >>> import webgrad as wg
    >>> wg.tril_indices(3, 3, -1).tolist()
    [[1, 2, 2], [0, 0, 1]]
    """
    return _triangle_indices("tril_indices", row, col, offset, (dtype, device, layout, requires_grad, pin_memory),
                             lambda r, n, k: range(0, max(0, min(n, r + k + 1))))


def triu_indices(row, col, offset=0, *, dtype=int64, device=None, layout=None, requires_grad=False,
                 pin_memory=False) -> Tensor:
    """The (row, column) coordinates, as a 2 x N tensor in row-major order, of the upper triangle
    (``c - r >= offset``) of a ``row`` x ``col`` matrix.

    >>> import webgrad as wg
    >>> wg.triu_indices(2, 3, 1).tolist()
    [[0, 0, 1], [1, 2, 2]]
    """
    return _triangle_indices("triu_indices", row, col, offset, (dtype, device, layout, requires_grad, pin_memory),
                             lambda r, n, k: range(max(0, r + k), n))


METHODS: dict = {}

__all__ = ["meshgrid", "cartesian_prod", "tril_indices", "triu_indices"]
