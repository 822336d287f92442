"""cpu indexing kernels: torch.gather and torch.scatter_add along one axis."""
import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel


def _coords(name, index, axis, size):
    """Per-dim coordinates of every element of ``index``, with dim ``axis`` replaced by ``index``."""
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index[(index < 0) | (index >= size)].flat[0]
        raise IndexError(f"{name}: index {bad} is out of bounds for dim {axis} with size {size}")
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
