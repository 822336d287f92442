"""Counting and bucketing: ``searchsorted``, ``bucketize``, ``isin``, ``bincount``, ``histc``, ``histogram``
as PyTorch's (``unravel_index`` is in ``ops/arranging.py``). No kernels of their own: each is a composition of kernels every
backend has, so each runs on the GPU as it does on cpu. The search is a binary search of fixed length
(``bit_length`` of the sequence's size) as rounds of Gather and Where over all values at once, with
PyTorch's comparisons (a NaN value goes past every boundary). Counts are ScatterAdd into the bins.
Where the output's size depends on the data (``bincount``'s length, a histogram whose range is the
data's), the range is read back once, as PyTorch's own kernels do."""
from __future__ import annotations

from .. import return_types
from ..dtypes import bool_, float32, float64, int32, int64, promote_tensors, scalar_dtype
from ..tensor import Tensor
from . import binary, movement as M, reduce
from .common import NO_ORDER as _NO_ORDER, check_tensor, is_scalar, real_only, scalar_tensor
from .creation import arange, full, zeros
from .indexing import gather, scatter_add
from .sorting import sort

histogram_type = return_types.structseq("histogram", ("hist", "bin_edges"))


def _as_tensor(op: str, x, like: Tensor) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if is_scalar(x):
        return scalar_tensor(x, promote_tensors(like._dtype, 1, scalar_dtype(x), 0), like._backend)
    raise TypeError(f"{op}: expected a Tensor or a Python number, got {type(x).__name__}")


def _common(seq: Tensor, values: Tensor):
    dt = promote_tensors(seq._dtype, 1, values._dtype, 1)
    return seq if seq._dtype is dt else seq.to(dt), values if values._dtype is dt else values.to(dt)


def _positions(seq: Tensor, values: Tensor, right: bool) -> Tensor:
    """int64 positions of ``values`` [..., N] in the sorted last dim of ``seq`` [..., M] (same leading
    dims): PyTorch's cus_lower_bound (``right``: cus_upper_bound), one bisection round per bit of M."""
    m = seq.shape[-1]
    start = zeros(values.shape, dtype=int64, device=values._backend)
    if m == 0 or not values.numel():
        return start
    end = full(values.shape, m, dtype=int64, device=values._backend)
    for _ in range(m.bit_length()):
        active = start < end
        mid = start + ((end - start) >> 1)
        at = gather(seq, -1, mid.clamp(max=m - 1))
        onward = (at > values).logical_not() if right else (at >= values).logical_not()   # NaN goes onward
        start = binary.where(active.logical_and(onward), mid + 1, start)
        end = binary.where(active.logical_and(onward.logical_not()), mid, end)
    return start


def _side(side, right) -> bool:
    if side is None:
        return bool(right)
    if side not in ("left", "right"):
        raise RuntimeError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if right and side == "left":
        raise RuntimeError("searchsorted: side and right can't be set to opposites, got side of left while "
                           "right was True")
    return side == "right"


