"""numpy-style joins, splits and reshapes PyTorch has, composed from movement ops:
``atleast_1d/2d/3d``, ``hstack``/``vstack``/``dstack``/``column_stack``/``row_stack``,
``broadcast_tensors``/``broadcast_shapes``, ``tensor_split``/``hsplit``/``vsplit``/``dsplit``,
``ravel``, ``fliplr``/``flipud``, ``take`` and ``repeat_interleave``."""
from __future__ import annotations

import operator

from ..dtypes import int64
from ..shapes import broadcast_shapes as _broadcast, normalize_axis
from ..size import Size
from ..size import size_of
from ..tensor import Tensor, tensor
from . import movement as M
from .common import check_tensor, tensor_sequence
from .indexing import index_select


def _tensors(op, tensors) -> list:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return [check_tensor(op, t, "each tensor") for t in tensors]


def _at_least(op, ndim, tensors, place):
    out = [t if t.ndim >= ndim else M.reshape(t, place(t.shape)) for t in _tensors(op, tensors)]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors):
    """Each tensor with at least one dim (0-d becomes shape (1,)); one tensor in, one out.

    >>> import webgrad as wg
    >>> wg.atleast_1d(wg.tensor(3.0)).shape
    webgrad.Size([1])
    """
    return _at_least("atleast_1d", 1, tensors, lambda s: (1,))


def atleast_2d(*tensors):
    """Each tensor with at least two dims (a 1-d (n,) becomes (1, n)).

    >>> import webgrad as wg
    >>> wg.atleast_2d(wg.ones(3)).shape
    webgrad.Size([1, 3])
    """
    return _at_least("atleast_2d", 2, tensors, lambda s: (1,) * (2 - len(s)) + tuple(s))


def atleast_3d(*tensors):
    """Each tensor with at least three dims ((n,) becomes (1, n, 1), (m, n) becomes (m, n, 1)).

    >>> import webgrad as wg
    >>> wg.atleast_3d(wg.ones(2, 3)).shape
    webgrad.Size([2, 3, 1])
    """
    shapes = {0: lambda s: (1, 1, 1), 1: lambda s: (1, s[0], 1), 2: lambda s: tuple(s) + (1,)}
    return _at_least("atleast_3d", 3, tensors, lambda s: shapes[len(s)](s))


