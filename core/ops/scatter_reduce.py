"""``scatter_reduce``, ``index_reduce``, ``segment_reduce`` and ``put``: reductions of many values into one place, composed
of the indexing kernels (no kernel of their own).

Each source element has a flat position in the input (``scatter._positions``); ``include_self`` adds the
input's own elements to the values reduced at their places. 'sum' is ScatterAdd; 'mean' divides by the
counts (floor division for integers, as PyTorch); 'amax'/'amin' write the values in sorted order with
IndexCopy, whose last write wins, so each place keeps its largest (smallest) value, NaN winning, and their
gradient is shared evenly among the values equal to the result, as PyTorch's; 'prod' multiplies one
value per place at a time (as many rounds as the most values any place gets), so its gradient is the
exact product of the others.

>>> import webgrad as wg
>>> x = wg.tensor([1.0, 2.0, 3.0])
>>> x.scatter_reduce(0, wg.tensor([0, 0, 2]), wg.tensor([5.0, -1.0, 2.0]), "amax").tolist()
[5.0, 2.0, 3.0]
"""
from __future__ import annotations

from ..engine import no_grad, record_function
from ..dtypes import int64
from ..shapes import normalize_axis
from ..tensor import Tensor
from . import movement as M
from .binary import eq, floor_divide, maximum, where
from .common import check_tensor, inplace_method
from .creation import arange, ones, zeros
from .indexing import _int_index, gather, index_copy, index_put, scatter_add
from .scatter import _positions
from .sorting import argsort

_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _counts(n, pos, like):
    """How many of ``pos`` fall at each of ``n`` places, in ``like``'s dtype."""
    return scatter_add(zeros(n, dtype=like.dtype, device=like._backend), 0, pos, ones(pos.shape, dtype=like.dtype,
                                                                                     device=like._backend))


def _candidates(flat, pos, vals, include_self):
    """(positions, values) reduced: the source's, after the input's own when ``include_self``."""
    if not include_self:
        return pos, vals
    return M.cat([arange(flat.numel(), device=flat._backend), pos]), M.cat([flat, vals])


def _sum(flat, pos, vals, include_self):
    base = flat if include_self else where(_counts(flat.numel(), pos, pos) > 0, zeros((), dtype=flat.dtype,
                                                                                      device=flat._backend), flat)
    return scatter_add(base, 0, pos, vals)


def _mean(flat, pos, vals, include_self):
    hits = _counts(flat.numel(), pos, flat).detach()
    total = _sum(flat, pos, vals, include_self)
    count = hits + 1 if include_self else maximum(hits, ones((), dtype=flat.dtype, device=flat._backend))
    return total / count if flat.dtype.is_floating else floor_divide(total, count)


def _extreme(flat, pos, vals, include_self, largest):
    """The largest (smallest) candidate at each place: written in sorted order, the last write wins.
    Recorded as one node whose gradient is shared among the candidates equal to the result."""
    with no_grad():
        q, c = _candidates(flat.detach(), pos, vals.detach(), include_self)
        order = argsort(c if largest else -c, stable=True)
        out = index_copy(flat.detach(), 0, q[order], c[order])
    n = flat.numel()

    def grad(dy, saved, attrs):   # PyTorch's: the self values equal to the result count even without include_self
        q_all, c_all = _candidates(flat.detach(), pos, vals.detach(), True)
        tie = eq(c_all, out[q_all]).to(dy.dtype)
        ties = scatter_add(zeros(n, dtype=dy.dtype, device=dy._backend), 0, q_all, tie)
        share = tie * gather(dy / ties, 0, q_all)
        own = share[:n]
        if not include_self:
            own = where(_counts(n, pos, dy) > 0, zeros((), dtype=dy.dtype, device=dy._backend), own)
        return own, None, share[n:]
    record_function("ScatterReduce", grad, [flat, pos, vals], (out,))
    return out


def _prod(flat, pos, vals, include_self):
    n = pos.numel()
    be = flat._backend
    order = argsort(pos, stable=True)
    sp, sv = pos[order], vals[order]
    first = index_copy(zeros(flat.numel(), dtype=int64, device=be), 0, sp.flip(0), arange(n, device=be).flip(0))
    rank = arange(n, device=be) - first[sp]
    one = ones((), dtype=flat.dtype, device=be)
    out = flat if include_self else where(_counts(flat.numel(), pos, pos) > 0, one, flat)
    for r in range(int(rank.max().item()) + 1 if n else 0):
        taken = eq(rank, r)
        out = out * index_copy(ones(flat.numel(), dtype=flat.dtype, device=be), 0, sp[taken], sv[taken])
    return out