@real_only(why=_NO_ORDER)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Where ``input``'s values would go in ``sorted_sequence``'s last dim to keep it sorted: the first
    such place, or the last with ``right=True`` / ``side='right'``. A 1-d sequence serves any ``input``;
    an N-d one pairs its leading dims with ``input``'s. ``sorter`` sorts an unsorted sequence. int64
    indices (int32 with ``out_int32``); a Python number gives a 0-d result.

    >>> import webgrad as wg
    >>> wg.searchsorted(wg.tensor([1, 3, 5, 7]), wg.tensor([3, 6, 9])).tolist()
    [1, 3, 4]
    >>> wg.searchsorted(wg.tensor([1, 3, 5, 7]), 3, right=True).item()
    2
    """
    op = "searchsorted"
    seq = check_tensor(op, sorted_sequence, "sorted_sequence")
    values = _as_tensor(op, input, seq)
    right = _side(side, right)
    if seq.ndim == 0:
        raise RuntimeError(f"{op}: sorted_sequence must have at least one dimension, got a 0-d tensor")
    if seq.ndim > 1 and (values.ndim != seq.ndim or tuple(values.shape[:-1]) != tuple(seq.shape[:-1])):
        raise RuntimeError(f"{op}: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                           f"tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(seq.shape)} and input value tensor {list(values.shape)}")
    if sorter is not None:
        sorter = check_tensor(op, sorter, "sorter")
        if tuple(sorter.shape) != tuple(seq.shape) or sorter._dtype.kind != "i":
            raise RuntimeError(f"{op}: sorter must be an integer tensor of the boundaries' shape {list(seq.shape)}, "
                               f"got {sorter._dtype.name} {list(sorter.shape)}")
        seq = gather(seq, -1, sorter.to(int64))
    seq, values = _common(seq, values)
    if seq.ndim == 1:
        flat = M.reshape(values, (-1,))
        out = M.reshape(_positions(seq, flat, right), values.shape)
    else:
        out = _positions(seq, values, right)
    return out.to(int32) if out_int32 else out


@real_only(why=_NO_ORDER)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each of ``input``'s values among the 1-d ``boundaries``: ``i`` with
    ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``: ``boundaries[i-1] <= x < boundaries[i]``).

    >>> import webgrad as wg
    >>> wg.bucketize(wg.tensor([1, 5, 9]), wg.tensor([1, 3, 5, 7])).tolist()
    [0, 2, 4]
    """
    bounds = check_tensor("bucketize", boundaries, "boundaries")
    if bounds.ndim != 1:
        raise RuntimeError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({bounds.ndim})")
    return searchsorted(bounds, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of ``elements`` is among ``test_elements`` (either may be a Python number), as a bool
    tensor of ``elements``' shape; ``invert`` negates it. NaN is in nothing. ``assume_unique`` is
    accepted and changes nothing (it lets PyTorch skip work; the answer is the same).

    >>> import webgrad as wg
    >>> wg.isin(wg.tensor([1, 2, 3]), wg.tensor([2, 5])).tolist()
    [False, True, False]
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin: expected elements or test_elements to be a Tensor, got "
                        f"{type(elements).__name__} and {type(test_elements).__name__}")
    like = elements if isinstance(elements, Tensor) else test_elements
    elements, test_elements = _as_tensor("isin", elements, like), _as_tensor("isin", test_elements, like)
    test, values = _common(M.reshape(test_elements, (-1,)), elements)
    found = zeros(values.shape, dtype=bool_, device=values._backend)
    if test.numel():
        test = sort(test).values
        at = M.reshape(_positions(test, M.reshape(values, (-1,)), False), values.shape)
        found = binary.eq(gather(test, 0, M.reshape(at.clamp(max=test.numel() - 1), (-1,))),
                          M.reshape(values, (-1,)))
        found = M.reshape(found, values.shape)
    return found.logical_not() if invert else found


def bincount(input, weights=None, minlength=0):
    """How often each of 0, 1, 2, ... occurs in the 1-d non-negative integer ``input`` (``weights``
    summed instead of ones): ``max(input) + 1`` bins, at least ``minlength``. int64 counts; weights
    give their own float dtype (float64 for integer weights). The length is read back from the data.

    >>> import webgrad as wg
    >>> wg.bincount(wg.tensor([1, 1, 3])).tolist()
    [0, 2, 0, 1]
    >>> wg.bincount(wg.tensor([1, 1, 3]), wg.tensor([0.5, 0.25, 1.0]), minlength=5).tolist()
    [0.0, 0.75, 0.0, 1.0, 0.0]
    """
    x = check_tensor("bincount", input)
    if x._dtype.is_floating:
        raise NotImplementedError(f"bincount: not implemented for {x._dtype.name} input (it takes integers)")
    if not isinstance(minlength, int) or minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength!r}")
    if x.ndim != 1:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got {x.ndim}-d)")
    if weights is not None:
        weights = check_tensor("bincount", weights, "weights")
        if tuple(weights.shape) != tuple(x.shape):
            raise RuntimeError(f"bincount: weights should be 1-d and have the same length as input, got "
                               f"{list(weights.shape)} for input {list(x.shape)}")
    low, high = (reduce.aminmax(x.to(int64)) if x.numel() else (None, None))
    low, high = (low.item(), high.item()) if low is not None else (0, -1)
    if low < 0:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got the value {low})")
    size = max(high + 1, minlength)
    if weights is None:
        src, dtype = full(x.shape, 1, dtype=int64, device=x._backend), int64
    else:
        dtype = weights._dtype if weights._dtype.is_floating else _float64_on(x)
        src = weights.to(dtype)
    return scatter_add(zeros(size, dtype=dtype, device=x._backend), 0, x.to(int64), src)


def _float64_on(x: Tensor):
    return float64 if float64 in x._backend.dtypes else float32


def _finite_range(op: str, low: float, high: float):
    if not (abs(low) < float("inf") and abs(high) < float("inf")):
        raise RuntimeError(f"{op}: range of [{low}, {high}] is not finite")
    if low > high:
        raise RuntimeError(f"{op}: max must be larger than min, got min {low} and max {high}")


