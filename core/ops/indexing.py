"""Indexing ops: ``t[...]`` and ``t[...] = v``, gather/scatter and their relatives.

Two kernels do the work: Gather and ScatterAdd (torch semantics, one axis). Basic indexing
(ints, slices, None, Ellipsis) is one Slice and one Reshape; advanced indexing (integer
tensors or lists, boolean masks) linearises the indexed dims and gathers along one of them.
A boolean mask's positions are read back to the host, as PyTorch synchronises there too.
"""
from __future__ import annotations

import operator

from .. import kernel_names as K
from ..dtypes import bool_, int64
from ..engine import run_kernel
from ..host import flatten as host_flatten
from ..host import is_array_like
from ..shapes import broadcast_shapes, normalize_axis, numel
from ..tensor import Tensor, tensor
from . import movement as M
from .common import check_tensor, is_scalar, scalar_tensor
from .creation import arange, zeros


def _int_index(op, index, name="index") -> Tensor:
    check_tensor(op, index, name)
    if index._dtype.kind != "i":
        raise TypeError(f"{op}: {name} must be an integer tensor (int64 or int32), got {index.dtype.name}")
    return index


def _int(value, be):
    return scalar_tensor(value, int64, be)


# ---------------------------------------------------------------- gather / scatter


def gather(x, dim, index) -> Tensor:
    """``out[i][j] = x[index[i][j]][j]`` for ``dim=0`` (``torch.gather``); ``index`` is int64 (or int32) with
    ``x``'s number of dims and no larger than ``x`` outside ``dim``.

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2], [3, 4]]).gather(1, wg.tensor([[1, 0], [0, 0]])).tolist()
    [[2, 1], [3, 3]]
    """
    check_tensor("gather", x)
    index = _int_index("gather", index)
    d = normalize_axis(dim, x.ndim, "gather")
    if index.ndim != x.ndim or any(i > n for k, (i, n) in enumerate(zip(index.shape, x.shape)) if k != d):
        raise ValueError(f"gather: index of shape {tuple(index.shape)} does not fit input of shape "
                         f"{tuple(x.shape)} along dims other than {d} (same number of dims, no larger sizes)")
    if x.ndim == 0:
        return M.reshape(run_kernel(K.GATHER, M.reshape(x, 1), M.reshape(index, 1), axis=0), ())
    return run_kernel(K.GATHER, x, index, axis=d)


def scatter_add(x, dim, index, src) -> Tensor:
    """A copy of ``x`` with ``src`` added at ``index`` along ``dim`` (``torch.scatter_add``):
    ``out[index[i][j]][j] += src[i][j]`` for ``dim=0``; repeated indices accumulate.

    >>> import webgrad as wg
    >>> wg.zeros(3).scatter_add(0, wg.tensor([0, 2, 0]), wg.tensor([1.0, 2.0, 3.0])).tolist()
    [4.0, 0.0, 2.0]
    """
    check_tensor("scatter_add", x)
    check_tensor("scatter_add", src, "src")
    index = _int_index("scatter_add", index)
    d = normalize_axis(dim, x.ndim, "scatter_add")
    if src._dtype is not x._dtype:
        raise TypeError(f"scatter_add: src dtype {src.dtype.name} differs from the input's {x.dtype.name}")
    if index.ndim != x.ndim or src.ndim != x.ndim or any(
            i > s or (k != d and i > n) for k, (i, s, n) in enumerate(zip(index.shape, src.shape, x.shape))):
        raise ValueError(f"scatter_add: index of shape {tuple(index.shape)} must have the input's number of dims, "
                         f"be no larger than src {tuple(src.shape)}, and no larger than the input "
                         f"{tuple(x.shape)} outside dim {d}")
    if x.ndim == 0:
        return M.reshape(scatter_add(M.reshape(x, 1), 0, M.reshape(index, 1), M.reshape(src, 1)), ())
    return run_kernel(K.SCATTER_ADD, x, index, src, axis=d)


