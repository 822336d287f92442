"""Mask ops: ``masked_select``, ``masked_scatter``, ``argwhere``, ``count_nonzero``. Built on the
NonZero kernel (``indexing.nonzero``), Gather and IndexCopy; a mask's count of True elements depends
on its data, so a GPU backend reads it back where the result's shape needs it, as PyTorch does."""
from __future__ import annotations

from .. import kernel_names as K
from ..dtypes import bool_
from ..engine import run_kernel
from ..shapes import broadcast_shapes, normalize_axes
from ..tensor import Tensor
from . import movement as M
from . import reduce
from .common import check_tensor, scalar_tensor
from .indexing import mask_positions, nonzero, select_unique


def _bool_mask(op, mask) -> Tensor:
    check_tensor(op, mask, "mask")
    if mask._dtype is not bool_:
        raise TypeError(f"{op}: mask must be a bool tensor, got {mask.dtype.name}")
    return mask


def _flat_to(x, shape) -> Tensor:
    return M.reshape(M.expand(x, shape), -1)


def masked_select(input, mask) -> Tensor:
    """The elements of ``input`` where the bool ``mask`` is True, as a 1-d tensor in row-major order;
    ``input`` and ``mask`` broadcast together (``torch.masked_select``).

    >>> import webgrad as wg
    >>> x = wg.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> wg.masked_select(x, wg.tensor([True, False])).tolist()
    [1.0, 3.0]
    """
    check_tensor("masked_select", input)
    _bool_mask("masked_select", mask)
    shape = broadcast_shapes(input.shape, mask.shape, op="masked_select")
    return select_unique(_flat_to(input, shape), 0, mask_positions(M.expand(mask, shape)))


def masked_scatter(input, mask, source) -> Tensor:
    """A copy of ``input`` whose elements where ``mask`` is True take ``source``'s elements in order
    (row-major; ``source`` needs at least as many elements as ``mask`` has True), ``input`` and
    ``mask`` broadcast together (``torch.masked_scatter``).

    >>> import webgrad as wg
    >>> wg.zeros(4).masked_scatter(wg.tensor([True, False, True, False]), wg.tensor([5.0, 6.0, 7.0])).tolist()
    [5.0, 0.0, 6.0, 0.0]
    """
    op = "masked_scatter"
    check_tensor(op, input)
    _bool_mask(op, mask)
    check_tensor(op, source, "source")
    if source._dtype is not input._dtype:
        raise TypeError(f"{op}: source dtype {source.dtype.name} differs from the input's {input.dtype.name}")
    shape = broadcast_shapes(input.shape, mask.shape, op=op)
    at = mask_positions(M.expand(mask, shape))
    count = at.shape[0]
    if count > source.numel():
        raise ValueError(f"{op}: source has {source.numel()} elements, fewer than the mask's {count} True "
                         f"elements (shape {tuple(mask.shape)})")
    taken = M._slice_dim(M.reshape(source, -1), 0, 0, count)
    return M.reshape(run_kernel(K.INDEX_COPY, _flat_to(input, shape), at, taken, axis=0), shape)


def masked_scatter_(input, mask, source) -> Tensor:
    """In-place ``masked_scatter`` (``mask`` broadcasts to ``input``'s shape).

    >>> import webgrad as wg
    >>> t = wg.zeros(3); _ = t.masked_scatter_(wg.tensor([False, True, True]), wg.tensor([1.0, 2.0])); t.tolist()
    [0.0, 1.0, 2.0]
    """
    if broadcast_shapes(input.shape, _bool_mask("masked_scatter_", mask).shape, op="masked_scatter_") != input.shape:
        raise ValueError(f"masked_scatter_: mask of shape {tuple(mask.shape)} does not broadcast to the input's "
                         f"shape {tuple(input.shape)}")
    return input._assign(masked_scatter(input, mask, source), "masked_scatter_")


def argwhere(input) -> Tensor:
    """The coordinates of ``input``'s nonzero elements, ``(count, input.ndim)`` int64 (``torch.argwhere``,
    the same as ``nonzero``).

    >>> import webgrad as wg
    >>> wg.argwhere(wg.tensor([0.0, 2.0, 3.0])).tolist()
    [[1], [2]]
    """
    check_tensor("argwhere", input)
    return nonzero(input)


def count_nonzero(input, *dims, dim=None) -> Tensor:
    """How many elements of ``input`` are nonzero over ``dim`` (an int, a tuple or several ints, or all dims),
    as int64 (``torch.count_nonzero``).

    >>> import webgrad as wg
    >>> x = wg.tensor([[0, 1, 2], [0, 0, 3]])
    >>> wg.count_nonzero(x).item(), x.count_nonzero(dim=1).tolist()
    (3, [2, 1])
    """
    check_tensor("count_nonzero", input)
    dim = M._dims_or("count_nonzero", dims, dim, "dim")
    flags = run_kernel(K.NOT_EQUAL, input, scalar_tensor(0, input._dtype, input._backend))
    return reduce.sum(flags, None if dim is None else normalize_axes(dim, input.ndim, "count_nonzero"))


METHODS = {"masked_select": masked_select, "masked_scatter": masked_scatter, "masked_scatter_": masked_scatter_,
           "argwhere": argwhere, "count_nonzero": count_nonzero}

__all__ = ["masked_select", "masked_scatter", "argwhere", "count_nonzero"]
