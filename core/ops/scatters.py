"""The ``*_scatter`` ops: a copy of ``input`` with a view of it (a slice, a selection, a diagonal, a
strided view) replaced by ``src``, PyTorch's out-of-place forms of writing into a view. Each is one
AsStridedScatter at the view's layout in ``input`` (its gradient: ``dy`` outside the view for
``input``, ``dy`` at the view for ``src``).

>>> import webgrad as wg
>>> wg.select_scatter(wg.zeros(2, 2), wg.ones(2), 0, 1).tolist()
[[0.0, 0.0], [1.0, 1.0]]
"""
from __future__ import annotations

from .. import kernel_names as K
from .. import strides as S
from ..engine import run_kernel
from ..shapes import normalize_axis
from ..tensor import Tensor
from .common import check_tensor
from .restriding import _overlapping, _strided_layout


def _scatter(op, input, src, layout) -> Tensor:
    check_tensor(op, input)
    check_tensor(op, src, "src")
    if tuple(src.shape) != tuple(layout.shape):
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(layout.shape)}")
    if src._backend is not input._backend:
        raise RuntimeError(f"{op}: src is on {src._backend.name}, input on {input._backend.name}; move one first")
    src = src if src._dtype is input._dtype else src.to(input._dtype)
    return run_kernel(K.AS_STRIDED_SCATTER, input, src, shape=layout.shape, strides=layout.strides,
                      offset=layout.offset)


def select_scatter(input, src, dim, index) -> Tensor:
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``.

    >>> import webgrad as wg
    >>> wg.select_scatter(wg.zeros(2, 2), wg.tensor([1.0, 2.0]), 1, 0).tolist()
    [[1.0, 0.0], [2.0, 0.0]]
    """
    check_tensor("select_scatter", input)
    d = normalize_axis(dim, input.ndim, "select_scatter")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter: index {index} out of range for tensor of size {tuple(input.shape)} at "
                         f"dimension {dim}")
    i = index % n
    layout = S.contiguous(input.shape)
    layout = S.Layout(layout.shape[:d] + layout.shape[d + 1:], layout.strides[:d] + layout.strides[d + 1:],
                      i * layout.strides[d])
    return _scatter("select_scatter", input, src, layout)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1) -> Tensor:
    """A copy of ``input`` with its slice ``start:end:step`` along ``dim`` replaced by ``src``.

    >>> import webgrad as wg
    >>> wg.slice_scatter(wg.zeros(4), wg.ones(2), start=1, step=2).tolist()
    [0.0, 1.0, 0.0, 1.0]
    """
    check_tensor("slice_scatter", input)
    if step <= 0:
        raise RuntimeError(f"slice_scatter: slice step must be positive, got {step}")
    d = normalize_axis(dim, input.ndim, "slice_scatter")
    b, e, _ = slice(start, end, step).indices(input.shape[d])
    begin, stop, steps = [0] * input.ndim, list(input.shape), [1] * input.ndim
    begin[d], stop[d], steps[d] = b, max(b, e), step
    return _scatter("slice_scatter", input, src, S.sliced(S.contiguous(input.shape), begin, stop, steps))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1) -> Tensor:
    """A copy of ``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``.

    >>> import webgrad as wg
    >>> wg.diagonal_scatter(wg.zeros(2, 2), wg.ones(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    check_tensor("diagonal_scatter", input)
    d1, d2 = normalize_axis(dim1, input.ndim, "diagonal_scatter"), normalize_axis(dim2, input.ndim, "diagonal_scatter")
    if d1 == d2:
        raise RuntimeError(f"diagonal_scatter: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _scatter("diagonal_scatter", input, src, S.diagonal(S.contiguous(input.shape), offset, d1, d2))


def as_strided_scatter(input, src, size, stride, storage_offset=None) -> Tensor:
    """A copy of ``input`` with ``input.as_strided(size, stride, storage_offset)`` replaced by ``src``
    (places of ``input`` in row-major order; the view may not put two elements at one place).

    >>> import webgrad as wg
    >>> wg.as_strided_scatter(wg.zeros(2, 2), wg.ones(2), (2,), (3,)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    check_tensor("as_strided_scatter", input)
    layout = _strided_layout("as_strided_scatter", input.contiguous(), size, stride,
                             0 if storage_offset is None else storage_offset)
    if _overlapping(layout):
        raise RuntimeError(f"as_strided_scatter: size {layout.shape} and stride {layout.strides} put two elements "
                           f"at one place; each place can take one value")
    return _scatter("as_strided_scatter", input, src, layout)


METHODS = {"select_scatter": select_scatter, "slice_scatter": slice_scatter, "diagonal_scatter": diagonal_scatter,
           "as_strided_scatter": as_strided_scatter}

__all__ = list(METHODS)
