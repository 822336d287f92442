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
    return x[_coords(K.GATHER, index, axis, x.shape[axis])]


@cpu_kernel(K.SCATTER_ADD)
def scatter_add(x, index, src, *, axis):
    out = x.copy()
    np.add.at(out, _coords(K.SCATTER_ADD, index, axis, x.shape[axis]),
              src[tuple(slice(0, n) for n in index.shape)])
    return out


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