def hstack(tensors):
    """Join along dim 1 (dim 0 for 1-d tensors).

    >>> import webgrad as wg
    >>> wg.hstack([wg.ones(2), wg.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    ts = _listed(atleast_1d(*tensor_sequence("hstack", tensors)))
    return M.cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along dim 0 after ``atleast_2d``.

    >>> import webgrad as wg
    >>> wg.vstack([wg.ones(2), wg.zeros(2)]).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    return M.cat(_listed(atleast_2d(*tensor_sequence("vstack", tensors))), 0)


row_stack = vstack


def dstack(tensors):
    """Join along dim 2 after ``atleast_3d``.

    >>> import webgrad as wg
    >>> wg.dstack([wg.ones(2), wg.zeros(2)]).shape
    webgrad.Size([1, 2, 2])
    """
    return M.cat(_listed(atleast_3d(*tensor_sequence("dstack", tensors))), 2)


def column_stack(tensors):
    """Join as columns: 0-d and 1-d tensors become columns (n, 1), others join along dim 1.

    >>> import webgrad as wg
    >>> wg.column_stack([wg.tensor([1, 2]), wg.tensor([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """
    ts = [M.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensor_sequence("column_stack", tensors)]
    return M.cat(ts, 1)


def _listed(x):
    return [x] if isinstance(x, Tensor) else list(x)


def broadcast_shapes(*shapes) -> Size:
    """The shape the given shapes broadcast to (ints count as 1-d shapes), a ``Size`` as
    ``torch.broadcast_shapes``'s.

    >>> import webgrad as wg
    >>> wg.broadcast_shapes((2, 1), (3,))
    webgrad.Size([2, 3])
    """
    return size_of(_broadcast(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes], op="broadcast_shapes"))


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common shape (views, as ``expand`` gives).

    >>> import webgrad as wg
    >>> [t.shape for t in wg.broadcast_tensors(wg.ones(2, 1), wg.ones(3))]
    [webgrad.Size([2, 3]), webgrad.Size([2, 3])]
    """
    ts = _tensors("broadcast_tensors", tensors)
    shape = _broadcast(*[tuple(t.shape) for t in ts], op="broadcast_tensors")
    return tuple(M.expand(t, shape) for t in ts)


def tensor_split(input, indices_or_sections, dim=0) -> tuple:
    """Split into ``n`` nearly equal pieces (the first ``size % n`` one longer), or at the given
    indices, along ``dim``: views, as ``torch.tensor_split``.

    >>> import webgrad as wg
    >>> [t.tolist() for t in wg.arange(7).tensor_split(3)]
    [[0, 1, 2], [3, 4], [5, 6]]
    """
    check_tensor("tensor_split", input)
    d = normalize_axis(dim, input.ndim, "tensor_split")
    n = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {k}")
        cuts = [i * (n // k) + min(i, n % k) for i in range(1, k)]
    else:
        cuts = [operator.index(i) for i in indices_or_sections]
    bounds = [0] + [min(max(c if c >= 0 else c + n, 0), n) for c in cuts] + [n]
    return tuple(M.narrow(input, d, lo, max(hi, lo) - lo) for lo, hi in zip(bounds, bounds[1:]))


def _split_along(op, dim, min_ndim):
    def fn(input, indices_or_sections):
        check_tensor(op, input)
        if input.ndim < min_ndim:
            raise RuntimeError(f"{op} requires a tensor with at least {min_ndim} dimension(s), but got a tensor with "
                               f"{input.ndim} dimensions (shape {tuple(input.shape)})")
        d = 0 if op == "hsplit" and input.ndim == 1 else dim
        if isinstance(indices_or_sections, int) and input.shape[d] % indices_or_sections:
            raise RuntimeError(f"{op} attempted to split along dimension {d}, but the size of the dimension "
                               f"{input.shape[d]} is not divisible by the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``tensor_split`` along dim {dim}{' (0 for 1-d tensors)' if op == 'hsplit' else ''}; an int " \
                 f"must divide that dim, as ``torch.{op}``."
    return fn


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


def ravel(input):
    """The elements in row-major order as a 1-d tensor (a view when strides allow, as ``reshape(-1)``).

    >>> import webgrad as wg
    >>> wg.ravel(wg.tensor([[1, 2], [3, 4]])).tolist()
    [1, 2, 3, 4]
    """
    return M.reshape(check_tensor("ravel", input), -1)


def fliplr(input):
    """Reverse dim 1 (columns), as ``torch.fliplr``; needs at least 2 dims.

    >>> import webgrad as wg
    >>> wg.fliplr(wg.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 1], [4, 3]]
    """
    if check_tensor("fliplr", input).ndim < 2:
        raise RuntimeError(f"fliplr: input must be >= 2-d, got shape {tuple(input.shape)}")
    return M.flip(input, 1)


def flipud(input):
    """Reverse dim 0 (rows), as ``torch.flipud``; needs at least 1 dim.

    >>> import webgrad as wg
    >>> wg.flipud(wg.tensor([1, 2, 3])).tolist()
    [3, 2, 1]
    """
    if check_tensor("flipud", input).ndim < 1:
        raise RuntimeError("flipud: input must be >= 1-d")
    return M.flip(input, 0)


def take(input, index):
    """Elements of the flattened ``input`` at ``index`` (negative from the end), in ``index``'s shape.

    >>> import webgrad as wg
    >>> wg.take(wg.tensor([[4, 3], [5, 7]]), wg.tensor([0, 3, -1])).tolist()
    [4, 7, 7]
    """
    check_tensor("take", input)
    check_tensor("take", index, "index")
    if index._dtype.kind != "i":
        raise TypeError(f"take: index must be an integer tensor, got {index.dtype.name}")
    flat = M.reshape(input, -1)
    wrapped = index + (index < 0).to(index.dtype) * flat.shape[0]
    return M.reshape(index_select(flat, 0, M.reshape(wrapped, -1)), tuple(index.shape))


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (each slice along ``dim``; of the flattened tensor when ``dim`` is None)
    ``repeats`` times (an int, or a tensor with one count per element); with only a tensor of
    counts, ``repeat_interleave(counts)`` repeats its indices.

    >>> import webgrad as wg
    >>> wg.tensor([1, 2]).repeat_interleave(2).tolist(), wg.repeat_interleave(wg.tensor([2, 1])).tolist()
    ([1, 1, 2, 2], [0, 0, 1])
    """
    check_tensor("repeat_interleave", input)
    if repeats is None:   # repeat_interleave(counts): the indices repeated
        from .creation import arange
        return repeat_interleave(arange(input.shape[0], device=input._backend), input, 0)
    x, d = (M.reshape(input, -1), 0) if dim is None else (input, normalize_axis(dim, input.ndim, "repeat_interleave"))
    n = x.shape[d]
    counts = repeats.tolist() if isinstance(repeats, Tensor) else repeats
    counts = [operator.index(counts)] * n if isinstance(counts, int) or not isinstance(counts, list) else counts
    if len(counts) == 1 and n != 1:
        counts = counts * n
    if len(counts) != n or any(c < 0 for c in counts):
        raise RuntimeError(f"repeat_interleave: repeats must have the same size as input along dim ({n}) and be "
                           f"non-negative, got {counts}")
    positions = [i for i, c in enumerate(counts) for _ in range(c)]
    if output_size is not None and output_size != len(positions):
        raise RuntimeError(f"repeat_interleave: output_size {output_size} does not match the repeats' sum "
                           f"{len(positions)}")
    return index_select(x, d, tensor(positions, dtype=int64, device=x._backend))


METHODS = {"ravel": ravel, "fliplr": fliplr, "flipud": flipud, "take": take, "repeat_interleave": repeat_interleave,
           "tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit}

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
           "broadcast_shapes", "broadcast_tensors", "tensor_split", "hsplit", "vsplit", "dsplit", "ravel", "fliplr",
           "flipud", "take", "repeat_interleave"]
