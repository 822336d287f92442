"""``unique`` and ``unique_consecutive``, from a stable sort and the runs of equal neighbours
(NaNs are unequal to each other, so each stays, as in PyTorch). With ``dim``, slices are compared
whole: rows are ordered lexicographically by stable sorts on each column, last column first."""
from __future__ import annotations

from ..dtypes import bool_, int64
from ..shapes import normalize_axis
from ..tensor import Tensor
from . import binary, movement as M, reduce
from .common import NO_ORDER as _NO_ORDER, check_tensor, real_only
from .creation import arange, full
from .indexing import index_copy, index_select, nonzero
from .sorting import sort


def _starts(rows: Tensor) -> Tensor:
    """Where a run of equal rows (of ``rows`` [n, k]) starts: True first, then where a row differs."""
    n = rows.shape[0]
    first = full((1,), True, dtype=bool_, device=rows._backend)
    if n < 2:
        return first[:n]
    differs = binary.ne(rows[1:], rows[:-1])
    return M.cat([first, reduce.any(differs, 1)])


def _runs(rows, order, shape, dim, return_inverse, return_counts):
    """The first row of each run, and optionally each input row's run (``inverse``) and run lengths."""
    n = rows.shape[0]
    starts = _starts(rows)
    first = M.reshape(nonzero(starts), -1)
    out = [index_select(rows, 0, first)]
    if return_inverse:
        run = reduce.cumsum(starts.to(int64), 0) - 1
        if order is not None:
            run = index_copy(full((n,), 0, dtype=int64, device=rows._backend), 0, order, run)
        out.append(M.reshape(run, shape))
    if return_counts:
        ends = M.cat([first[1:], full((1,), n, dtype=int64, device=rows._backend)])
        out.append(ends - first)
    return out


def _as_rows(op, input, dim):
    if dim is None:
        return M.reshape(input, (-1, 1)), (-1,), None
    d = normalize_axis(dim, input.ndim, op)
    moved = M.movedim(input, d, 0)
    return M.reshape(moved, (moved.shape[0], -1)), tuple(moved.shape[1:]), d


def _finish(values, rest, d, extras, input):
    shape = (values.shape[0],) + rest if d is not None else (-1,)
    out = M.reshape(values, shape)
    out = M.movedim(out, 0, d) if d is not None else out
    if input._dtype is bool_:
        out = out.to(bool_)
    return out if not extras else (out, *extras)


def _sortable(rows):
    return rows.to(int64) if rows._dtype is bool_ else rows


@real_only(why=_NO_ORDER)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002  (torch's name)
    """The distinct elements (slices along ``dim``), sorted; with ``return_inverse`` also where
    each input element went, with ``return_counts`` how often each occurs. ``sorted=False`` gives
    them sorted too (PyTorch allows either order).

    >>> import webgrad as wg
    >>> values, inverse, counts = wg.unique(wg.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    >>> values.tolist(), inverse.tolist(), counts.tolist()
    ([1, 2, 3], [2, 0, 2, 1], [1, 1, 2])
    """
    check_tensor("unique", input)
    rows, rest, d = _as_rows("unique", input, dim)
    rows = _sortable(rows)
    order = arange(rows.shape[0], device=rows._backend)
    for j in reversed(range(rows.shape[1])):   # lexicographic: a stable sort per column, the first last
        _, by = sort(index_select(rows[:, j], 0, order), stable=True)
        order = index_select(order, 0, by)
    ordered = index_select(rows, 0, order)
    values, *extras = _runs(ordered, order, input.shape if d is None else (-1,), d, return_inverse, return_counts)
    return _finish(values, rest, d, extras, input)


@real_only(why=_NO_ORDER)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The first element (slice along ``dim``) of each run of equal neighbours, with the same
    optional ``inverse`` and ``counts`` as ``unique``.

    >>> import webgrad as wg
    >>> wg.unique_consecutive(wg.tensor([1, 1, 2, 2, 1])).tolist()
    [1, 2, 1]
    """
    check_tensor("unique_consecutive", input)
    rows, rest, d = _as_rows("unique_consecutive", input, dim)
    values, *extras = _runs(_sortable(rows), None, input.shape if d is None else (-1,), d, return_inverse,
                            return_counts)
    return _finish(values, rest, d, extras, input)


METHODS = {"unique": unique, "unique_consecutive": unique_consecutive}

__all__ = ["unique", "unique_consecutive"]