def index_select(x, dim, index) -> Tensor:
    """The slices of ``x`` at positions ``index`` (1-d int64 or int32) along ``dim``.

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2], [3, 4]]).index_select(0, wg.tensor([1, 1, 0])).tolist()
    [[3, 4], [3, 4], [1, 2]]
    """
    check_tensor("index_select", x)
    index = _int_index("index_select", index)
    if index.ndim > 1:
        raise ValueError(f"index_select: index must be 1-d, got shape {tuple(index.shape)}")
    if x.ndim == 0:
        return M.reshape(index_select(M.reshape(x, 1), dim, index), index.shape)
    d = normalize_axis(dim, x.ndim, "index_select")
    k = index.numel()
    index = M.reshape(index, (1,) * d + (k,) + (1,) * (x.ndim - d - 1))
    return run_kernel(K.GATHER, x, M.expand(index, x.shape[:d] + (k,) + x.shape[d + 1:]), axis=d)


def take_along_dim(x, indices, dim=None) -> Tensor:
    """Gather ``indices`` along ``dim``, broadcasting ``x`` and ``indices`` in the other dims
    (the flattened tensor when ``dim`` is None), as ``torch.take_along_dim``.

    >>> import webgrad as wg
    >>> x = wg.tensor([[10, 30, 20]])
    >>> wg.take_along_dim(x, wg.tensor([[0, 2, 1]]), 1).tolist()
    [[10, 20, 30]]
    """
    check_tensor("take_along_dim", x)
    indices = _int_index("take_along_dim", indices, "indices")
    if dim is None:
        return gather(M.reshape(x, -1), 0, M.reshape(indices, -1))
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_dim: input {tuple(x.shape)} and indices {tuple(indices.shape)} must have "
                         f"the same number of dims")
    d = normalize_axis(dim, x.ndim, "take_along_dim")
    drop = lambda s: s[:d] + (1,) + s[d + 1:]  # noqa: E731
    b = broadcast_shapes(drop(x.shape), drop(indices.shape), op="take_along_dim")
    put = lambda n: b[:d] + (n,) + b[d + 1:]  # noqa: E731
    return gather(M.expand(x, put(x.shape[d])), d, M.expand(indices, put(indices.shape[d])))


def index_add(x, dim, index, source, alpha=1) -> Tensor:
    """A copy of ``x`` with ``alpha * source[i]`` added to slice ``index[i]`` along ``dim``.

    >>> import webgrad as wg
    >>> wg.zeros(3).index_add(0, wg.tensor([0, 0, 2]), wg.tensor([1.0, 2.0, 3.0])).tolist()
    [3.0, 0.0, 3.0]
    """
    check_tensor("index_add", x)
    index = _int_index("index_add", index)
    d = normalize_axis(dim, x.ndim, "index_add")
    if index.ndim > 1 or source.ndim != x.ndim or source.shape[d] != index.numel():
        raise ValueError(f"index_add: index {tuple(index.shape)} must be 1-d with one entry per slice of source "
                         f"{tuple(source.shape)} along dim {d} (input {tuple(x.shape)})")
    if alpha != 1:
        source = run_kernel(K.MUL, source, scalar_tensor(alpha, source._dtype, source._backend))
    index = M.reshape(index, (1,) * d + (-1,) + (1,) * (x.ndim - d - 1))
    return scatter_add(x, d, M.expand(index, source.shape), source)


