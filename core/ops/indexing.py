"""Indexing ops: ``t[...]`` and ``t[...] = v``, gather/scatter, index_copy/index_fill/index_put, nonzero.

Four kernels do the work: Gather, ScatterAdd and IndexCopy (torch semantics, one axis) and NonZero.
Basic indexing (ints, slices, None, Ellipsis) is one Slice and one Reshape; advanced indexing
(integer tensors or lists, boolean masks) linearises the indexed dims and gathers along one of them,
or for an assignment copies into them with IndexCopy (the last of repeated indices wins) or adds
with ScatterAdd (``accumulate=True``). A boolean mask becomes the positions of its True elements
(NonZero); their count sizes the result, so a GPU backend reads it back, as PyTorch synchronises
there too. Nothing reads positions back element by element.
"""
from __future__ import annotations

import operator
import warnings

from .. import kernel_names as K
from ..dtypes import bool_, int64, is_index, uint8
from ..engine import no_grad, record_function, run_kernel
from ..host import flatten as host_flatten
from ..host import is_array_like
from ..shapes import ShapeError, broadcast_shapes, normalize_axis, numel
from ..tensor import Tensor, tensor
from . import movement as M
from .common import check_tensor, is_scalar, reshape_to, scalar_tensor
from .creation import arange, zeros


def _int_index(op, index, name="index") -> Tensor:
    check_tensor(op, index, name)
    if not is_index(index._dtype):
        raise TypeError(f"{op}: {name} must be an integer tensor (int64 or int32), got {index.dtype.name}")
    return index


def _int(value, be):
    return scalar_tensor(value, int64, be)


# ---------------------------------------------------------------- gather / scatter


def gather(input, dim, index, *, sparse_grad=False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (``torch.gather``); ``index`` is int64 (or int32) with
    ``input``'s number of dims and no larger than ``input`` outside ``dim``. ``sparse_grad`` is accepted
    without effect: the gradient is dense here (PyTorch's sparse one holds the same numbers).

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2], [3, 4]]).gather(1, wg.tensor([[1, 0], [0, 0]])).tolist()
    [[2, 1], [3, 3]]
    """
    check_tensor("gather", input)
    index = _int_index("gather", index)
    d = normalize_axis(dim, input.ndim, "gather")
    if index.ndim != input.ndim or any(i > n for k, (i, n) in enumerate(zip(index.shape, input.shape)) if k != d):
        raise ValueError(f"gather: index of shape {tuple(index.shape)} does not fit input of shape "
                         f"{tuple(input.shape)} along dims other than {d} (same number of dims, no larger sizes)")
    if input.ndim == 0:
        return M.reshape(run_kernel(K.GATHER, M.reshape(input, 1), M.reshape(index, 1), axis=0), ())
    return run_kernel(K.GATHER, input, index, axis=d)


def scatter_add(input, dim, index, src) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (``torch.scatter_add``):
    ``out[index[i][j]][j] += src[i][j]`` for ``dim=0``; repeated indices accumulate.

    >>> import webgrad as wg
    >>> wg.zeros(3).scatter_add(0, wg.tensor([0, 2, 0]), wg.tensor([1.0, 2.0, 3.0])).tolist()
    [4.0, 0.0, 2.0]
    """
    check_tensor("scatter_add", input)
    check_tensor("scatter_add", src, "src")
    index = _int_index("scatter_add", index)
    d = normalize_axis(dim, input.ndim, "scatter_add")
    if src._dtype is not input._dtype:
        raise TypeError(f"scatter_add: src dtype {src.dtype.name} differs from the input's {input.dtype.name}")
    if index.ndim != input.ndim or src.ndim != input.ndim or any(
            i > s or (k != d and i > n) for k, (i, s, n) in enumerate(zip(index.shape, src.shape, input.shape))):
        raise ValueError(f"scatter_add: index of shape {tuple(index.shape)} must have the input's number of dims, "
                         f"be no larger than src {tuple(src.shape)}, and no larger than the input "
                         f"{tuple(input.shape)} outside dim {d}")
    if input.ndim == 0:
        return M.reshape(scatter_add(M.reshape(input, 1), 0, M.reshape(index, 1), M.reshape(src, 1)), ())
    return run_kernel(K.SCATTER_ADD, input, index, src, axis=d)


