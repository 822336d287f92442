"""Cumulative extrema and ``logcumsumexp``, and ``mode``, as PyTorch's, composed of kernels every backend
has. The scans are Hillis-Steele: ``log2(n)`` rounds, each combining every place with the one ``step``
before it. ``cummax``/``cummin`` scan (value, index) pairs with PyTorch's rule (a later tie wins, and a
NaN, once met, stays) and take their values with Gather, so the gradient is Gather's (dy scattered to
the indices, PyTorch's rule); ``logcumsumexp`` scans with ``logaddexp`` and differentiates through it."""
from __future__ import annotations

from .. import return_types
from ..dtypes import int64
from ..engine import no_grad
from ..shapes import normalize_axis
from ..tensor import Tensor
from . import binary, comparison, elementary, movement as M, reduce
from .common import NO_ORDER as _NO_ORDER, check_tensor, real_only
from .creation import arange, zeros
from .indexing import gather
from .sorting import sort

cummax_type = return_types.structseq("cummax", ("values", "indices"))
cummin_type = return_types.structseq("cummin", ("values", "indices"))
mode_type = return_types.structseq("mode", ("values", "indices"))


def _earlier(x: Tensor, axis: int, step: int) -> Tensor:
    """``x`` moved ``step`` places on along ``axis`` (the first ``step`` places repeat x's own: a
    combine with them is masked off by the caller)."""
    n = x.shape[axis]
    return M.cat([M.narrow(x, axis, 0, step), M.narrow(x, axis, 0, n - step)], axis)


def _places(x: Tensor, axis: int) -> Tensor:
    """Each place's index along ``axis``, shaped to broadcast against ``x``."""
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return M.reshape(arange(x.shape[axis], device=x._backend), shape)


def _scan(x: Tensor, axis: int, combine) -> list:
    """Hillis-Steele scan of the tuple ``x`` of tensors along ``axis``: ``combine(earlier, later)``
    gives the pair's result for the later place."""
    n, step = x[0].shape[axis], 1
    places = _places(x[0], axis)
    while step < n:
        earlier = [_earlier(t, axis, step) for t in x]
        has = places >= step
        merged = combine(earlier, x)
        x = [binary.where(has, m, t) for m, t in zip(merged, x)]
        step *= 2
    return x


def _extreme_indices(x: Tensor, axis: int, beats) -> Tensor:
    """Per place, the index of the running extreme along ``axis`` (``beats(later, earlier)``: the later
    value takes over, ties included); a NaN takes over and stays, as PyTorch's."""
    def combine(earlier, later):
        (ev, ei), (lv, li) = earlier, later
        wins = comparison.isnan(lv).logical_or(comparison.isnan(ev).logical_not().logical_and(beats(lv, ev)))
        return [binary.where(wins, lv, ev), binary.where(wins, li, ei)]
    places = M.expand(_places(x, axis), x.shape)
    return _scan([x, places], axis, combine)[1]


_CUMULATIVE_DOC = """``(values, indices)``: the running {what} of ``input`` along ``dim`` and where it was
    (the later of equal values; a NaN, once met, stays). The gradient goes to those places.

    >>> import webgrad as wg
    >>> r = wg.{op}(wg.tensor({example}), 0)
    >>> r.values.tolist(), r.indices.tolist()
    {result}
    """


def _cumulative(op: str, beats, result_type, what: str, example: str, result: str):
    def fn(input, dim):
        x = check_tensor(op, input)
        if not x.ndim:
            return result_type(x.clone(), zeros((), dtype=int64, device=x._backend))
        axis = normalize_axis(dim, x.ndim, op)
        if not x.numel():
            return result_type(x.clone(), zeros(x.shape, dtype=int64, device=x._backend))
        with no_grad():
            indices = _extreme_indices(x.detach(), axis, beats)
        return result_type(gather(x, axis, indices), indices)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = _CUMULATIVE_DOC.format(what=what, op=op, example=example, result=result)
    return fn


cummax = _cumulative("cummax", binary.ge, cummax_type, "maximum", "[1.0, 3.0, 2.0, 5.0]",
                     "([1.0, 3.0, 3.0, 5.0], [0, 1, 1, 3])")
cummin = _cumulative("cummin", binary.le, cummin_type, "minimum", "[4, 3, 5, 1]", "([4, 3, 3, 1], [0, 1, 1, 3])")


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))``, computed stably (a scan of ``logaddexp``), differentiable.

    >>> import webgrad as wg
    >>> [round(v, 4) for v in wg.logcumsumexp(wg.tensor([0.0, 0.0, 1000.0]), 0).tolist()]
    [0.0, 0.6931, 1000.0]
    """
    x = check_tensor("logcumsumexp", input)
    if not x._dtype.is_floating:
        raise RuntimeError(f"logcumsumexp: expected a floating tensor, got {x._dtype.name}")
    if not x.ndim:
        return x.clone()
    axis = normalize_axis(dim, x.ndim, "logcumsumexp")
    if not x.numel():
        return x.clone()
    return _scan([x], axis, lambda earlier, later: [elementary.logaddexp(earlier[0], later[0])])[0]


@real_only(why=_NO_ORDER)
def mode(input, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of equally frequent ones;
    NaNs each count once) and the last place it is at, as PyTorch's.

    >>> import webgrad as wg
    >>> r = wg.mode(wg.tensor([[3, 1, 3, 1, 2], [5, 5, 4, 4, 4]]))
    >>> r.values.tolist(), r.indices.tolist()
    ([1, 4], [3, 4])
    """
    x = check_tensor("mode", input)
    axis = normalize_axis(dim, max(x.ndim, 1), "mode")
    if not x.ndim:
        return mode_type(x.clone(), zeros((), dtype=int64, device=x._backend))
    if not x.shape[axis]:
        raise IndexError(f"mode: expected a non-empty dim {axis}, got shape {list(x.shape)}")
    with no_grad():
        values, order = sort(x.detach(), axis, stable=True)
        n = x.shape[axis]
        places = M.expand(_places(values, axis), values.shape)
        same = binary.eq(values, _earlier(values, axis, 1)).logical_and(places >= 1)   # continues a run
        first = cummax(binary.where(same, 0, places), axis).values                   # the run's first place
        counts = places - first + 1
        next_same = M.pad(M.narrow(same, axis, 1, n - 1), (0, 0) * (x.ndim - 1 - axis) + (0, 1), value=False)
        ends = next_same.logical_not()                                              # a run's last place
        best = reduce.argmax(binary.where(ends, counts, -1), axis, keepdim=True)   # the first: the smallest value
        index = gather(order, axis, best)
    out = gather(x, axis, index)
    return mode_type(*(t if keepdim else M.squeeze(t, axis) for t in (out, index)))


METHODS = {
    "cummax": cummax, "cummin": cummin, "logcumsumexp": logcumsumexp, "mode": mode,
}

__all__ = ["cummax", "cummin", "logcumsumexp", "mode"]