def masked_fill(x, mask, value) -> Tensor:
    """``x`` with ``value`` (a number or a 0-d tensor) where the bool ``mask`` (broadcast to ``x``) is True.

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 2.0]).masked_fill(wg.tensor([True, False]), 0).tolist()
    [0.0, 2.0]
    """
    check_tensor("masked_fill", x)
    check_tensor("masked_fill", mask, "mask")
    if mask._dtype is not bool_:
        raise TypeError(f"masked_fill: mask must be a bool tensor, got {mask.dtype.name}")
    if broadcast_shapes(mask.shape, x.shape, op="masked_fill") != x.shape:
        raise ValueError(f"masked_fill: mask of shape {tuple(mask.shape)} does not broadcast to the input's "
                         f"shape {tuple(x.shape)}")
    if is_scalar(value):
        value = scalar_tensor(value, x._dtype, x._backend)
    elif check_tensor("masked_fill", value, "value").ndim:
        raise ValueError(f"masked_fill: value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
    elif value._dtype is not x._dtype:
        value = run_kernel(K.CAST, value, dtype=x._dtype)
    return run_kernel(K.WHERE, mask, value, x)


def masked_fill_(x, mask, value) -> Tensor:
    """In-place ``masked_fill``.

    >>> import webgrad as wg
    >>> t = wg.tensor([1.0, 2.0]); _ = t.masked_fill_(wg.tensor([False, True]), -1.0); t.tolist()
    [1.0, -1.0]
    """
    return x._assign(masked_fill(x, mask, value), "masked_fill_")


# ---------------------------------------------------------------- t[index]


def _classify(item, op):
    """One index item as a tagged tuple: ('new',), ('...',), ('slice', s), ('int', i),
    ('host', flat values, shape, is_mask) for Python/numpy data and bool tensors, ('tensor', t)."""
    if item is None:
        return ("new",)
    if item is Ellipsis:
        return ("...",)
    if isinstance(item, slice):
        return ("slice", item)
    if isinstance(item, Tensor):
        if item._dtype is bool_:
            flat, shape, _ = host_flatten(item.tolist())
            return ("host", flat, shape, True)
        if item._dtype.kind != "i":
            raise IndexError(f"{op}: tensors used as indices must be long, int or bool tensors, got {item.dtype.name}")
        return ("tensor", item)
    if isinstance(item, bool):
        return ("host", [item], (), True)
    if isinstance(item, (list, tuple)) or is_array_like(item):
        flat, shape, dt = host_flatten(item if isinstance(item, (list, tuple)) else item.tolist())
        if shape == () and dt is not bool_:
            return ("int", operator.index(flat[0]))
        if flat and dt.is_floating:
            raise IndexError(f"{op}: indices must be ints or bools, got {item!r}")
        return ("host", flat, shape, dt is bool_)
    try:
        return ("int", operator.index(item))
    except TypeError:
        raise IndexError(f"{op}: only ints, slices, None, Ellipsis, and integer/bool tensors or lists are valid "
                         f"indices, got {type(item).__name__}") from None


def _consumed(item) -> int:
    if item[0] in ("new", "..."):
        return 0
    return len(item[2]) if item[0] == "host" and item[3] else 1


def _expand_ellipsis(items, ndim, op):
    fill = ndim - sum(_consumed(it) for it in items)
    if fill < 0:
        raise IndexError(f"{op}: too many indices for a tensor of dimension {ndim}")
    dots = [i for i, it in enumerate(items) if it[0] == "..."]
    if len(dots) > 1:
        raise IndexError(f"{op}: an index can only have a single ellipsis ('...')")
    at = dots[0] if dots else len(items)
    return items[:at] + [("slice", slice(None))] * fill + items[at + 1:]


def _mask_coords(flat, shape):
    """The coordinates of the True entries of a row-major mask, one list per dim."""
    coords = [[] for _ in shape]
    for j, v in enumerate(flat):
        if v:
            for k in reversed(range(len(shape))):
                j, c = divmod(j, shape[k])
                coords[k].append(c)
    return coords


def _host_index(values, shape, n, d, be, op):
    """Check and wrap host index values for a dim of size ``n`` into an int64 tensor."""
    for v in values:
        if not -n <= v < n:
            raise IndexError(f"{op}: index {v} is out of range for dim {d} with size {n}")
    return tensor([v + n if v < 0 else v for v in values], dtype=int64, backend=be).reshape(shape)


def _plan(x, idx, op):
    """Turn an index into (begin, end, step) for one Slice, the shape after it, the advanced
    indices as (position in that shape, integer tensor, checked on the host), and the basic
    items in order as ``strides.indexed`` reads them (("new",), ("int", i), ("slice", b, e, s))."""
    items = _expand_ellipsis([_classify(it, op) for it in (idx if isinstance(idx, tuple) else (idx,))],
                             x.ndim, op)
    begin, end, step, shape, adv, recipe, d, be = [], [], [], [], [], [], 0, x._backend
    for it in items:
        kind = it[0]
        if kind == "new" or (kind == "host" and it[3] and not it[2]):   # None, or x[True] / x[False]
            if kind == "host":
                adv.append((len(shape), tensor([0] if it[1][0] else [], dtype=int64, backend=be), True))
            shape.append(1)
            recipe.append(("new",))
            continue
        if kind == "host" and it[3]:
            k = len(it[2])
            if tuple(x.shape[d:d + k]) != it[2]:
                raise IndexError(f"{op}: the shape of the mask {it[2]} at index {d} does not match the shape "
                                 f"{tuple(x.shape[d:d + k])} of the indexed tensor")
            for c in _mask_coords(it[1], it[2]):
                adv.append((len(shape), tensor(c, dtype=int64, backend=be), True))
                begin.append(0), end.append(x.shape[d]), step.append(1), shape.append(x.shape[d])
                d += 1
            continue
        n = x.shape[d]
        if kind == "int":
            i = it[1]
            if not -n <= i < n:
                raise IndexError(f"{op}: index {i} is out of range for dim {d} with size {n}")
            i = i + n if i < 0 else i
            begin.append(i), end.append(i + 1), step.append(1), recipe.append(("int", i))
        elif kind == "slice":
            if it[1].step == 0:
                raise ValueError(f"{op}: slice step cannot be zero")
            b, e, s = it[1].indices(n)
            b, e, s = (b, e, s) if len(range(b, e, s)) else (0, 0, 1)
            begin.append(b), end.append(e), step.append(s), shape.append(len(range(b, e, s)))
            recipe.append(("slice", b, e, s))
        else:
            t = _host_index(it[1], it[2], n, d, be, op) if kind == "host" else it[1]
            adv.append((len(shape), t, kind == "host"))
            begin.append(0), end.append(n), step.append(1), shape.append(n)
        d += 1
    return begin, end, step, tuple(shape), adv, recipe


def _wrap_negative(t, n):
    be = t._backend
    negative = run_kernel(K.LESS, t, _int(0, be))
    return run_kernel(K.WHERE, negative, run_kernel(K.ADD, t, _int(n, be)), t)


def _linear_index(y, adv, op):
    """The advanced indices combined into one row-major index over their dims (out-of-range
    device indices are sent past the end, so the Gather refuses them instead of wrapping)."""
    broadcast_shapes(*(t.shape for _, t, _ in adv), op=op)
    be = y._backend
    lin, bad = None, None
    for p, t, checked in adv:
        n = y.shape[p]
        if not checked:
            t = _wrap_negative(t, n)
            if len(adv) > 1:
                out = run_kernel(K.LOGICAL_OR, run_kernel(K.LESS, t, _int(0, be)),
                                 run_kernel(K.GREATER_EQUAL, t, _int(n, be)))
                bad = out if bad is None else run_kernel(K.LOGICAL_OR, bad, out)
        lin = t if lin is None else run_kernel(K.ADD, run_kernel(K.MUL, lin, _int(n, be)), t)
    if bad is not None:
        lin = run_kernel(K.WHERE, bad, _int(numel(y.shape[p] for p, _, _ in adv), be), lin)
    return lin


def _advanced(y, adv, op):
    positions = [p for p, _, _ in adv]
    lin = _linear_index(y, adv, op)
    k, p0 = len(positions), positions[0]
    sizes = numel(y.shape[p] for p in positions)
    if positions == list(range(p0, p0 + k)):      # adjacent: the result's new dims go where they were
        lead, rest = y.shape[:p0], y.shape[p0 + k:]
    else:                                         # apart: they go first (numpy's and PyTorch's rule)
        rest = tuple(n for i, n in enumerate(y.shape) if i not in positions)
        y, lead, p0 = M.permute(y, positions + [i for i in range(y.ndim) if i not in positions]), (), 0
    flat = M.reshape(y, lead + (sizes,) + rest)
    return M.reshape(index_select(flat, p0, M.reshape(lin, -1)), lead + lin.shape + rest)


def _index(x, idx, op):
    begin, end, step, shape, adv, recipe = _plan(x, idx, op)
    if not adv:
        return M.basic_index(x, begin, end, step, shape, recipe), False
    return _advanced(M.reshape(M._slice(x, begin, end, step), shape), adv, op), True


def getitem(x, idx) -> Tensor:
    """``x[idx]`` with PyTorch's (numpy's) indexing: ints, slices (any step, negative too), None,
    Ellipsis, integer tensors or lists (several broadcast together), and bool masks.

    >>> import webgrad as wg
    >>> x = wg.arange(6).reshape(2, 3)
    >>> x[1, ::-1].tolist(), x[:, [0, 2]].tolist(), x[x > 3].tolist()
    ([5, 4, 3], [[0, 2], [3, 5]], [4, 5])
    """
    return _index(x, idx, "__getitem__")[0]


def _last_writes(positions):
    """For each flat position written to, whether it is the last write there (numpy's 'last one wins')."""
    seen, keep = set(), []
    for p in reversed(positions):
        keep.append(p not in seen)
        seen.add(p)
    return keep[::-1]


def setitem(x, idx, value) -> None:
    """``x[idx] = value`` (a number or a tensor broadcast to ``x[idx]``, cast to ``x``'s dtype): through
    the view ``x[idx]`` for basic indices, as one ``where`` for a bool mask and a number, and for other
    advanced indices computed out of place and assigned (repeated indices keep the last write). Autograd
    sees it and the version counter moves.

    >>> import webgrad as wg
    >>> x = wg.zeros(4); x[1:3] = 5; x[x > 4] += 1; x.tolist()
    [0.0, 6.0, 6.0, 0.0]
    """
    op = "__setitem__"
    mask = _lone_mask(x, idx)
    if mask is not None and (is_scalar(value) or isinstance(value, Tensor) and value.ndim == 0):
        x._assign(masked_fill(x, mask, value), op)
        return
    begin, end, step, shape, adv, recipe = _plan(x, idx, op)
    if adv or any(s <= 0 for s in step):
        return _put_advanced(x, idx, value, op)
    target = M.basic_index(x, begin, end, step, shape, recipe)
    target._assign(_broadcast_value(value, target.shape, x._dtype, x._backend, op), op)


def _lone_mask(x, idx):
    """``idx`` as a bool mask broadcast over ``x`` when it is one bool tensor on ``x``'s leading dims, else None."""
    if not (isinstance(idx, Tensor) and idx._dtype is bool_ and idx.ndim and idx.shape == x.shape[:idx.ndim]):
        return None
    return M.reshape(idx, idx.shape + (1,) * (x.ndim - idx.ndim)) if idx.ndim < x.ndim else idx


def _broadcast_value(value, shape, dtype, be, op) -> Tensor:
    """``value`` (a number, nested lists or a tensor) as a tensor of ``dtype`` on ``be`` broadcast to ``shape``
    (leading dims of size 1 beyond ``shape``'s rank are dropped, as PyTorch allows)."""
    if is_scalar(value) or isinstance(value, (list, tuple)):
        value = tensor(value, dtype=dtype, backend=be)
    elif check_tensor(op, value, "value")._dtype is not dtype:
        value = run_kernel(K.CAST, value, dtype=dtype)
    while value.ndim > len(shape) and value.shape[0] == 1:
        value = M.reshape(value, value.shape[1:])
    try:
        return M.expand(value, shape)
    except ValueError:
        raise ValueError(f"{op}: shape mismatch: value of shape {tuple(value.shape)} cannot be broadcast to "
                         f"the indexing result of shape {tuple(shape)}") from None


def _put_advanced(x, idx, value, op) -> None:
    be = x._backend
    sel, _ = _index(M.reshape(arange(x.numel(), backend=be), x.shape), idx, op)
    work = int64 if x._dtype is bool_ else x._dtype
    sel, value = M.reshape(sel, -1), M.reshape(_broadcast_value(value, sel.shape, work, be, op), -1)
    keep = _last_writes(host_flatten(sel.tolist())[0])
    if not all(keep):
        value = run_kernel(K.WHERE, tensor(keep, backend=be), value, scalar_tensor(0, work, be))
    written = scatter_add(zeros(x.numel(), dtype=work, backend=be), 0, sel, value)
    hits = scatter_add(zeros(x.numel(), dtype=int64, backend=be), 0, sel, M.expand(_int(1, be), sel.shape))
    if work is not x._dtype:
        written = run_kernel(K.CAST, written, dtype=x._dtype)
    new = run_kernel(K.WHERE, run_kernel(K.GREATER, hits, _int(0, be)), written, M.reshape(x, -1))
    x._assign(M.reshape(new, x.shape), op)


METHODS = {
    "__getitem__": getitem, "__setitem__": setitem, "gather": gather, "scatter_add": scatter_add,
    "index_select": index_select, "take_along_dim": take_along_dim, "index_add": index_add,
    "masked_fill": masked_fill, "masked_fill_": masked_fill_,
}

__all__ = ["gather", "scatter_add", "index_select", "take_along_dim", "index_add", "masked_fill"]
