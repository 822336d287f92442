"""Sorting ops: sort, argsort, msort, topk, kthvalue, median, nanmedian, quantile, nanquantile.

One kernel does the work: Sort, the values and int64 indices along one axis. The rest are
compositions: topk is a sort and a slice, kthvalue and median a sort and a pick at one position,
quantile a sort, gathers and a lerp. Gradients reach the positions the values came from.

Every sort here is stable: equal values keep their order, descending too. PyTorch sorts stably
when asked (``stable=True``) and otherwise leaves the order of ties unspecified, so a stable result
is always one PyTorch could give; ``stable`` has no effect and results agree across backends. topk,
kthvalue, median and nanmedian pick among ties as the stable sort orders them. NaN sorts above
every number (last ascending, first descending), as in PyTorch.
"""
from __future__ import annotations

from .. import kernel_names as K, return_types
from ..dtypes import bool_, int64
from ..engine import run_kernel
from ..shapes import normalize_axis
from ..tensor import Tensor
from . import binary, movement, reduce, unary
from .common import NO_ORDER as _NO_ORDER, check_tensor, is_scalar, python_scalar, real_only, reshape_to, scalar_tensor
from .indexing import gather


# ---------------------------------------------------------------- helpers

def _flag(op, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{op}(): argument '{name}' must be bool, not {type(value).__name__}")
    return value


def _int(op, name, value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}")
    return value


def _stable(op, stable):
    """``stable`` accepted as PyTorch does (a bool or None); every sort here is stable anyway."""
    if stable is not None:
        _flag(op, "stable", stable)


def _size(x, axis) -> int:
    """The length of ``axis`` (a 0-d tensor counts as one element along dim 0 or -1)."""
    return x.shape[axis] if x.ndim else 1


def _sorted(x, axis, descending):
    """(values, indices) of ``x`` sorted along ``axis``; a 0-d ``x`` as its one element."""
    if x.ndim:
        return run_kernel(K.SORT, x, axis=axis, descending=descending)
    values, indices = run_kernel(K.SORT, reshape_to(x, (1,)), axis=0, descending=descending)
    return reshape_to(values, ()), reshape_to(indices, ())


def _pick(t, axis, position, keepdim):
    """Element ``position`` of ``axis`` (an int, or an int64 tensor with 1 along ``axis``), the axis kept
    as 1 or dropped."""
    if not t.ndim:
        return t
    picked = gather(t, axis, position) if isinstance(position, Tensor) else movement.narrow(t, axis, position, 1)
    return picked if keepdim else movement.squeeze(picked, axis)


def _isnan(t):
    """Where ``t`` is NaN. Written as ``not (t == t)``: NotEqual's ``t != t`` misses NaN on lavapipe."""
    return unary.logical_not(binary.eq(t, t))


def _no_bool(op, x, error):
    if x._dtype is bool_:
        raise error(f"{op}(): not implemented for bool tensors, as in PyTorch (got {tuple(x.shape)} bool)")


def _nonempty_dim(op, x, axis):
    if not _size(x, axis):
        raise IndexError(f"{op}(): Expected reduction dim {axis} to have non-zero size (input shape "
                         f"{tuple(x.shape)})")


# ---------------------------------------------------------------- sort, argsort, msort

@real_only(RuntimeError, _NO_ORDER)
def sort(input, dim=-1, descending=False, *, stable=False):
    """``(values, indices)``: ``input`` sorted along ``dim``, ascending unless ``descending``, and where
    each value came from (int64). Always stable (``stable`` has no effect); NaN sorts above every number.

    >>> import webgrad as wg
    >>> s = wg.tensor([3.0, 1.0, 2.0, 1.0]).sort()
    >>> s.values.tolist(), s.indices.tolist()
    ([1.0, 1.0, 2.0, 3.0], [1, 3, 2, 0])
    >>> values, indices = wg.tensor([[3, 1], [2, 4]]).sort(dim=0, descending=True)
    >>> values.tolist(), indices.tolist()
    ([[3, 4], [2, 1]], [[0, 1], [1, 0]])
    """
    check_tensor("sort", input)
    axis = normalize_axis(dim, input.ndim, "sort")
    _stable("sort", stable)
    return return_types.sort(*_sorted(input, axis, _flag("sort", "descending", descending)))


@real_only(RuntimeError, _NO_ORDER)
def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim`` (int64): ``sort(...).indices``.

    >>> import webgrad as wg
    >>> wg.tensor([3.0, 1.0, 2.0]).argsort().tolist()
    [1, 2, 0]
    """
    return sort(input, dim, descending, stable=stable).indices


@real_only(RuntimeError, _NO_ORDER)
def msort(input):
    """``input`` sorted along dim 0: ``sort(input, dim=0).values``.

    >>> import webgrad as wg
    >>> wg.tensor([[3.0, 0.0], [1.0, 2.0]]).msort().tolist()
    [[1.0, 0.0], [3.0, 2.0]]
    """
    return sort(input, 0).values


# ---------------------------------------------------------------- topk, kthvalue

@real_only(RuntimeError, _NO_ORDER)
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002  (torch.topk's argument name)
    """``(values, indices)`` of the ``k`` largest elements along ``dim`` (smallest if not ``largest``),
    in sorted order. Ties are taken in index order (a stable sort's); ``sorted=False`` gives the
    sorted order too, one PyTorch allows.

    >>> import webgrad as wg
    >>> top = wg.tensor([1.0, 5.0, 3.0, 4.0]).topk(2)
    >>> top.values.tolist(), top.indices.tolist()
    ([5.0, 4.0], [1, 3])
    """
    check_tensor("topk", input)
    k = _int("topk", "k", k)
    axis = normalize_axis(dim, input.ndim, "topk")
    _flag("topk", "sorted", sorted)
    _no_bool("topk", input, RuntimeError)
    n = _size(input, axis)
    if not 0 <= k <= n:
        raise RuntimeError(f"topk(): selected index k out of range: k = {k} for dim {axis} of size {n}")
    values, indices = _sorted(input, axis, _flag("topk", "largest", largest))
    if input.ndim:
        values, indices = movement.narrow(values, axis, 0, k), movement.narrow(indices, axis, 0, k)
    return return_types.topk(values, indices)


@real_only(why=_NO_ORDER)
def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest element (1-based) along ``dim``.

    >>> import webgrad as wg
    >>> kth = wg.tensor([[4.0, 1.0, 3.0], [0.0, 2.0, 5.0]]).kthvalue(2)
    >>> kth.values.tolist(), kth.indices.tolist()
    ([3.0, 2.0], [2, 1])
    """
    check_tensor("kthvalue", input)
    k = _int("kthvalue", "k", k)
    axis = normalize_axis(dim, input.ndim, "kthvalue")
    _no_bool("kthvalue", input, NotImplementedError)
    _nonempty_dim("kthvalue", input, axis)
    n = _size(input, axis)
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}: k = {k}, size {n}")
    values, indices = _sorted(input, axis, False)
    keepdim = _flag("kthvalue", "keepdim", keepdim)
    return return_types.kthvalue(_pick(values, axis, k - 1, keepdim), _pick(indices, axis, k - 1, keepdim))


# ---------------------------------------------------------------- median, nanmedian

def _median_position(values, axis, ignore_nan):
    """Where the median sits in ``values`` (sorted along ``axis``, NaN last): an int for integer
    values, else an int64 tensor with 1 along ``axis``. The lower median; with NaN, the first NaN
    (median) or the lower median of the numbers (nanmedian, 0 when there are none)."""
    n = values.shape[axis]
    if not values._dtype.is_floating:
        return (n - 1) // 2
    numbers = binary.sub(n, reduce.sum(_isnan(values), axis, keepdim=True))
    if ignore_nan:
        return binary.floor_divide(unary.clamp(binary.sub(numbers, 1), min=0), 2)
    return binary.where(binary.lt(numbers, n), numbers, (n - 1) // 2)


def _median(op, result, x, dim, keepdim, ignore_nan):
    check_tensor(op, x)
    _no_bool(op, x, NotImplementedError)
    keepdim = _flag(op, "keepdim", keepdim)
    if dim is None:
        if keepdim:
            raise TypeError(f"{op}(): keepdim needs a dim (the median of all elements is a 0-d tensor)")
        return _median_of_all(op, x, ignore_nan)
    axis = normalize_axis(dim, x.ndim, op)
    _nonempty_dim(op, x, axis)
    values, indices = _sorted(x, axis, False)
    if not x.ndim:
        return result(values, indices)
    position = _median_position(values, axis, ignore_nan)
    return result(_pick(values, axis, position, keepdim), _pick(indices, axis, position, keepdim))


def _median_of_all(op, x, ignore_nan):
    if not x.numel():
        if not x._dtype.is_floating:
            raise RuntimeError(f"{op}(): an empty {x.dtype.name} tensor has no median (PyTorch returns an "
                               f"arbitrary value; floating tensors give NaN)")
        return scalar_tensor(float("nan"), x._dtype, x._backend)
    flat = reshape_to(x, (x.numel(),))
    values, _ = _sorted(flat, 0, False)
    return _pick(values, 0, _median_position(values, 0, ignore_nan), False)


@real_only(why=_NO_ORDER)
def median(input, dim=None, keepdim=False):
    """The lower median of all elements (a 0-d tensor); with ``dim``, ``(values, indices)`` along it.
    NaN propagates: a row with NaN has median NaN, at its first NaN.

    >>> import webgrad as wg
    >>> wg.tensor([4.0, 1.0, 3.0, 2.0]).median().item()
    2.0
    >>> m = wg.tensor([[4.0, 1.0, 3.0], [0.0, 2.0, 5.0]]).median(1)
    >>> m.values.tolist(), m.indices.tolist()
    ([3.0, 2.0], [2, 1])
    """
    return _median("median", return_types.median, input, dim, keepdim, ignore_nan=False)


@real_only(why=_NO_ORDER)
def nanmedian(input, dim=None, keepdim=False):
    """``median`` ignoring NaN: the lower median of the numbers (NaN where there are none).

    >>> import webgrad as wg
    >>> wg.tensor([4.0, float("nan"), 3.0, 2.0]).nanmedian().item()
    3.0
    """
    return _median("nanmedian", return_types.nanmedian, input, dim, keepdim, ignore_nan=True)


# ---------------------------------------------------------------- quantile, nanquantile

_ROUNDING = {"lower": unary.floor, "higher": unary.ceil, "nearest": unary.round, "linear": None, "midpoint": None}


def _quantiles(op, q, x):
    """``q`` as a 1-d tensor of ``x``'s dtype and backend, and whether the result has a dim for it."""
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor, got shape {tuple(q.shape)}")
        if q._dtype is not x._dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor: q is {q.dtype.name}, "
                               f"input is {x.dtype.name}")
        if q._backend.name == "cpu" and q.numel():   # as PyTorch, which checks CPU tensors only (no device sync)
            _in_unit_interval(op, reduce.amin(q).item(), reduce.amax(q).item())
        return reshape_to(q, (q.numel(),)), q.ndim == 1
    if not is_scalar(q):
        raise TypeError(f"{op}(): q must be a float or a tensor, got {type(q).__name__}")
    q = float(python_scalar(q))
    _in_unit_interval(op, q, q)
    return reshape_to(scalar_tensor(q, x._dtype, x._backend), (1,)), False


def _in_unit_interval(op, low, high):
    if not (0 <= low and high <= 1):
        raise RuntimeError(f"{op}() q values must be in the range [0, 1], got values from {low} to {high}")


def _lerp(a, b, w):
    """``a + w * (b - a)`` as PyTorch computes it (from ``b`` once ``w`` reaches 0.5), so results match;
    ``w`` is a tensor or a number."""
    d = binary.sub(b, a)
    if not isinstance(w, Tensor):
        return binary.add(a, binary.mul(d, w)) if w < 0.5 else binary.sub(b, binary.mul(d, 1 - w))
    low = binary.add(a, binary.mul(w, d))
    high = binary.sub(b, binary.mul(d, binary.sub(1, w)))
    return binary.where(binary.lt(w, 0.5), low, high)


def _ranks(s, q, ignore_nan):
    """Fractional positions of the quantiles ``q`` in the rows of ``s`` (sorted along its last dim, NaN
    last), shape (*rows, len(q)): a row with NaN gives its last position (quantile: NaN), nanquantile
    counts the numbers only (position 0, a NaN, when there are none)."""
    n = s.shape[-1]
    if ignore_nan:
        numbers = reduce.sum(unary.logical_not(_isnan(s)), -1, keepdim=True)
        ranks = binary.mul(q, binary.sub(numbers, 1))
        return binary.where(binary.lt(ranks, 0), 0.0, ranks)
    has_nan = reduce.any(_isnan(s), -1, keepdim=True)
    return binary.where(has_nan, float(n - 1), binary.mul(q, n - 1))


def _interpolated(s, ranks, interpolation):
    """The values at fractional positions ``ranks`` of the last dim of ``s``, by ``interpolation``."""
    rounding = _ROUNDING[interpolation]
    if rounding is not None:
        ranks = rounding(ranks)
    below = run_kernel(K.CAST, ranks, dtype=int64)
    values = gather(s, -1, below)
    if rounding is not None:
        return values
    above = gather(s, -1, run_kernel(K.CAST, unary.ceil(ranks), dtype=int64))
    weight = binary.sub(ranks, run_kernel(K.CAST, below, dtype=ranks._dtype)) if interpolation == "linear" else 0.5
    return _lerp(values, above, weight)


def _quantile(op, x, q, dim, keepdim, interpolation, ignore_nan):
    check_tensor(op, x)
    if not x._dtype.is_floating:
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype, got {x.dtype.name}")
    q, q_dim = _quantiles(op, q, x)
    if interpolation not in _ROUNDING:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if not x.numel():
        raise RuntimeError(f"{op}() input tensor must be non-empty, got shape {tuple(x.shape)}")
    keepdim = _flag(op, "keepdim", keepdim)
    if dim is None:
        rows, kept = reshape_to(x, (x.numel(),)), (1,) * x.ndim if keepdim else ()
    else:
        axis = normalize_axis(dim, x.ndim, op)
        rows = movement.movedim(x, axis, -1) if x.ndim else reshape_to(x, (1,))
        kept = tuple(1 if d == axis else s for d, s in enumerate(x.shape) if keepdim or d != axis)
    s, _ = _sorted(rows, rows.ndim - 1, False)
    out = _interpolated(s, _ranks(s, q, ignore_nan), interpolation)    # (*rows, len(q))
    if not q_dim:
        return reshape_to(out, kept)
    return reshape_to(movement.movedim(out, -1, 0), (q.shape[0],) + kept)


@real_only(RuntimeError, _NO_ORDER)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles (``q`` a float or a 0-d/1-d tensor in [0, 1]) of all elements, or along
    ``dim``; a 1-d ``q`` adds a first dim. ``interpolation`` between the two nearest values: "linear",
    "lower", "higher", "midpoint" or "nearest". A row with NaN gives NaN. On GPU backends the range of
    a tensor ``q`` is not checked (as PyTorch on CUDA: that would wait for the device).

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 2.0, 3.0, 4.0]).quantile(0.4).item()
    2.200000047683716
    >>> wg.tensor([[1.0, 2.0], [3.0, 5.0]]).quantile(wg.tensor([0.5, 1.0]), dim=1).tolist()
    [[1.5, 4.0], [2.0, 5.0]]
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


@real_only(RuntimeError, _NO_ORDER)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaN (NaN where a row has no numbers).

    >>> import webgrad as wg
    >>> wg.tensor([1.0, float("nan"), 3.0]).nanquantile(0.5).item()
    2.0
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)


METHODS = {
    "sort": sort, "argsort": argsort, "msort": msort, "topk": topk, "kthvalue": kthvalue, "median": median,
    "nanmedian": nanmedian, "quantile": quantile, "nanquantile": nanquantile,
}

__all__ = list(METHODS)