def _data_range(op: str, x: Tensor, widen: float):
    """The data's (min, max), read back, pulled ``widen`` apart where they meet (PyTorch's histc: 1,
    histogram: 0.5); (0, 1) for an empty input."""
    if not x.numel():
        return 0.0, 1.0
    low, high = (t.item() for t in reduce.aminmax(x))
    _finite_range(op, low, high)
    return (low - widen, high + widen) if low == high else (low, high)


def _edges(low: float, high: float, bins: int, x: Tensor) -> Tensor:
    """``bins + 1`` edges from ``low`` to ``high`` in ``x``'s dtype, as PyTorch's linspace computes them
    (from the start for the first half, from the end for the rest)."""
    steps = bins + 1
    i = arange(steps, dtype=x._dtype, device=x._backend)
    low, high = scalar_tensor(low, x._dtype, x._backend), scalar_tensor(high, x._dtype, x._backend)
    step = (high - low) / bins                                 # in x's dtype, as PyTorch's
    return binary.where(i < steps // 2, low + step * i, high - step * (bins - i))


def _counts(x: Tensor, edges: Tensor, weight) -> Tensor:
    """Per bin (``edges`` [B + 1]), the count (or summed ``weight``) of ``x``'s values in it: a value at the
    last edge falls in the last bin, values outside the edges and NaN in none."""
    bins = edges.shape[0] - 1
    flat = M.reshape(x, (-1,))
    at = _positions(edges, flat, True) - 1
    at = binary.where(at == bins, at - 1, at)                            # the last edge is in the last bin
    inside = flat.ge(edges[0]).logical_and(flat.le(edges[-1]))           # NaN too is outside
    at = binary.where(inside, at, bins)                                  # the rest go to a bin cut off below
    src = full(flat.shape, 1, dtype=x._dtype, device=x._backend) if weight is None else \
        M.reshape(weight, (-1,)).to(x._dtype)
    return scatter_add(zeros(bins + 1, dtype=x._dtype, device=x._backend), 0, at, src)[:bins]


def _floating(op: str, x) -> Tensor:
    x = check_tensor(op, x)
    if not x._dtype.is_floating:
        raise NotImplementedError(f"{op}: not implemented for {x._dtype.name} input (it takes floating tensors)")
    return x


@real_only(why=_NO_ORDER)
def histc(input, bins=100, min=0, max=0):  # noqa: A002  (PyTorch's names)
    """The histogram of ``input``'s values in ``bins`` equal bins from ``min`` to ``max`` (the data's own
    range when both are 0, read back); values outside are left out. A float tensor of ``input``'s dtype.

    >>> import webgrad as wg
    >>> wg.histc(wg.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=4).tolist()
    [0.0, 2.0, 1.0, 1.0]
    """
    x = _floating("histc", input)
    if not isinstance(bins, int) or bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins!r}")
    low, high = float(min), float(max)
    if low == high == 0:
        low, high = _data_range("torch.histc", x, 0.0)
    _finite_range("torch.histc", low, high)
    if low == high:
        low, high = low - 1, high + 1
    return _counts(x, _edges(low, high, bins, x), None)


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002  (PyTorch's names)
    """``(hist, bin_edges)``: the histogram of ``input`` in ``bins`` equal bins over ``range`` (the data's
    when None), or over the edges given as a 1-d tensor ``bins``; ``weight`` sums weights instead of
    ones; ``density`` makes it integrate to 1.

    >>> import webgrad as wg
    >>> hist, edges = wg.histogram(wg.tensor([1.0, 2.0, 1.0, 4.0]), bins=3)
    >>> hist.tolist(), edges.tolist()
    ([2.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0])
    """
    x = _floating("histogram", input)
    if weight is not None:
        weight = check_tensor("histogram", weight, "weight")
        if tuple(weight.shape) != tuple(x.shape):
            raise RuntimeError(f"histogram: weight should have the same shape as input, got {list(weight.shape)} "
                               f"for input {list(x.shape)}")
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.shape[0] < 1:
            raise RuntimeError(f"histogram: bins must be a 1-d tensor of at least one edge, got {list(bins.shape)}")
        edges = bins.to(x._dtype)
    else:
        if not isinstance(bins, int) or bins <= 0:
            raise RuntimeError(f"histogram: bins must be > 0, but got {bins!r}")
        if range is None:
            low, high = _data_range("histogram", x, 0.5)
        else:
            low, high = (float(v) for v in range)
            _finite_range("histogram", low, high)
        edges = _edges(low, high, bins, x)
    hist = _counts(x, edges, weight)
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths)
    return histogram_type(hist, edges)


METHODS = {
    "bincount": bincount, "histc": histc, "histogram": histogram,
}

__all__ = ["searchsorted", "bucketize", "isin", "bincount", "histc", "histogram"]