def index_select(input, dim, index) -> Tensor:
    """The slices of ``input`` at positions ``index`` (1-d int64 or int32) along ``dim``.

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2], [3, 4]]).index_select(0, wg.tensor([1, 1, 0])).tolist()
    [[3, 4], [3, 4], [1, 2]]
    """
    check_tensor("index_select", input)
    index = _int_index("index_select", index)
    if index.ndim > 1:
        raise ValueError(f"index_select: index must be 1-d, got shape {tuple(index.shape)}")
    if input.ndim == 0:
        return M.reshape(index_select(M.reshape(input, 1), dim, index), index.shape)
    d = normalize_axis(dim, input.ndim, "index_select")
    k = index.numel()
    index = M.reshape(index, (1,) * d + (k,) + (1,) * (input.ndim - d - 1))
    return run_kernel(K.GATHER, input, M.expand(index, input.shape[:d] + (k,) + input.shape[d + 1:]), axis=d)


def take_along_dim(input, indices, dim=None) -> Tensor:
    """Gather ``indices`` along ``dim``, broadcasting ``input`` and ``indices`` in the other dims
    (the flattened tensor when ``dim`` is None), as ``torch.take_along_dim``.

    >>> import webgrad as wg
    >>> x = wg.tensor([[10, 30, 20]])
    >>> wg.take_along_dim(x, wg.tensor([[0, 2, 1]]), 1).tolist()
    [[10, 20, 30]]
    """
    check_tensor("take_along_dim", input)
    indices = _int_index("take_along_dim", indices, "indices")
    if dim is None:
        return gather(M.reshape(input, -1), 0, M.reshape(indices, -1))
    if indices.ndim != input.ndim:
        raise ValueError(f"take_along_dim: input {tuple(input.shape)} and indices {tuple(indices.shape)} must have "
                         f"the same number of dims")
    d = normalize_axis(dim, input.ndim, "take_along_dim")
    drop = lambda s: s[:d] + (1,) + s[d + 1:]  # noqa: E731
    b = broadcast_shapes(drop(input.shape), drop(indices.shape), op="take_along_dim")
    put = lambda n: b[:d] + (n,) + b[d + 1:]  # noqa: E731
    return gather(M.expand(input, put(input.shape[d])), d, M.expand(indices, put(indices.shape[d])))


def index_add(input, dim, index, source, alpha=1) -> Tensor:
    """A copy of ``input`` with ``alpha * source[i]`` added to slice ``index[i]`` along ``dim``.

    >>> import webgrad as wg
    >>> wg.zeros(3).index_add(0, wg.tensor([0, 0, 2]), wg.tensor([1.0, 2.0, 3.0])).tolist()
    [3.0, 0.0, 3.0]
    """
    check_tensor("index_add", input)
    index = _int_index("index_add", index)
    d = normalize_axis(dim, input.ndim, "index_add")
    if index.ndim > 1 or source.ndim != input.ndim or source.shape[d] != index.numel():
        raise ValueError(f"index_add: index {tuple(index.shape)} must be 1-d with one entry per slice of source "
                         f"{tuple(source.shape)} along dim {d} (input {tuple(input.shape)})")
    if alpha != 1:
        source = run_kernel(K.MUL, source, scalar_tensor(alpha, source._dtype, source._backend))
    index = M.reshape(index, (1,) * d + (-1,) + (1,) * (input.ndim - d - 1))
    return scatter_add(input, d, M.expand(index, source.shape), source)


