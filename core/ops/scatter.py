"""``scatter``: ``out[index[i][j]][j] = src[i][j]`` for ``dim=0`` (a number ``value`` instead of
``src`` too), as one IndexCopy into the flattened input at each index element's position; with
``reduce='add'``, ``scatter_add``. Where ``index`` repeats a position the last write wins (PyTorch
leaves it unspecified)."""
from __future__ import annotations

import warnings

from ..dtypes import int64, is_index
from ..shapes import normalize_axis
from ..tensor import Tensor
from . import movement as M
from .common import check_tensor, inplace_method, is_scalar
from .creation import arange, full
from .indexing import index_copy, scatter_add

_REDUCE = (None, "add", "multiply")


def _positions(input, index, d):
    """Each index element's position in the flattened (row-major) ``input``."""
    strides, step = [], 1
    for n in reversed(input.shape):
        strides.insert(0, step)
        step *= n
    pos = index.to(int64) * strides[d]
    for k, n in enumerate(index.shape):
        if k != d:
            shape = tuple(-1 if j == k else 1 for j in range(index.ndim))
            pos = pos + M.reshape(arange(n, device=index._backend) * strides[k], shape)
    return M.reshape(pos, -1)


def scatter(input, dim, index, src=None, value=None, *, reduce=None) -> Tensor:
    """A copy of ``input`` with ``src[i][j]`` (or the number ``value``) written at row ``index[i][j]``
    for ``dim=0``, and so on for other dims; ``reduce='add'`` adds instead ('multiply' is not supported).

    >>> import webgrad as wg
    >>> wg.zeros(2, 3).scatter(0, wg.tensor([[1, 0, 1]]), wg.tensor([[5.0, 6.0, 7.0]])).tolist()
    [[0.0, 6.0, 0.0], [5.0, 0.0, 7.0]]
    >>> wg.zeros(3).scatter(0, wg.tensor([2]), value=1.5).tolist()
    [0.0, 0.0, 1.5]
    """
    check_tensor("scatter", input)
    check_tensor("scatter", index, "index")
    source = src if src is not None else value
    if (src is None) == (value is None) or not (isinstance(source, Tensor) or is_scalar(source)):
        raise TypeError("scatter: give src (a tensor) or value (a number), one of them")
    if reduce not in _REDUCE:
        raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
    if reduce is not None and isinstance(source, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                      "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                      UserWarning, stacklevel=2)
    if reduce == "multiply":
        raise NotImplementedError("scatter: reduce='multiply' is not supported; use reduce='add' or scatter_add")
    d = normalize_axis(dim, max(input.ndim, 1), "scatter")
    if not is_index(index._dtype) or index.ndim != input.ndim or any(
            i > n for k, (i, n) in enumerate(zip(index.shape, input.shape)) if k != d):
        raise RuntimeError(f"scatter: index must be an int64 tensor of the input's number of dims, no larger than "
                           f"the input {tuple(input.shape)} outside dim {d}; got {index.dtype.name} "
                           f"{tuple(index.shape)}")
    if isinstance(source, Tensor):
        check_tensor("scatter", source, "src")
        if source.ndim != index.ndim or any(i > s for i, s in zip(index.shape, source.shape)):
            raise RuntimeError(f"scatter: index {tuple(index.shape)} must be no larger than src "
                               f"{tuple(source.shape)} in every dim")
        values = source[tuple(slice(0, n) for n in index.shape)].to(input.dtype)
    else:
        values = full(tuple(index.shape), source, dtype=input.dtype, device=input._backend)
    if reduce == "add":
        return scatter_add(input, d, index, values)
    flat = index_copy(M.reshape(input, -1), 0, _positions(input, index, d), M.reshape(values, -1))
    return M.reshape(flat, tuple(input.shape))


METHODS = {"scatter": scatter, "scatter_": inplace_method("scatter_", scatter)}

__all__ = ["scatter"]
