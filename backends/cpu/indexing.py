"""cpu indexing kernels: torch.gather, torch.scatter_add and torch.index_copy along one axis, and
torch.nonzero."""
import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel


def _check_range(name, index, axis, size):
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index[(index < 0) | (index >= size)].flat[0]
        raise IndexError(f"{name}: index {bad} is out of bounds for dim {axis} with size {size}")


def _coords(name, index, axis, size):
    """Per-dim coordinates of every element of ``index``, with dim ``axis`` replaced by ``index``."""
    _check_range(name, index, axis, size)
    grid = list(np.indices(index.shape, sparse=True))
    grid[axis] = index
    return tuple(grid)


@cpu_kernel(K.GATHER)
def gather(x, index, *, axis):
    rows = _row_index(index, axis, x.shape)
    if rows is not None:   # index_select's expanded index (an embedding's lookup): whole slices, one take
        _check_range(K.GATHER, rows, axis, x.shape[axis])
        return np.take(x, rows, axis=axis)
    return x[_coords(K.GATHER, index, axis, x.shape[axis])]


@cpu_kernel(K.SCATTER_ADD)
def scatter_add(x, index, src, *, axis):
    out = x.copy()
    src = src[tuple(slice(0, n) for n in index.shape)]
    rows = _row_index(index, axis, x.shape)
    if rows is not None:
        _check_range(K.SCATTER_ADD, rows, axis, x.shape[axis])
        _add_rows(np.moveaxis(out, axis, 0), rows, np.moveaxis(src, axis, 0))
        return out
    np.add.at(out, _coords(K.SCATTER_ADD, index, axis, x.shape[axis]), src)
    return out


def _row_index(index, axis, shape):
    """The 1-d index along ``axis`` when ``index`` spans every other dim of ``shape`` and repeats it there as a
    broadcast view (stride 0: index_select's expanded index, whose gradient is an embedding's), else None."""
    if index.ndim < 2 or index.size == 0 or any(index.shape[d] != shape[d] or (st != 0 and index.shape[d] > 1)
                                                for d, st in enumerate(index.strides) if d != axis):
        return None
    return index[tuple(slice(None) if d == axis else 0 for d in range(index.ndim))]


def _add_rows(out, rows, src):
    """out[rows[i]] += src[i] for every i, repeats summed: the entries sorted by row (stably, so each
    row's are summed in their order), one reduceat, one write per distinct row (np.add.at walks them
    one by one, ~3x slower)."""
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if rows.size else rows[:0]
    if starts.size:
        out[ordered[starts]] += np.add.reduceat(src[order], starts, axis=0)


@cpu_kernel(K.INDEX_COPY)
def index_copy(x, index, source, *, axis):
    # numpy's assignment through one index array writes its entries in order: the last one wins
    _check_range(K.INDEX_COPY, index, axis, x.shape[axis])
    out = x.copy()
    out[(slice(None),) * axis + (index,)] = source
    return out


@cpu_kernel(K.NONZERO)
def nonzero(x):
    # the flat positions, then their coordinates: cheaper than np.argwhere, which finds them per dim
    if x.ndim == 0:
        return np.zeros((int(x != 0), 0), np.int64)
    flat = np.flatnonzero(x).astype(np.int64, copy=False)
    if x.ndim == 1:
        return flat[:, None]
    return np.stack(np.unravel_index(flat, x.shape), axis=1).astype(np.int64, copy=False)