_REDUCE = {"sum": _sum, "mean": _mean, "prod": _prod,
           "amax": lambda f, p, v, s: _extreme(f, p, v, s, True), "amin": lambda f, p, v, s: _extreme(f, p, v, s, False)}


def _check_reduce(op, reduce, allowed):
    if reduce not in allowed:
        raise RuntimeError(f"{op}: reduce argument must be one of {', '.join(map(repr, allowed))}, got {reduce!r}")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True) -> Tensor:
    """A copy of ``input`` with ``src[i][j]`` reduced into place ``index[i][j]`` along ``dim`` (``dim=0``;
    other dims alike), as ``torch.scatter_reduce``: ``reduce`` is 'sum', 'prod', 'mean', 'amax' or
    'amin'; with ``include_self`` the input's own values take part, else a place reached by ``src``
    holds only what reached it (a place no index names keeps its value).

    >>> import webgrad as wg
    >>> wg.ones(2).scatter_reduce(0, wg.tensor([0, 0]), wg.tensor([2.0, 3.0]), "prod").tolist()
    [6.0, 1.0]
    >>> wg.ones(2).scatter_reduce(0, wg.tensor([0, 0]), wg.tensor([2.0, 3.0]), "mean", include_self=False).tolist()
    [2.5, 1.0]
    """
    op = "scatter_reduce"
    check_tensor(op, input)
    check_tensor(op, src, "src")
    index = _int_index(op, index)
    _check_reduce(op, reduce, _SCATTER_REDUCTIONS)
    if src._dtype is not input._dtype:
        raise RuntimeError(f"{op}: expected src ({src.dtype.name}) to have the input's dtype {input.dtype.name}")
    d = normalize_axis(dim, max(input.ndim, 1), op)
    if index.ndim != input.ndim or src.ndim != index.ndim or any(
            i > s or (k != d and i > n) for k, (i, s, n) in enumerate(zip(index.shape, src.shape, input.shape))):
        raise RuntimeError(f"{op}: index {tuple(index.shape)} must have the input's number of dims, be no larger "
                           f"than src {tuple(src.shape)}, and no larger than the input {tuple(input.shape)} "
                           f"outside dim {d}")
    if not index.numel():
        return M.clone(input)
    shape = tuple(input.shape)
    x = M.reshape(input, (1,)) if input.ndim == 0 else input
    values = src[tuple(slice(0, n) for n in index.shape)] if src.ndim else M.reshape(src, (1,))
    idx = M.reshape(index, (1,)) if index.ndim == 0 else index
    pos = _positions(x, idx, d)
    out = _REDUCE[reduce](M.reshape(x, -1), pos, M.reshape(values, -1), bool(include_self))
    return M.reshape(out, shape)


def index_reduce(input, dim, index, source, reduce, *, include_self=True) -> Tensor:
    """A copy of ``input`` with slice ``i`` of ``source`` along ``dim`` reduced into slice ``index[i]``, as
    ``torch.index_reduce``: ``reduce`` is 'prod', 'mean', 'amax' or 'amin'; ``include_self`` as in
    ``scatter_reduce``.

    >>> import webgrad as wg
    >>> wg.zeros(2, 2).index_reduce(0, wg.tensor([1, 1]), wg.tensor([[1.0, 5.0], [3.0, 2.0]]), "amax",
    ...                             include_self=False).tolist()
    [[0.0, 0.0], [3.0, 5.0]]
    """
    op = "index_reduce"
    check_tensor(op, input)
    check_tensor(op, source, "source")
    index = _int_index(op, index)
    _check_reduce(op, reduce, _INDEX_REDUCTIONS)
    x = M.reshape(input, (1,)) if input.ndim == 0 else input
    s = M.reshape(source, (1,)) if source.ndim == 0 else source
    d = normalize_axis(dim, x.ndim, op)
    if index.ndim > 1 or s.ndim != x.ndim or s.shape[d] != index.numel() or \
            s.shape[:d] + s.shape[d + 1:] != x.shape[:d] + x.shape[d + 1:]:
        raise IndexError(f"{op}: index {tuple(index.shape)} must be 1-d with one entry per slice of source "
                         f"{tuple(source.shape)} along dim {d}, and source must have the input's shape "
                         f"{tuple(input.shape)} elsewhere")
    full = M.expand(M.reshape(index, (1,) * d + (-1,) + (1,) * (x.ndim - d - 1)), s.shape)
    return M.reshape(scatter_reduce(x, d, full, s, reduce, include_self=include_self), tuple(input.shape))


_SEGMENT = {"sum": ("sum", 0.0), "prod": ("prod", 1.0), "mean": ("mean", float("nan")),
            "max": ("amax", float("-inf")), "min": ("amin", float("inf"))}