def masked_fill(input, mask, value) -> Tensor:
    """``input`` with ``value`` (a number or a 0-d tensor) where the bool ``mask`` (broadcast to ``input``) is True.

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 2.0]).masked_fill(wg.tensor([True, False]), 0).tolist()
    [0.0, 2.0]
    """
    check_tensor("masked_fill", input)
    check_tensor("masked_fill", mask, "mask")
    if mask._dtype is not bool_:
        raise TypeError(f"masked_fill: mask must be a bool tensor, got {mask.dtype.name}")
    if broadcast_shapes(mask.shape, input.shape, op="masked_fill") != input.shape:
        raise ValueError(f"masked_fill: mask of shape {tuple(mask.shape)} does not broadcast to the input's "
                         f"shape {tuple(input.shape)}")
    if is_scalar(value):
        value = scalar_tensor(value, input._dtype, input._backend)
    elif check_tensor("masked_fill", value, "value").ndim:
        raise ValueError(f"masked_fill: value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
    elif value._dtype is not input._dtype:
        value = run_kernel(K.CAST, value, dtype=input._dtype)
    return run_kernel(K.WHERE, mask, value, input)


def masked_fill_(input, mask, value) -> Tensor:
    """In-place ``masked_fill``.

    >>> import webgrad as wg
    >>> t = wg.tensor([1.0, 2.0]); _ = t.masked_fill_(wg.tensor([False, True]), -1.0); t.tolist()
    [1.0, -1.0]
    """
    return input._assign(masked_fill(input, mask, value), "masked_fill_")


def index_copy(input, dim, index, source) -> Tensor:
    """A copy of ``input`` whose slices ``index[i]`` along ``dim`` are ``source``'s slices ``i``
    (``torch.index_copy``); where ``index`` repeats, the last one wins (numpy's rule; PyTorch leaves
    it unspecified), and its gradient goes to that one alone.

    >>> import webgrad as wg
    >>> wg.zeros(3, 2).index_copy(0, wg.tensor([2, 0]), wg.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]]
    """
    op = "index_copy"
    check_tensor(op, input)
    check_tensor(op, source, "source")
    index = _int_index(op, index)
    if index.ndim > 1:
        raise IndexError(f"{op}: index should have dimension 1 or 0, got shape {tuple(index.shape)}")
    if source._dtype is not input._dtype:
        raise TypeError(f"{op}: source dtype {source.dtype.name} differs from the input's {input.dtype.name}")
    if min(input.ndim, source.ndim) == 0 and max(input.ndim, source.ndim) <= 1:   # a scalar for one element
        return M.reshape(index_copy(M.reshape(input, -1), 0, index, M.reshape(source, -1)), input.shape)
    d = normalize_axis(dim, input.ndim, op)
    if source.ndim != input.ndim or source.shape[:d] + source.shape[d + 1:] != input.shape[:d] + input.shape[d + 1:] \
            or source.shape[d] != index.numel():
        raise IndexError(f"{op}: source of shape {tuple(source.shape)} must have the input's shape "
                         f"{tuple(input.shape)} with dim {d} of size {index.numel()} (one slice per index)")
    return run_kernel(K.INDEX_COPY, input, M.reshape(index, -1), source, axis=d)


def index_copy_(input, dim, index, source) -> Tensor:
    """In-place ``index_copy``.

    >>> import webgrad as wg
    >>> t = wg.zeros(3); _ = t.index_copy_(0, wg.tensor([1]), wg.tensor([5.0])); t.tolist()
    [0.0, 5.0, 0.0]
    """
    return input._assign(index_copy(input, dim, index, source), "index_copy_")


def index_fill(input, dim, index, value) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) in the slices ``index`` along ``dim``
    (negative indices count from the end), as ``torch.index_fill``.

    >>> import webgrad as wg
    >>> wg.zeros(2, 3).index_fill(1, wg.tensor([0, -1]), 7.0).tolist()
    [[7.0, 0.0, 7.0], [7.0, 0.0, 7.0]]
    """
    op = "index_fill"
    check_tensor(op, input)
    index = _int_index(op, index)
    if index.ndim > 1:
        raise IndexError(f"{op}: index should have dimension 1 or 0, got shape {tuple(index.shape)}")
    if not (is_scalar(value) or isinstance(value, Tensor) and value.ndim == 0):
        raise TypeError(f"{op}: value must be a number or a 0-d tensor, got "
                        f"{f'shape {tuple(value.shape)}' if isinstance(value, Tensor) else type(value).__name__}")
    y = M.reshape(input, -1) if input.ndim == 0 else input
    d = normalize_axis(dim, y.ndim, op)
    index = _wrap_negative(M.reshape(index, -1), y.shape[d])
    fill = _broadcast_value(value, y.shape[:d] + (index.numel(),) + y.shape[d + 1:], input._dtype, input._backend, op)
    return M.reshape(run_kernel(K.INDEX_COPY, y, index, fill, axis=d), input.shape)


def index_fill_(input, dim, index, value) -> Tensor:
    """In-place ``index_fill``.

    >>> import webgrad as wg
    >>> t = wg.zeros(3); _ = t.index_fill_(0, wg.tensor([2]), 1.0); t.tolist()
    [0.0, 0.0, 1.0]
    """
    return input._assign(index_fill(input, dim, index, value), "index_fill_")


def index_put(input, indices, values, accumulate=False) -> Tensor:
    """A copy of ``input`` with ``input[indices] = values`` (``+=`` with ``accumulate=True``, where repeated
    indices add up), as ``torch.index_put``: ``indices`` is a tuple of integer or bool tensors, one
    per leading dim, and ``values`` a tensor of ``input``'s dtype broadcast to ``input[indices]``. Without
    ``accumulate`` the last of repeated indices wins (numpy's rule; PyTorch leaves it unspecified).

    >>> import webgrad as wg
    >>> wg.zeros(3).index_put((wg.tensor([0, 0, 2]),), wg.tensor([1.0, 2.0, 3.0]), accumulate=True).tolist()
    [3.0, 0.0, 3.0]
    """
    op = "index_put"
    check_tensor(op, input)
    if not isinstance(indices, (tuple, list)) or not all(isinstance(t, Tensor) for t in indices):
        raise TypeError(f"{op}: indices must be a tuple of tensors, got {indices!r}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{op}: values must be a Tensor, got {type(values).__name__}")
    if values._dtype is not input._dtype:
        raise TypeError(f"{op}: values dtype {values.dtype.name} differs from the input's {input.dtype.name}")
    return _put_at(input, _plan(input, tuple(indices), op), values, op, bool(accumulate))


def index_put_(input, indices, values, accumulate=False) -> Tensor:
    """In-place ``index_put``.

    >>> import webgrad as wg
    >>> t = wg.zeros(2, 2); _ = t.index_put_((wg.tensor([1]), wg.tensor([0])), wg.tensor(5.0)); t.tolist()
    [[0.0, 0.0], [5.0, 0.0]]
    """
    return input._assign(index_put(input, indices, values, accumulate), "index_put_")


def nonzero(input, *, as_tuple=False):
    """The coordinates of ``input``'s nonzero elements, in row-major order: an int64 tensor of shape
    ``(count, input.ndim)``, or with ``as_tuple=True`` a tuple of ``input.ndim`` 1-d tensors (one for
    a 0-d input), as ``torch.nonzero``. The count depends on the data: a GPU backend reads it back.

    >>> import webgrad as wg
    >>> wg.tensor([[0, 1], [2, 0]]).nonzero().tolist()
    [[0, 1], [1, 0]]
    >>> [t.tolist() for t in wg.nonzero(wg.tensor([[0, 1], [2, 0]]), as_tuple=True)]
    [[0, 1], [1, 0]]
    """
    check_tensor("nonzero", input)
    if not as_tuple:
        return run_kernel(K.NONZERO, input)
    coords = run_kernel(K.NONZERO, M.reshape(input, -1) if input.ndim == 0 else input)
    return tuple(M.reshape(M._slice_dim(coords, 1, d, d + 1), -1) for d in range(coords.shape[1]))


def select_unique(x, dim, index) -> Tensor:
    """``index_select(x, dim, index)`` for a 1-d ``index`` that never repeats (a mask's positions).
    Its gradient copies ``dy`` into zeros with IndexCopy, one pass over ``x``, where index_select's
    adds with ScatterAdd (which on a GPU walks every index entry for each element of ``x``).

    >>> import webgrad as wg
    >>> x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> select_unique(x, 0, wg.tensor([2, 0])).sum().backward(); x.grad.tolist()
    [1.0, 0.0, 1.0]
    """
    with no_grad():
        out = index_select(x, dim, index)
    shape, axis = x.shape, normalize_axis(dim, max(1, x.ndim), "select_unique")

    def backward(dy, saved, attrs):
        zero = zeros(shape, dtype=dy.dtype, backend=dy._backend)
        return run_kernel(K.INDEX_COPY, zero, index, dy, axis=axis), None
    record_function("SelectUnique", backward, [x, index], [out])
    return out


def mask_positions(mask) -> Tensor:
    """The row-major positions (int64, 1-d) of ``mask``'s True elements, counted over all its dims.

    >>> import webgrad as wg
    >>> mask_positions(wg.tensor([[False, True], [True, True]])).tolist()
    [1, 2, 3]
    """
    return M.reshape(run_kernel(K.NONZERO, M.reshape(mask, -1)), -1)


# ---------------------------------------------------------------- t[index]


def _as_index(item, be):
    """A numpy integer or bool array of one or more dims as a tensor on ``be``; other items unchanged."""
    kind = getattr(getattr(item, "dtype", None), "kind", None)
    if kind in ("b", "i", "u") and getattr(item, "ndim", 0) and not isinstance(item, Tensor) and is_array_like(item):
        return tensor(item, backend=be)
    return item


def _byte_mask(item: Tensor) -> Tensor:
    """A uint8 index tensor is a mask, as in PyTorch (which warns that this is deprecated)."""
    if item._dtype is not uint8:
        return item
    warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                  UserWarning, stacklevel=4)
    return run_kernel(K.CAST, item, dtype=bool_)


def _classify(item, op, be):
    """One index item as a tagged tuple: ('new',), ('...',), ('slice', s), ('int', i), ('mask', bool
    tensor), ('tensor', integer tensor), or ('host', flat values, shape, is_mask) for Python data.
    Index tensors on another backend are moved to ``be`` (PyTorch takes cpu indices for a GPU tensor)."""
    item = _as_index(item, be)
    if item is None:
        return ("new",)
    if item is Ellipsis:
        return ("...",)
    if isinstance(item, slice):
        return ("slice", item)
    if isinstance(item, Tensor):
        item = _byte_mask(item)
        if item._dtype is not bool_ and not is_index(item._dtype):
            raise IndexError(f"{op}: tensors used as indices must be long, int, byte or bool tensors, got "
                             f"{item.dtype.name}")
        if item._dtype is not bool_ and not item.ndim:   # a 0-d integer tensor is an int, as in PyTorch
            return ("int", item.item())                  # (which reads it back, too)
        item = item if item._backend is be else item.to(be.name)
        return ("mask" if item._dtype is bool_ else "tensor", item)
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


def _mask_shape(item):
    """The shape of a mask item (a bool tensor or bool host data), or None for other items."""
    if item[0] == "mask":
        return item[1].shape
    return item[2] if item[0] == "host" and item[3] else None


def _consumed(item) -> int:
    if item[0] in ("new", "..."):
        return 0
    shape = _mask_shape(item)
    return 1 if shape is None else len(shape)


def _expand_ellipsis(items, ndim, op):
    fill = ndim - sum(_consumed(it) for it in items)
    if fill < 0:
        raise IndexError(f"{op}: too many indices for a tensor of dimension {ndim}")
    dots = [i for i, it in enumerate(items) if it[0] == "..."]
    if len(dots) > 1:
        raise IndexError(f"{op}: an index can only have a single ellipsis ('...')")
    at = dots[0] if dots else len(items)
    return items[:at] + [("slice", slice(None))] * fill + items[at + 1:]


def _mask_index(item, be) -> Tensor:
    """The positions of a mask item's True elements (int64, 1-d, row-major over the mask's dims)."""
    if item[0] == "mask":
        return mask_positions(item[1])
    return tensor([j for j, v in enumerate(item[1]) if v], dtype=int64, backend=be)


def _host_index(values, shape, n, d, be, op):
    """Check and wrap host index values for a dim of size ``n`` into an int64 tensor."""
    for v in values:
        if not -n <= v < n:
            raise IndexError(f"{op}: index {v} is out of range for dim {d} with size {n}")
    return tensor([v + n if v < 0 else v for v in values], dtype=int64, backend=be).reshape(shape)


MASK, HOST, DEVICE = "mask", "host", "device"   # where an advanced index's values come from (see _Plan)


class _Plan:
    """An index worked out against a tensor: (begin, end, step) for one Slice, the shape after it
    (dims taken by ints dropped, dims of None added), the basic items in order as ``strides.indexed``
    reads them (("new",), ("int", i), ("slice", b, e, s)), and the advanced indices as
    (position in that shape, dims spanned, integer tensor, source): an integer index spans one dim,
    a mask all of its dims, with the positions of its True elements over them. The source says
    what is known of the values: MASK (a mask's positions: in range, none repeated), HOST (checked
    on the host), DEVICE (a tensor's: wrapped, and refused by the kernel when out of range)."""

    __slots__ = ("begin", "end", "step", "shape", "recipe", "adv")

    def __init__(self):
        self.begin, self.end, self.step, self.shape, self.recipe, self.adv = [], [], [], [], [], []

    def take(self, n, b=0, e=None, s=1):
        """A dim of size ``n`` sliced as ``range(b, e, s)`` (the whole dim by default), kept in the shape."""
        e = n if e is None else e
        self.begin.append(b), self.end.append(e), self.step.append(s), self.shape.append(len(range(b, e, s)))

    def whole(self, x) -> bool:
        """Whether the Slice takes all of ``x`` (the advanced indices alone pick elements)."""
        return all(b == 0 and e == n and s == 1 for b, e, s, n in zip(self.begin, self.end, self.step, x.shape))


def _plan(x, idx, op) -> _Plan:
    be = x._backend
    items = _expand_ellipsis([_classify(it, op, be) for it in (idx if isinstance(idx, tuple) else (idx,))],
                             x.ndim, op)
    plan, d = _Plan(), 0
    for it in items:
        kind, mask = it[0], _mask_shape(it)
        if kind == "new" or mask == ():                  # None, or a 0-d mask: x[True], x[wg.tensor(False)]
            if kind != "new":
                plan.adv.append((len(plan.shape), 1, _mask_index(it, be), MASK))
            plan.shape.append(1)
            plan.recipe.append(("new",))
        elif mask is not None:
            k = len(mask)
            if tuple(x.shape[d:d + k]) != tuple(mask):
                raise IndexError(f"{op}: the shape of the mask {tuple(mask)} at index {d} does not match the shape "
                                 f"{tuple(x.shape[d:d + k])} of the indexed tensor")
            plan.adv.append((len(plan.shape), k, _mask_index(it, be), MASK))
            for n in x.shape[d:d + k]:
                plan.take(n)
            d += k
        else:
            _plan_dim(plan, it, x.shape[d], d, be, op)
            d += 1
    return plan


def _plan_dim(plan, it, n, d, be, op):
    """Add index item ``it`` (an int, a slice or an integer index) for dim ``d`` of size ``n``."""
    kind = it[0]
    if kind == "int":
        i = it[1]
        if not -n <= i < n:
            raise IndexError(f"{op}: index {i} is out of range for dim {d} with size {n}")
        i = i + n if i < 0 else i
        plan.begin.append(i), plan.end.append(i + 1), plan.step.append(1), plan.recipe.append(("int", i))
    elif kind == "slice":
        if it[1].step == 0:
            raise ValueError(f"{op}: slice step cannot be zero")
        b, e, s = it[1].indices(n)
        b, e, s = (b, e, s) if len(range(b, e, s)) else (0, 0, 1)
        plan.take(n, b, e, s)
        plan.recipe.append(("slice", b, e, s))
    else:
        if kind == "tensor" and n == 0 and it[1].numel():   # known from shapes: PyTorch's check too
            raise IndexError(f"{op}: index is out of bounds for dim {d} with size 0")
        t = _host_index(it[1], it[2], n, d, be, op) if kind == "host" else it[1]
        plan.adv.append((len(plan.shape), 1, t, HOST if kind == "host" else DEVICE))
        plan.take(n)


def _wrap_negative(t, n):
    be = t._backend
    negative = run_kernel(K.LESS, t, _int(0, be))
    return run_kernel(K.WHERE, negative, run_kernel(K.ADD, t, _int(n, be)), t)


def _linear_index(y, adv, op):
    """The advanced indices combined into one row-major index over the dims they span (out-of-range
    device indices are sent past the end, so the kernel refuses them instead of wrapping)."""
    try:
        broadcast_shapes(*(t.shape for _, _, t, _ in adv), op=op)
    except ShapeError as e:   # PyTorch's IndexError
        raise IndexError(f"{e} (the indices of an advanced index broadcast together)") from None
    be = y._backend
    lin, bad = None, None
    for p, k, t, source in adv:
        n = numel(y.shape[p:p + k])
        if source is DEVICE:
            t = _wrap_negative(t, n)
            if len(adv) > 1:
                out = run_kernel(K.LOGICAL_OR, run_kernel(K.LESS, t, _int(0, be)),
                                 run_kernel(K.GREATER_EQUAL, t, _int(n, be)))
                bad = out if bad is None else run_kernel(K.LOGICAL_OR, bad, out)
        lin = t if lin is None else run_kernel(K.ADD, run_kernel(K.MUL, lin, _int(n, be)), t)
    if bad is not None:
        lin = run_kernel(K.WHERE, bad, _int(numel(y.shape[p + i] for p, k, _, _ in adv for i in range(k)), be), lin)
    return lin


def _merged(y, adv):
    """(flat, p0, back): ``y`` with the dims its advanced indices span merged into dim ``p0`` -- where
    they were when adjacent, else first (numpy's and PyTorch's rule) -- and ``back``, which takes a
    tensor of ``flat``'s shape back to ``y``'s layout."""
    dims = [p + i for p, k, _, _ in adv for i in range(k)]
    p0, size = dims[0], numel(y.shape[d] for d in dims)
    if dims == list(range(p0, p0 + len(dims))):
        flat = M.reshape(y, y.shape[:p0] + (size,) + y.shape[p0 + len(dims):])
        return flat, p0, lambda t: M.reshape(t, y.shape)
    perm = dims + [i for i in range(y.ndim) if i not in dims]
    moved = M.permute(y, perm)
    inverse = [perm.index(i) for i in range(y.ndim)]
    flat = M.reshape(moved, (size,) + moved.shape[len(dims):])
    return flat, 0, lambda t: M.permute(M.reshape(t, moved.shape), inverse)


def _advanced(y, adv, op):
    lin = _linear_index(y, adv, op)
    flat, p0, _ = _merged(y, adv)
    select = select_unique if all(source is MASK for *_, source in adv) else index_select
    return M.reshape(select(flat, p0, M.reshape(lin, -1)), flat.shape[:p0] + lin.shape + flat.shape[p0 + 1:])


def _index(x, plan, op):
    if not plan.adv:
        return M.basic_index(x, plan.begin, plan.end, plan.step, plan.shape, plan.recipe)
    return _advanced(M.reshape(M._slice(x, plan.begin, plan.end, plan.step), plan.shape), plan.adv, op)


def getitem(x, idx) -> Tensor:
    """``x[idx]`` with PyTorch's (numpy's) indexing: ints, slices (any step, negative too), None,
    Ellipsis, integer tensors or lists (several broadcast together), and bool masks (their True
    positions found by the NonZero kernel; a GPU backend reads their count back, as PyTorch does).

    >>> import webgrad as wg
    >>> x = wg.arange(6).reshape(2, 3)
    >>> x[1, ::-1].tolist(), x[:, [0, 2]].tolist(), x[x > 3].tolist()
    ([5, 4, 3], [[0, 2], [3, 5]], [4, 5])
    """
    op = "__getitem__"
    return _index(x, _plan(x, idx, op), op)


def setitem(x, idx, value) -> None:
    """``x[idx] = value`` (a number or a tensor broadcast to ``x[idx]``, cast to ``x``'s dtype): through
    the view ``x[idx]`` for basic indices; as one ``where`` for a bool mask on leading dims whose value
    does not depend on how many elements it picks (a number, or a tensor over the dims after the
    mask's); else out of place with the IndexCopy kernel and assigned (where indices repeat, the last
    write wins, as in numpy). Autograd sees it and the version counter moves.

    >>> import webgrad as wg
    >>> x = wg.zeros(4); x[1:3] = 5; x[x > 4] += 1; x[wg.tensor([0, 0])] = wg.tensor([7.0, 8.0]); x.tolist()
    [8.0, 6.0, 6.0, 0.0]
    """
    op = "__setitem__"
    mask = _lone_mask(x, idx)
    filled = None if mask is None else _fill_where(x, mask, value, op)
    if filled is not None:
        x._assign(filled, op)
        return
    plan = _plan(x, idx, op)
    if not plan.adv and all(s > 0 for s in plan.step):
        target = M.basic_index(x, plan.begin, plan.end, plan.step, plan.shape, plan.recipe)
        target._assign(_broadcast_value(value, target.shape, x._dtype, x._backend, op), op)
        return
    x._assign(_put_at(x, plan, value, op, False), op)


def _lone_mask(x, idx):
    """``idx`` when it is one bool tensor on ``x``'s leading dims (its backend's), else None."""
    ok = isinstance(idx, Tensor) and idx._dtype is bool_ and idx.ndim and idx._backend is x._backend
    return idx if ok and idx.shape == x.shape[:idx.ndim] else None


def _fill_where(x, mask, value, op):
    """``x`` with ``x[mask] = value`` as one ``where``, when ``value`` does not depend on how many
    elements ``mask`` picks: a number, or a tensor broadcast over the dims after the mask's.
    None for a value with a dim per picked element."""
    rest = x.shape[mask.ndim:]
    if isinstance(value, (list, tuple)):
        value = tensor(value, dtype=x._dtype, backend=x._backend)
    if not is_scalar(value):
        shape = check_tensor(op, value, "value").shape
        while len(shape) > len(rest) and shape[0] == 1:
            shape = shape[1:]
        if len(shape) > len(rest):
            return None
        value = reshape_to(value, shape)
    value = _broadcast_value(value, rest, x._dtype, x._backend, op)
    return run_kernel(K.WHERE, reshape_to(mask, mask.shape + (1,) * len(rest)), value, x)


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
        raise ShapeError(f"{op}: shape mismatch: value of shape {tuple(value.shape)} cannot be broadcast to "
                         f"the indexing result of shape {tuple(shape)}") from None


def _put_at(x, plan, value, op, accumulate) -> Tensor:
    """``x`` with ``x[plan] = value`` (``+=`` when accumulating), out of place. When the advanced
    indices alone pick elements, along the dims they span; else at the flat positions that indexing
    ``arange(x.numel())`` the same way picks."""
    if plan.adv and plan.whole(x):
        return M.reshape(_put(M.reshape(x, plan.shape), plan.adv, value, op, accumulate), x.shape)
    at = _index(M.reshape(arange(x.numel(), backend=x._backend), x.shape), plan, op)
    return M.reshape(_put(M.reshape(x, -1), [(0, 1, at, HOST)], value, op, accumulate), x.shape)


def _put(y, adv, value, op, accumulate) -> Tensor:
    """``y`` with ``y[adv] = value`` (``+=`` when accumulating) for advanced indices ``adv`` (y's
    other dims taken whole), out of place: one IndexCopy (the last of repeated indices wins) or,
    accumulating, one ScatterAdd, along the merged dims the indices span."""
    lin = _linear_index(y, adv, op)
    flat, p0, back = _merged(y, adv)
    lead, rest = flat.shape[:p0], flat.shape[p0 + 1:]
    work = int64 if accumulate and y._dtype is bool_ else y._dtype
    values = _broadcast_value(value, lead + lin.shape + rest, work, y._backend, op)
    values, lin = M.reshape(values, lead + (lin.numel(),) + rest), M.reshape(lin, -1)
    if not accumulate:
        return back(run_kernel(K.INDEX_COPY, flat, lin, values, axis=p0))
    new = index_add(flat if work is y._dtype else run_kernel(K.CAST, flat, dtype=work), p0, lin, values)
    return back(new if work is y._dtype else run_kernel(K.CAST, new, dtype=y._dtype))


METHODS = {
    "__getitem__": getitem, "__setitem__": setitem, "gather": gather, "scatter_add": scatter_add,
    "index_select": index_select, "take_along_dim": take_along_dim, "index_add": index_add,
    "masked_fill": masked_fill, "masked_fill_": masked_fill_, "index_copy": index_copy, "index_copy_": index_copy_,
    "index_fill": index_fill, "index_fill_": index_fill_, "index_put": index_put, "index_put_": index_put_,
    "nonzero": nonzero,
}

__all__ = ["gather", "scatter_add", "index_select", "take_along_dim", "index_add", "masked_fill", "index_copy",
           "index_fill", "index_put", "index_put_", "nonzero"]
