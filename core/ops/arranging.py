"""Ops that arrange a tensor's elements into new shapes: rotations, diagonals and blocks, products of
arrays (``kron``, ``tensordot``), ``combinations``, ``vander``, and PyTorch's other names for splitting.
Each is a composition of movement, indexing and linear-algebra ops, so it runs on every backend with
its gradient.

>>> import webgrad as wg
>>> wg.rot90(wg.tensor([[1, 2], [3, 4]])).tolist()
[[2, 4], [1, 3]]
"""
from __future__ import annotations

import functools
import itertools

from ..dtypes import int64, promote
from ..shapes import normalize_axis, numel, unique_axes
from ..tensor import Tensor, tensor
from . import movement as M
from .common import check_tensor
from .creation import ones, zeros
from .linalg import diag, matmul
from .reduce import cumprod
from .scatters import diagonal_scatter


def rot90(input, k=1, dims=(0, 1)) -> Tensor:
    """``input`` rotated by ``k`` quarter turns in the plane ``dims``, from the first dim towards the
    second (a copy).

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2], [3, 4]]).rot90(2).tolist()
    [[4, 3], [2, 1]]
    """
    check_tensor("rot90", input)
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (normalize_axis(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = {dims[0]} and "
                           f"dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return M.transpose(M.flip(input, d1), d0, d1)
    if k == 2:
        return M.flip(input, (d0, d1))
    if k == 3:
        return M.transpose(M.flip(input, d0), d0, d1)
    return M.clone(input)


def diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor:
    """A tensor whose diagonals ``offset`` in the planes ``dim1``, ``dim2`` hold ``input``'s last dim
    (zeros elsewhere), as ``torch.diag_embed``.

    >>> import webgrad as wg
    >>> wg.diag_embed(wg.tensor([[1, 2]])).tolist()
    [[[1, 0], [0, 2]]]
    """
    check_tensor("diag_embed", input)
    ndim = input.ndim + 1
    d1, d2 = normalize_axis(dim1, ndim, "diag_embed"), normalize_axis(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    m = (input.shape[-1] if input.ndim else 1) + abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, m)
    src = input if input.ndim else M.reshape(input, (1,))
    return diagonal_scatter(zeros(tuple(shape), dtype=input.dtype, device=input._backend), src, offset, d1, d2)


def diagflat(input, offset=0) -> Tensor:
    """A square matrix with the flattened ``input`` on its diagonal ``offset``.

    >>> import webgrad as wg
    >>> wg.diagflat(wg.tensor([[1, 2]])).tolist()
    [[1, 0], [0, 2]]
    """
    return diag(M.reshape(check_tensor("diagflat", input), -1), offset)


def block_diag(*tensors) -> Tensor:
    """The tensors (0-, 1- or 2-d) as the blocks of a block-diagonal matrix, in one promoted dtype.

    >>> import webgrad as wg
    >>> wg.block_diag(wg.tensor([[1, 2]]), wg.tensor(3)).tolist()
    [[1, 2, 0], [0, 0, 3]]
    """
    blocks = []
    for i, t in enumerate(tensors):
        check_tensor("block_diag", t, f"tensors[{i}]")
        if t.ndim > 2:
            raise RuntimeError(f"block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
        blocks.append(M.reshape(t, (1, -1) if t.ndim < 2 else tuple(t.shape)))
    if not blocks:
        return zeros(1, 0)
    dtype = functools.reduce(promote, (b.dtype for b in blocks))
    width, start, rows = sum(b.shape[1] for b in blocks), 0, []
    for b in blocks:
        rows.append(M.pad(b.to(dtype), (start, width - start - b.shape[1])))
        start += b.shape[1]
    return M.cat(rows, 0)


def kron(input, other) -> Tensor:
    """The Kronecker product: ``out[i * other.shape + j] = input[i] * other[j]`` over the dims of the
    longer shape (the other padded with leading 1s).

    >>> import webgrad as wg
    >>> wg.kron(wg.tensor([1, 2]), wg.tensor([1, 10])).tolist()
    [1, 10, 2, 20]
    """
    check_tensor("kron", input)
    check_tensor("kron", other, "other")
    n = max(input.ndim, other.ndim)
    a = (1,) * (n - input.ndim) + tuple(input.shape)
    b = (1,) * (n - other.ndim) + tuple(other.shape)
    x = M.reshape(input, [p for s in a for p in (s, 1)])
    y = M.reshape(other, [p for s in b for p in (1, s)])
    return M.reshape(x * y, tuple(i * j for i, j in zip(a, b)))


def _tensordot_dims(op, a, b, dims):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"{op}: tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"{op}: tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    if len(dims) != 2:
        raise RuntimeError(f"{op}: tensordot expects dims to be an int or a pair of lists of dims, got {dims!r}")
    da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError(f"{op}: both dimension lists should have same length, got {da} and {db}")
    return list(unique_axes(da, a.ndim, op)), list(unique_axes(db, b.ndim, op))


def tensordot(a, b, dims=2) -> Tensor:
    """The sum of products of ``a`` and ``b`` over the dims ``dims`` names: an int (the last ``dims``
    of ``a`` with the first of ``b``) or a pair of lists; the free dims of ``a`` then ``b`` remain.

    >>> import webgrad as wg
    >>> wg.tensordot(wg.ones(2, 3), wg.ones(3, 4), dims=1).shape
    webgrad.Size([2, 4])
    """
    check_tensor("tensordot", a, "a")
    check_tensor("tensordot", b, "b")
    da, db = _tensordot_dims("tensordot", a, b, dims)
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"tensordot: contracted dimensions need to match, but first has size {a.shape[i]} "
                               f"in dim {i} and second has size {b.shape[j]} in dim {j}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = numel([a.shape[d] for d in da])
    x = M.reshape(M.permute(a, fa + da), (numel([a.shape[d] for d in fa]), k))
    y = M.reshape(M.permute(b, db + fb), (k, numel([b.shape[d] for d in fb])))
    return M.reshape(matmul(x, y), tuple(a.shape[d] for d in fa) + tuple(b.shape[d] for d in fb))


def combinations(input, r=2, with_replacement=False) -> Tensor:
    """The ``r``-element combinations of a 1-d tensor's elements, one per row (as ``itertools.combinations``,
    or ``combinations_with_replacement``).

    >>> import webgrad as wg
    >>> wg.combinations(wg.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    check_tensor("combinations", input)
    if input.ndim != 1:
        raise RuntimeError(f"combinations: Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"combinations: Expect a non-negative number, but got {r}")
    if r == 0:
        return zeros(0, dtype=input.dtype, device=input._backend)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if not rows:
        return zeros(0, r, dtype=input.dtype, device=input._backend)
    index = tensor(rows, dtype=int64, device=input._backend)
    return M.reshape(input[M.reshape(index, -1)], (len(rows), r))


def vander(x, N=None, increasing=False) -> Tensor:
    """The Vandermonde matrix of a 1-d ``x``: columns ``x**(N-1), ..., x**0`` (ascending powers with
    ``increasing``), made by a cumulative product as PyTorch's.

    >>> import webgrad as wg
    >>> wg.vander(wg.tensor([1, 2, 3]), 3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    check_tensor("vander", x, "x")
    if x.ndim != 1:
        raise RuntimeError(f"vander: x must be a one-dimensional tensor, got shape {tuple(x.shape)}")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError(f"vander: N must be non-negative, got {n}")
    dtype = promote(x.dtype, int64) if not x.dtype.is_floating else x.dtype
    if n == 0:
        return zeros(x.shape[0], 0, dtype=dtype, device=x._backend)
    columns = [ones(x.shape[0], 1, dtype=dtype, device=x._backend)]
    if n > 1:
        columns.append(M.expand(M.unsqueeze(x.to(dtype), 1), (x.shape[0], n - 1)))
    out = cumprod(M.cat(columns, 1), 1)
    return out if increasing else M.flip(out, 1)


def unravel_index(indices, shape) -> tuple:
    """The coordinates in ``shape`` of the flat (row-major) ``indices``: one tensor per dim.

    >>> import webgrad as wg
    >>> [t.tolist() for t in wg.unravel_index(wg.tensor([4, 1]), (2, 3))]
    [[1, 0], [1, 1]]
    """
    check_tensor("unravel_index", indices, "indices")
    if indices.dtype.is_floating or indices.dtype.name == "bool":
        raise TypeError(f"unravel_index: expected 'indices' to be integer dtype, but got {indices.dtype.name}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"unravel_index: 'shape' cannot have negative values, but got {shape}")
    rest, out = indices.to(int64), []
    for n in reversed(shape):
        out.append(rest % n)
        rest = rest // n
    return tuple(reversed(out))


def split_with_sizes(input, split_sizes, dim=0) -> tuple:
    """``split`` into pieces of the given sizes, which must sum to the dim's size.

    >>> import webgrad as wg
    >>> [t.tolist() for t in wg.split_with_sizes(wg.arange(3), [1, 2])]
    [[0], [1, 2]]
    """
    return M.split(input, list(split_sizes), dim)


def unsafe_split(input, split_size, dim=0) -> tuple:
    """``split`` (PyTorch's unsafe form skips autograd's checks of in-place changes to the pieces; the
    pieces here are views, checked as any)."""
    return M.split(input, split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0) -> tuple:
    """``split_with_sizes`` (see ``unsafe_split``)."""
    return M.split(input, list(split_sizes), dim)


def unsafe_chunk(input, chunks, dim=0) -> tuple:
    """``chunk`` (see ``unsafe_split``)."""
    return M.chunk(input, chunks, dim)


METHODS = {"rot90": rot90, "diag_embed": diag_embed, "diagflat": diagflat, "kron": kron,
           "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split,
           "unsafe_split_with_sizes": unsafe_split_with_sizes, "unsafe_chunk": unsafe_chunk}

__all__ = ["rot90", "diag_embed", "diagflat", "block_diag", "kron", "tensordot", "combinations", "vander", "unravel_index",
           "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"]