def _segment_lengths(op, data, lengths, indices, offsets, axis, unsafe):
    if indices is not None:
        raise RuntimeError(f"{op}(): indices based reduction is not supported yet.")
    if (lengths is None) == (offsets is None):
        raise RuntimeError(f"{op}(): Either lengths or offsets must be defined (one of them)")
    if lengths is None:
        offsets = _int_index(op, offsets, "offsets")
        lengths = offsets[..., 1:] - offsets[..., :-1]
    lengths = _int_index(op, lengths, "lengths")
    if axis != lengths.ndim - 1 or tuple(lengths.shape[:-1]) != tuple(data.shape[:axis]):
        raise RuntimeError(f"{op}(): Expected axis ({axis}) to be lengths.dim() - 1 ({lengths.ndim - 1}) and "
                           f"lengths {tuple(lengths.shape)} to match data {tuple(data.shape)} before it")
    if not unsafe and not bool((lengths.sum(-1) == data.shape[axis]).all().item()):
        raise RuntimeError(f"{op}(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) "
                           f"({data.shape[axis]}) when !unsafe.")
    return lengths


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False,
                   initial=None) -> Tensor:
    """Reduce consecutive segments of ``data`` along ``axis`` ('sum', 'prod', 'mean', 'max' or 'min'), the
    segments' sizes given by ``lengths`` (or by the differences of ``offsets``), as ``torch.segment_reduce``;
    an empty segment gives ``initial``, else the reduction's identity (NaN for 'mean'). Composed of
    ``scatter_reduce``, so its gradient is that one's.

    >>> import webgrad as wg
    >>> wg.segment_reduce(wg.tensor([1.0, 2.0, 3.0]), "sum", lengths=wg.tensor([2, 0, 1])).tolist()
    [3.0, 0.0, 3.0]
    """
    op = "segment_reduce"
    check_tensor(op, data, "data")
    if reduce not in _SEGMENT:
        raise RuntimeError(f"{op}(): reduce must be one of {', '.join(map(repr, _SEGMENT))}, got {reduce!r}")
    axis = normalize_axis(axis, data.ndim, op)
    lengths = _segment_lengths(op, data, lengths, indices, offsets, axis, unsafe)
    be, n, segments = data._backend, data.shape[axis], lengths.shape[-1]
    ends = M.unsqueeze(lengths.cumsum(-1), -2)                                  # lead + (1, S)
    ids = (M.unsqueeze(arange(n, device=be), -1) >= ends).to(int64).sum(-1)     # lead + (n,)
    ids = M.reshape(ids, tuple(ids.shape) + (1,) * (data.ndim - axis - 1))
    shape = tuple(data.shape[:axis]) + (segments,) + tuple(data.shape[axis + 1:])
    count = M.reshape(lengths, tuple(lengths.shape) + (1,) * (data.ndim - axis - 1))
    kind, identity = _SEGMENT[reduce]
    base = zeros(shape, dtype=data.dtype, device=be) + (identity if initial is None else initial)
    if kind == "mean" and initial is not None:
        total = scatter_reduce(base, axis, M.expand(ids, data.shape), data, "sum")
        return total / maximum(count, ones((), dtype=count.dtype, device=be)).to(data.dtype)
    out = scatter_reduce(base, axis, M.expand(ids, data.shape), data, kind, include_self=initial is not None)
    return out


def put(input, index, source, accumulate=False) -> Tensor:
    """A copy of ``input`` with ``source``'s elements at the flat (row-major) positions ``index``
    (negative ones count from the end), added there with ``accumulate``, as ``torch.put``.

    >>> import webgrad as wg
    >>> wg.zeros(2, 2).put(wg.tensor([3, -4]), wg.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 1.0]]
    """
    check_tensor("put", input)
    check_tensor("put", source, "source")
    index = _int_index("put", index)
    if index.numel() != source.numel():
        raise RuntimeError(f"put: expected source and index to have the same number of elements, but got "
                           f"source {tuple(source.shape)} and index {tuple(index.shape)}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"put: expected source ({source.dtype.name}) to have the input's dtype "
                           f"{input.dtype.name}")
    flat = index_put(M.reshape(input, -1), (M.reshape(index, -1),), M.reshape(source, -1), accumulate)
    return M.reshape(flat, tuple(input.shape))


METHODS = {"scatter_reduce": scatter_reduce, "scatter_reduce_": inplace_method("scatter_reduce_", scatter_reduce),
           "index_reduce": index_reduce, "index_reduce_": inplace_method("index_reduce_", index_reduce),
           "put": put, "put_": inplace_method("put_", put)}

__all__ = ["scatter_reduce", "index_reduce", "put", "segment_reduce"]
