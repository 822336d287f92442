"""Shape arithmetic in plain Python: broadcasting, axis normalisation, sizes."""
from __future__ import annotations

import functools
from typing import Iterable, Sequence

Shape = tuple


class ShapeError(RuntimeError, ValueError):
    """Shapes that do not fit an op (they do not broadcast, a reshape's sizes do not match): a
    RuntimeError, as PyTorch raises, and a ValueError, as numpy raises and webgrad raised before.

    >>> try:
    ...     broadcast_shapes((2,), (3,), op="add")
    ... except RuntimeError as e:
    ...     print(type(e).__name__, isinstance(e, ValueError))
    ShapeError True
    """


def remembered(fn):
    """``fn``, remembering its result for each tuple of positional arguments: shapes and axes
    recur every training step, so a dict lookup replaces the arithmetic. Keyword arguments only
    name the op in error messages and are not part of the key; errors are not remembered, and
    unhashable arguments are computed each time. At most 4096 results are kept.

    >>> @remembered
    ... def area(shape): return shape[0] * shape[1]
    >>> area((2, 3)), area((2, 3))
    (6, 6)
    """
    memo = {}

    @functools.wraps(fn)
    def cached(*args, **kwargs):
        try:
            return memo[args]
        except KeyError:
            out = fn(*args, **kwargs)
        except TypeError:   # an unhashable argument
            return fn(*args, **kwargs)
        if len(memo) >= 4096:
            memo.clear()
        memo[args] = out
        return out
    return cached


def numel(shape: Sequence[int]) -> int:
    """Number of elements of a shape. ``numel((2, 3)) == 6``; ``numel(()) == 1``."""
    n = 1
    for s in shape:
        n *= s
    return n


@remembered
def broadcast_shapes(*shapes: Sequence[int], op: str = "broadcast") -> Shape:
    """The numpy/PyTorch broadcast of several shapes, or a ShapeError naming ``op`` and the shapes.

    >>> broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    if len(shapes) == 2 and shapes[0] == shapes[1]:
        return tuple(shapes[0])
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            d = s[i] if -i <= len(s) else 1
            if d != 1:
                if size != 1 and d != size:
                    raise ShapeError(f"{op}: shapes {' and '.join(str(tuple(x)) for x in shapes)} "
                                     f"cannot be broadcast together (dimension {i}: {size} vs {d})")
                size = d
        out.append(size)
    return tuple(out)


def normalize_axis(axis: int, ndim: int, op: str = "op") -> int:
    """Turn a possibly negative axis into ``0 <= axis < ndim``, or raise IndexError naming ``op``."""
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{op}: dim must be an int, got {type(axis).__name__}")
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not lo <= axis <= hi:
        raise IndexError(f"{op}: dim {axis} is out of range for a tensor with {ndim} dimensions "
                         f"(expected a dim in [{lo}, {hi}])")
    return axis % ndim if ndim else 0


def normalize_axes(axes, ndim: int, op: str = "op") -> tuple:
    """Normalise ``None`` (all axes), an int or a sequence of ints into a sorted tuple of unique axes."""
    if axes is None:
        return tuple(range(ndim))
    return tuple(sorted(unique_axes(axes, ndim, op)))


def unique_axes(axes, ndim: int, op: str = "op") -> tuple:
    """Normalise an int or a sequence of ints, keeping their order; left to right, as PyTorch does, so
    that of a repeat and a dim out of range the first met is the error.

    >>> unique_axes((-1, 0), 3)
    (2, 0)
    """
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    out = []
    for a in axes:
        a = normalize_axis(a, ndim, op)
        if a in out:
            raise ShapeError(f"{op}: dims {axes} name a dimension twice")
        out.append(a)
    return tuple(out)


def reduced_shape(shape: Sequence[int], axes: Iterable[int], keepdim: bool) -> Shape:
    """The shape left after reducing ``axes`` (already normalised)."""
    axes = set(axes)
    if keepdim:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def sum_axes_for_broadcast(from_shape: Sequence[int], to_shape: Sequence[int]) -> tuple:
    """Axes of ``from_shape`` to sum (keeping dims) so that it reduces to ``to_shape`` after
    dropping leading dims: the inverse of broadcasting ``to_shape`` up to ``from_shape``."""
    lead = len(from_shape) - len(to_shape)
    return tuple(range(lead)) + tuple(i + lead for i, s in enumerate(to_shape)
                                      if s == 1 and from_shape[i + lead] != 1)


def infer_reshape(shape: Sequence[int], size: int, op: str = "reshape") -> Shape:
    """Resolve one ``-1`` in a target shape against ``size`` elements, checking the total."""
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"{op}: only one dimension can be -1, got {shape}")
    known = numel(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or size % known:
            raise ShapeError(f"{op}: shape {shape} is invalid for input of size {size}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if numel(shape) != size or any(s < 0 for s in shape):
        raise ShapeError(f"{op}: shape {shape} is invalid for input of size {size}")
    return shape


def window_count(size: int, k: int, s: int, p: int, d: int) -> int:
    """How many windows of size ``k`` (dilation ``d``) fit with stride ``s`` over ``size`` padded
    by ``p`` on each side: a convolution's or pooling's output length.

    >>> window_count(5, 3, 1, 1, 1), window_count(8, 2, 2, 0, 1)
    (5, 4)
    """
    return (size + 2 * p - d * (k - 1) - 1) // s + 1
