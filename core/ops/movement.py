"""Movement ops: reshaping, transposing, broadcasting, slicing, joining, repeating and padding.

Each is one of six kernels (Reshape, Transpose, Expand, Slice, Concat, Pad) or a composition of
them; the view ops return a new tensor even where they change nothing, as PyTorch's. The ops that are views in PyTorch
(reshape and view of what strides can express, transpose, permute, expand, narrow, split, chunk,
select, unbind, diagonal, squeeze, unsqueeze, basic indexing) register their result as a view of
their input's storage (``webgrad.views``), so in-place changes show through as in PyTorch.
"""
from __future__ import annotations

import functools
import operator

from .. import kernel_names as K
from .. import strides as S
from ..dtypes import DType, int64, promote
from ..layouts import check_memory_format
from ..engine import run_kernel
from ..shapes import ShapeError, infer_reshape, normalize_axes, normalize_axis, numel, unique_axes
from ..tensor import Tensor, tensor
from ..views import layout_of, make_view
from . import indexing
from .common import check_tensor, reshape_to, scalar_tensor, tensor_sequence
from .creation import arange
from ..node_names import labelled


def _sizes(args, op) -> tuple:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all give ``(2, 3)``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    try:
        return tuple(operator.index(a) for a in args)
    except TypeError:
        raise TypeError(f"{op}: sizes must be ints, got {tuple(args)}") from None


def _sizes_or(op, args, keyword, name) -> tuple:
    """The sizes of ``f(2, 3)``, ``f((2, 3))`` or ``f(name=(2, 3))``: PyTorch's ``*size`` parameters
    take their name as a keyword too."""
    if keyword is not None:
        if args:
            raise TypeError(f"{op}() got multiple values for argument '{name}'")
        args = (keyword,)
    return _sizes(args, op)


def _dims_or(op, args, keyword, name):
    """The dims of ``f(0, 1)``, ``f((0, 1))`` or ``f(name=(0, 1))``; None when none are given."""
    if keyword is not None:
        if args:
            raise TypeError(f"{op}() got multiple values for argument '{name}'")
        return keyword
    return args[0] if len(args) == 1 else (tuple(args) if args else None)


def _fresh(y, x):
    """``y``, or a copy when it is ``x`` itself or a view: for ops that copy in PyTorch, so that an
    in-place op on the result leaves the input alone."""
    return run_kernel(K.IDENTITY, y) if y is x or y._view is not None else y


# ---------------------------------------------------------------- reshaping


def _reshape(x, shape, op):
    """``x`` in ``shape``: a view where strides can express it, else a copy (``view`` then raises)."""
    check_tensor(op, x)
    shape = infer_reshape(shape, x.numel(), op)
    out = run_kernel(K.RESHAPE, x, shape=shape)
    layout = S.reshaped(layout_of(x), shape)
    if layout is not None:
        return make_view(x, out, layout)
    if op == "view":
        raise RuntimeError(f"view: view size is not compatible with input tensor's size and stride (at least one "
                           f"dimension spans across two contiguous subspaces): shape {tuple(x.shape)}, strides "
                           f"{x.stride()} to shape {shape}. Use .reshape(...) instead.")
    return out


def reshape(input, *sizes, shape=None) -> Tensor:
    """The same elements (row-major) in a new shape (``reshape(2, 3)``, ``reshape((2, 3))`` or
    ``reshape(shape=(2, 3))``); one size may be -1.

    >>> import webgrad as wg
    >>> wg.arange(6).reshape(2, -1).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    return _reshape(input, _sizes_or("reshape", sizes, shape, "shape"), "reshape")


def view(input, *sizes, size=None) -> Tensor:
    """A view of ``input``'s storage in a new shape (``view(2, 3)``, ``view((2, 3))`` or
    ``view(size=(2, 3))``), where strides can express it; else a RuntimeError (use ``reshape``).
    ``view(dtype)``, which reinterprets bits, is not supported: ``.to(dtype)`` converts values.

    >>> import webgrad as wg
    >>> wg.zeros(4).view(2, 2).shape
    webgrad.Size([2, 2])
    """
    if len(sizes) == 1 and isinstance(sizes[0], DType):
        raise NotImplementedError(f"view: view(dtype) reinterprets the bits of {input.dtype} as {sizes[0]}, which "
                                  f"webgrad does not do; .to({sizes[0]}) converts the values")
    return _reshape(input, _sizes_or("view", sizes, size, "size"), "view")


def flatten(input, start_dim=0, end_dim=-1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one (a 0-d tensor becomes 1-d).

    >>> import webgrad as wg
    >>> wg.zeros(2, 3, 4).flatten(1).shape
    webgrad.Size([2, 12])
    """
    check_tensor("flatten", input)
    s, e = normalize_axis(start_dim, input.ndim, "flatten"), normalize_axis(end_dim, input.ndim, "flatten")
    if input.ndim == 0:
        return _reshape(input, (1,), "flatten")
    if s > e:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    if s == e:
        return input     # PyTorch's flatten returns its input when no dims merge
    return _reshape(input, input.shape[:s] + (numel(input.shape[s:e + 1]),) + input.shape[e + 1:], "flatten")


def unflatten(input, dim, sizes) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one may be -1).

    >>> import webgrad as wg
    >>> wg.zeros(2, 12).unflatten(1, (3, -1)).shape
    webgrad.Size([2, 3, 4])
    """
    check_tensor("unflatten", input)
    d = normalize_axis(dim, input.ndim, "unflatten")
    if not input.ndim:
        raise RuntimeError(f"unflatten: dim {dim} of a 0-d tensor (it has no dims to split)")
    sizes = infer_reshape(_sizes((sizes,), "unflatten"), input.shape[d], "unflatten")
    return _reshape(input, input.shape[:d] + sizes + input.shape[d + 1:], "unflatten")


def squeeze(input, *dims, dim=None) -> Tensor:
    """Drop dims of size 1 (all of them, or those among ``dim``: an int, a tuple, or several ints).

    >>> import webgrad as wg
    >>> wg.zeros(1, 2, 1).squeeze().shape, wg.zeros(1, 2, 1).squeeze(0).shape
    (webgrad.Size([2]), webgrad.Size([2, 1]))
    """
    check_tensor("squeeze", input)
    dims = normalize_axes(_dims_or("squeeze", dims, dim, "dim"), input.ndim, "squeeze")
    return _reshape(input, tuple(s for i, s in enumerate(input.shape) if not (i in dims and s == 1)), "squeeze")


def unsqueeze(input, dim) -> Tensor:
    """Insert a dim of size 1 at ``dim`` (in ``[-ndim - 1, ndim]``).

    >>> import webgrad as wg
    >>> wg.zeros(2, 3).unsqueeze(-1).shape
    webgrad.Size([2, 3, 1])
    """
    check_tensor("unsqueeze", input)
    d = normalize_axis(dim, input.ndim + 1, "unsqueeze")
    return _reshape(input, input.shape[:d] + (1,) + input.shape[d:], "unsqueeze")


# ---------------------------------------------------------------- transposing


def _transpose(x, perm):
    perm = tuple(perm)
    return make_view(x, run_kernel(K.TRANSPOSE, x, perm=perm), S.permuted(layout_of(x), perm))


def permute(input, *order, dims=None) -> Tensor:
    """Reorder the dims: output dim ``i`` is input dim ``dims[i]``.

    >>> import webgrad as wg
    >>> wg.zeros(2, 3, 4).permute(2, 0, 1).shape
    webgrad.Size([4, 2, 3])
    """
    check_tensor("permute", input)
    dims = unique_axes(_sizes_or("permute", order, dims, "dims"), input.ndim, "permute")
    if len(dims) != input.ndim:
        raise ShapeError(f"permute: got {len(dims)} dims {dims} for a tensor of shape {tuple(input.shape)}")
    return _transpose(input, dims)


def transpose(input, dim0, dim1) -> Tensor:
    """Swap two dims.

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2, 3]]).transpose(0, 1).tolist()
    [[1], [2], [3]]
    """
    check_tensor("transpose", input)
    if input.ndim == 0:
        normalize_axis(dim0, 0, "transpose"), normalize_axis(dim1, 0, "transpose")
        return input
    perm = list(range(input.ndim))
    a, b = normalize_axis(dim0, input.ndim, "transpose"), normalize_axis(dim1, input.ndim, "transpose")
    perm[a], perm[b] = b, a
    return _transpose(input, perm)


def movedim(input, source, destination) -> Tensor:
    """Move dims ``source`` to positions ``destination`` (ints or tuples), keeping the others' order.

    >>> import webgrad as wg
    >>> wg.zeros(2, 3, 4).movedim(0, -1).shape
    webgrad.Size([3, 4, 2])
    """
    check_tensor("movedim", input)
    src, dst = unique_axes(source, input.ndim, "movedim"), unique_axes(destination, input.ndim, "movedim")
    if len(src) != len(dst):
        raise ShapeError(f"movedim: source {source} and destination {destination} differ in length")
    rest = iter(d for d in range(input.ndim) if d not in src)
    where = dict(zip(dst, src))
    return _transpose(input, [where[i] if i in where else next(rest) for i in range(input.ndim)])


def _T(x):
    return _transpose(x, range(x.ndim)[::-1])


def _mT(x):
    if not x.ndim:   # PyTorch's (deprecated there): the identity
        return x
    if x.ndim < 2:
        raise ShapeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {x.ndim}-D tensor "
                         f"of shape {tuple(x.shape)}.")
    return transpose(x, -2, -1)


# ---------------------------------------------------------------- broadcasting and copies


def expand(input, *sizes, size=None, implicit=False) -> Tensor:
    """Broadcast to ``sizes`` (new dims go in front; -1 keeps a dim's size). ``implicit`` is
    accepted without effect, as it has none on PyTorch's results.

    >>> import webgrad as wg
    >>> wg.tensor([[1], [2]]).expand(-1, 3).tolist()
    [[1, 1, 1], [2, 2, 2]]
    """
    check_tensor("expand", input)
    sizes = _sizes_or("expand", sizes, size, "size")
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise ShapeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
                         f"number of dimensions in the tensor ({input.ndim}); tensor shape {tuple(input.shape)}")
    out, shape = list(sizes), input._data.shape
    for i, s in enumerate(sizes):
        have = shape[i - lead] if i >= lead else None
        if s == -1 and have is not None:
            out[i] = have
        elif s < 0 and have is None:
            raise ShapeError(f"expand: the expanded size of the tensor ({s}) isn't allowed in a leading, "
                             f"non-existing dimension {i}; tensor shape {tuple(input.shape)}")
        elif s < 0 or (have is not None and have not in (1, s)):
            raise ShapeError(f"expand: the expanded size of the tensor ({s}) must match the existing size "
                             f"({have}) at non-singleton dimension {i}. Target sizes: {tuple(sizes)}. "
                             f"Tensor sizes: {tuple(input.shape)}")
    out = tuple(out)
    return make_view(input, run_kernel(K.EXPAND, input, shape=out), S.expanded(layout_of(input), out))


def broadcast_to(input, *sizes, size=None) -> Tensor:
    """``expand`` to ``size``.

    >>> import webgrad as wg
    >>> wg.broadcast_to(wg.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2], [1, 2]]
    """
    return expand(input, _sizes_or("broadcast_to", sizes, size, "size"))


def expand_as(input, other) -> Tensor:
    """``expand`` to ``other``'s shape.

    >>> import webgrad as wg
    >>> wg.tensor([1]).expand_as(wg.zeros(3)).tolist()
    [1, 1, 1]
    """
    return expand(input, tuple(other.shape))


def contiguous(input, memory_format=None) -> Tensor:
    """``input`` itself when its elements lie in row-major order in its storage, else a copy that does.

    >>> import webgrad as wg
    >>> t = wg.zeros(2, 3); t.contiguous() is t, t.t().contiguous().is_contiguous()
    (True, True)
    """
    check_tensor("contiguous", input)
    return input if input.is_contiguous() else clone(input)


def clone(input, *, memory_format=None) -> Tensor:
    """A copy of ``input`` (differentiable, unlike ``detach``); ``memory_format`` is accepted without
    effect (webgrad keeps tensors row-major).

    >>> import webgrad as wg
    >>> wg.tensor([1.0]).clone().tolist()
    [1.0]
    """
    check_memory_format("clone", memory_format)
    return run_kernel(K.IDENTITY, check_tensor("clone", input))


# ---------------------------------------------------------------- slicing


def _slice(x, begin, end, step):
    """Kernel Slice with per-dim (begin, end, step) as Python's ``range`` takes them."""
    if all(b == 0 and e == n and s == 1 for b, e, s, n in zip(begin, end, step, x.shape)):
        return x
    return run_kernel(K.SLICE, x, begin=tuple(begin), end=tuple(end), step=tuple(step))


def _dim_range(x, d, start, stop, step=1):
    """(begin, end, step) per dim for ``range(start, stop, step)`` along dim ``d``, all of the others."""
    begin, end, steps = [0] * x.ndim, list(x._data.shape), [1] * x.ndim
    begin[d], end[d], steps[d] = start, stop, step
    return begin, end, steps


def _slice_dim(x, d, start, stop, step=1):
    return _slice(x, *_dim_range(x, d, start, stop, step))


def basic_index(x, begin, end, step, shape, recipe=None) -> Tensor:
    """``x`` sliced (``range(begin, end, step)`` per dim) and reshaped to ``shape`` (dims taken by an
    int dropped, dims of None added): a view of ``x``, unless a step is negative (then a copy).
    ``recipe`` (the index items, see ``strides.indexed``) gives the view PyTorch's strides for the
    dims of size 1 that None inserts."""
    y = reshape_to(_slice(x, begin, end, step), shape)
    if y is x:
        y = run_kernel(K.RESHAPE, x, shape=x._data.shape)    # x[:] and x[...] are new tensors in PyTorch too
    elif any(s <= 0 for s in step):
        return y
    layout = layout_of(x)
    layout = S.indexed(layout, recipe) if recipe is not None else \
        S.reshaped(S.sliced(layout, begin, end, step), tuple(shape))
    return make_view(x, y, layout)


def _dims_of(op, x, error):
    """Refuse a 0-d tensor for ``op``, which works along a dim, with PyTorch's ``error`` type."""
    if not check_tensor(op, x).ndim:
        raise error(f"{op}: cannot be applied to a 0-dim tensor (it has no dims)")


def narrow(input, dim, start, length) -> Tensor:
    """Elements ``start .. start + length`` of dim ``dim``.

    >>> import webgrad as wg
    >>> wg.arange(5).narrow(0, 1, 3).tolist()
    [1, 2, 3]
    """
    _dims_of("narrow", input, RuntimeError)
    d = normalize_axis(dim, input.ndim, "narrow")
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"narrow: start {start} is out of range for dim {dim} of size {n} "
                         f"(expected one in [{-n}, {n}])")
    start = start + n if start < 0 else start
    if not 0 <= length <= n - start:    # PyTorch's RuntimeError
        raise RuntimeError(f"narrow: start ({start}) + length ({length}) exceeds the size ({n}) of dim {dim}, or "
                           f"length is negative")
    shape = input.shape[:d] + (length,) + input.shape[d + 1:]
    return basic_index(input, *_dim_range(input, d, start, start + length), shape)


def select(input, dim, index) -> Tensor:
    """The slice at ``index`` along ``dim``, that dim removed: a view (``input[:, index]`` for ``dim=1``).

    >>> import webgrad as wg
    >>> wg.arange(6).reshape(2, 3).select(1, -1).tolist()
    [2, 5]
    """
    _dims_of("select", input, IndexError)
    d = normalize_axis(dim, input.ndim, "select")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select: index {index} out of range for tensor of size {tuple(input.shape)} at "
                         f"dimension {dim}")
    i = index + n if index < 0 else index
    return basic_index(input, *_dim_range(input, d, i, i + 1), input.shape[:d] + input.shape[d + 1:])


def unbind(input, dim=0) -> tuple:
    """The slices along ``dim``, that dim removed: a tuple of views.

    >>> import webgrad as wg
    >>> [t.tolist() for t in wg.arange(4).reshape(2, 2).unbind(1)]
    [[0, 2], [1, 3]]
    """
    _dims_of("unbind", input, IndexError)
    d = normalize_axis(dim, input.ndim, "unbind")
    return tuple(select(input, d, i) for i in range(input.shape[d]))


def diagonal(input, offset=0, dim1=0, dim2=1) -> Tensor:
    """The diagonal ``offset`` (above the main one when positive) of the planes ``dim1``, ``dim2``,
    as a last dim: a view, as PyTorch's.

    >>> import webgrad as wg
    >>> wg.arange(9).reshape(3, 3).diagonal(1).tolist()
    [1, 5]
    """
    check_tensor("diagonal", input)
    d1, d2 = normalize_axis(dim1, input.ndim, "diagonal"), normalize_axis(dim2, input.ndim, "diagonal")
    if d1 == d2:
        raise ShapeError(f"diagonal: dimensions cannot be identical {dim1}, {dim2}")
    here = S.diagonal(S.contiguous(input.shape), offset, d1, d2)
    out = run_kernel(K.AS_STRIDED, input, shape=here.shape, strides=here.strides, offset=here.offset)
    return make_view(input, out, S.diagonal(layout_of(input), offset, d1, d2))


def t(input) -> Tensor:
    """The transpose of a tensor of at most 2 dims (``input`` itself below 2).

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2]]).t().tolist()
    [[1], [2]]
    """
    check_tensor("t", input)
    if input.ndim > 2:
        raise RuntimeError(f"t: t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def view_as(input, other) -> Tensor:
    """``input.view(other.shape)``."""
    return view(input, tuple(check_tensor("view_as", other, "other").shape))


def reshape_as(input, other) -> Tensor:
    """``input.reshape(other.shape)``."""
    return reshape(input, tuple(check_tensor("reshape_as", other, "other").shape))


def split(tensor, split_size_or_sections, dim=0) -> tuple:
    """Pieces of ``tensor`` along ``dim``: of ``split_size`` each (the last may be smaller), or of the
    given section sizes.

    >>> import webgrad as wg
    >>> [t.tolist() for t in wg.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    """
    _dims_of("split", tensor, RuntimeError)
    d = normalize_axis(dim, tensor.ndim, "split")
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and not (size == 0 and n == 0):
            raise ShapeError(f"split: split_size must be positive, got {size}")
        sections = [min(size, n - i) for i in range(0, n, size)] if n else [0]
    else:
        sections = list(split_size_or_sections)
        if sum(sections) != n or any(s < 0 for s in sections):
            raise ShapeError(f"split: sections {tuple(sections)} do not sum to {n}, the size of dim {dim} "
                             f"of shape {tuple(tensor.shape)}")
    pieces = run_kernel(K.SPLIT, tensor, sizes=tuple(sections), axis=d)
    layout, start, out = layout_of(tensor), 0, []
    for s, piece in zip(sections, pieces if isinstance(pieces, tuple) else (pieces,)):
        out.append(make_view(tensor, piece, S.sliced(layout, *_dim_range(tensor, d, start, start + s))))
        start += s
    return tuple(out)


def _split_method(self, split_size, dim=0) -> tuple:
    """``torch.split(self, split_size, dim)``: pieces of ``split_size`` each, or of the given section sizes.

    >>> import webgrad as wg
    >>> [t.tolist() for t in wg.arange(5).split(split_size=[1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    return split(self, split_size, dim)


def chunk(input, chunks, dim=0) -> tuple:
    """Split into ``chunks`` pieces of ``ceil(n / chunks)`` (maybe fewer pieces, as in PyTorch).

    >>> import webgrad as wg
    >>> [t.tolist() for t in wg.arange(5).chunk(2)]
    [[0, 1, 2], [3, 4]]
    """
    check_tensor("chunk", input)
    if not isinstance(chunks, int) or chunks <= 0:
        raise ValueError(f"chunk: chunks must be a positive int, got {chunks!r}")
    _dims_of("chunk", input, RuntimeError)
    n = input.shape[normalize_axis(dim, input.ndim, "chunk")]
    if not n:   # PyTorch's: ``chunks`` empty pieces
        return split(input, [0] * chunks, dim)
    return split(input, max(1, -(-n // chunks)), dim)


def flip(input, *order, dims=None) -> Tensor:
    """Reverse the order of elements along ``dims`` (an int, a tuple, or several ints).

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2], [3, 4]]).flip(1).tolist()
    [[2, 1], [4, 3]]
    """
    check_tensor("flip", input)
    dims = _dims_or("flip", order, dims, "dims")
    if dims is None:
        raise TypeError("flip() missing 1 required argument: 'dims'")
    dims = unique_axes(dims, input.ndim, "flip")
    begin = [n - 1 if i in dims else 0 for i, n in enumerate(input.shape)]
    end = [-1 if i in dims else n for i, n in enumerate(input.shape)]
    step = [-1 if i in dims else 1 for i in range(input.ndim)]
    return _fresh(_slice(input, begin, end, step), input)


def roll(input, shifts, dims=None) -> Tensor:
    """Shift elements cyclically by ``shifts`` along ``dims`` (the flattened tensor when None).

    >>> import webgrad as wg
    >>> wg.arange(5).roll(2).tolist()
    [3, 4, 0, 1, 2]
    """
    check_tensor("roll", input)
    if dims is None:
        return _reshape(roll(flatten(input), shifts, 0), input.shape, "roll")
    y = input
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise ShapeError(f"roll: got {len(shifts)} shifts {shifts} for {len(dims)} dims {dims}")
    if not input.numel():   # PyTorch's: an empty tensor's copy, its dims not looked at
        return clone(input)
    _dims_of("roll", input, IndexError)
    for s, dim in zip(shifts, dims):
        d = normalize_axis(dim, y.ndim, "roll")
        n = y.shape[d]
        k = s % n if n else 0
        if k:
            y = cat([_slice_dim(y, d, n - k, n), _slice_dim(y, d, 0, n - k)], d)
    return _fresh(y, input)


# ---------------------------------------------------------------- joining and repeating


def _check_same_backend(op, tensors):
    be = tensors[0]._backend
    if any(t._backend is not be for t in tensors):
        got = ", ".join(f"{t._backend.name} {tuple(t.shape)}" for t in tensors)
        raise RuntimeError(f"{op}: tensors live on different backends ({got}); move them to one backend first, "
                           f"e.g. t.to({be.name!r})")


def cat(tensors, dim=0) -> Tensor:
    """Join tensors along an existing dim (1-d empty tensors are skipped, as in PyTorch).

    >>> import webgrad as wg
    >>> wg.cat([wg.tensor([1, 2]), wg.tensor([3])]).tolist()
    [1, 2, 3]
    """
    tensors = tensor_sequence("cat", tensors)
    if not tensors:
        raise ShapeError("cat: expected a non-empty list of tensors")
    kept = [t for t in tensors if t._data.shape != (0,)]
    if any(t.ndim == 0 for t in tensors):
        raise ShapeError("cat: zero-dimensional tensors cannot be concatenated (use stack)")
    kept, first = kept or tensors[:1], (kept or tensors)[0]
    d = normalize_axis(dim, first.ndim, "cat") if first._data.shape != (0,) else 0   # all empty: dim is not looked at
    for t in kept:
        if t.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(t._data.shape, first._data.shape))
                                       if i != d):
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise ShapeError(f"cat: sizes of tensors must match except in dimension {d}; got shapes {shapes}")
    _check_same_backend("cat", kept)
    dtype = functools.reduce(promote, (t._dtype for t in tensors))   # PyTorch promotes (the skipped ones too)
    kept = [t if t._dtype is dtype else run_kernel(K.CAST, t, dtype=dtype) for t in kept]
    return clone(kept[0]) if len(kept) == 1 else run_kernel(K.CONCAT, *kept, axis=d)


def stack(tensors, dim=0) -> Tensor:
    """Join tensors of one shape along a new dim.

    >>> import webgrad as wg
    >>> wg.stack([wg.tensor([1, 2]), wg.tensor([3, 4])], 1).tolist()
    [[1, 3], [2, 4]]
    """
    tensors = tensor_sequence("stack", tensors)
    if not tensors:
        raise ShapeError("stack: expected a non-empty list of tensors")
    d = normalize_axis(dim, tensors[0].ndim + 1, "stack")
    if any(t.shape != tensors[0].shape for t in tensors):
        raise ShapeError(f"stack: expects each tensor to be equal size, got shapes "
                         f"{', '.join(str(tuple(t.shape)) for t in tensors)}")
    return labelled(cat([unsqueeze(t, d) for t in tensors], d), "StackBackward0")


def repeat(input, *sizes, repeats=None) -> Tensor:
    """Tile ``input`` ``sizes[i]`` times along dim ``i`` (PyTorch's ``repeat``; extra sizes add leading dims).

    >>> import webgrad as wg
    >>> wg.tensor([1, 2]).repeat(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    check_tensor("repeat", input)
    sizes = _sizes_or("repeat", sizes, repeats, "repeats")
    if len(sizes) < input.ndim or any(s < 0 for s in sizes):
        raise ShapeError(f"repeat: number of repeat dims {sizes} can not be smaller than number of tensor "
                         f"dims {input.ndim} and must be non-negative")
    shape = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    y = _reshape(input, [p for n in shape for p in (1, n)], "repeat")
    y = expand(y, [p for r, n in zip(sizes, shape) for p in (r, n)])
    return _fresh(_reshape(y, tuple(r * n for r, n in zip(sizes, shape)), "repeat"), input)


def tile(input, *order, dims=None) -> Tensor:
    """``repeat``, with ``dims`` (a tuple, or several ints) padded with leading 1s to ``input.ndim``.

    >>> import webgrad as wg
    >>> wg.tensor([[1, 2]]).tile((2,)).tolist()
    [[1, 2, 1, 2]]
    """
    dims = _dims_or("tile", order, dims, "dims")
    if dims is None:
        raise TypeError("tile() missing 1 required argument: 'dims'")
    dims = _sizes((dims,) if isinstance(dims, int) else (tuple(dims),), "tile")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


# ---------------------------------------------------------------- padding


def _pad_constant(x, pads, value):
    """Pad with (lo, hi) per dim; negative amounts crop."""
    x = _slice(x, [max(0, -lo) for lo, _ in pads], [n - max(0, -hi) for n, (_, hi) in zip(x.shape, pads)],
               [1] * x.ndim)
    pads = tuple((max(0, lo), max(0, hi)) for lo, hi in pads)
    return x if not any(lo or hi for lo, hi in pads) else run_kernel(K.PAD, x, pads=pads, value=value)


def _reflect(i, n):
    period = 2 * n - 2
    j = i % period if period else 0
    return j if j < n else period - j


_PAD_INDEX = {
    "reflect": _reflect,
    "replicate": lambda i, n: min(max(i, 0), n - 1),
    "circular": lambda i, n: i % n,
}


def pad(input, pad, mode="constant", value=0.0) -> Tensor:
    """Pad ``input`` as ``torch.nn.functional.pad``: ``pad`` lists (before, after) amounts starting
    from the last dim; ``mode`` is 'constant' (with ``value``; negative amounts crop), 'reflect',
    'replicate' or 'circular'.

    >>> import webgrad as wg
    >>> wg.pad(wg.tensor([1, 2, 3]), (1, 2)).tolist()
    [0, 1, 2, 3, 0, 0]
    >>> wg.pad(wg.tensor([1, 2, 3]), (2, 1), mode="reflect").tolist()
    [3, 2, 1, 2, 3, 2]
    """
    check_tensor("pad", input)
    pad = tuple(pad)
    if len(pad) % 2 or len(pad) > 2 * input.ndim:
        raise ValueError(f"pad: padding length {len(pad)} must be even and at most twice the number of dims "
                         f"of the input of shape {tuple(input.shape)}")
    k = len(pad) // 2
    pads = [(0, 0)] * (input.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    if mode == "constant":
        return _fresh(_pad_constant(input, pads, value), input)
    fn = _PAD_INDEX.get(mode)
    if fn is None:
        raise ValueError(f"pad: unknown mode {mode!r}; expected 'constant', {', '.join(map(repr, _PAD_INDEX))}")
    y = input
    for d in range(input.ndim - k, input.ndim):
        lo, hi = pads[d]
        n = input.shape[d]
        limit = {"reflect": n - 1, "circular": n}.get(mode, float("inf") if n else 0)
        if lo < 0 or hi < 0 or (lo or hi) and max(lo, hi) > limit:
            raise ValueError(f"pad: {mode} padding ({lo}, {hi}) is invalid for dim {d} of size {n} in input of "
                             f"shape {tuple(input.shape)} (each amount must be in [0, {limit}])")
        if lo or hi:
            index = [fn(i, n) for i in range(-lo, n + hi)]
            y = indexing.index_select(y, d, tensor(index, dtype=int64, backend=input._backend))
    return _fresh(y, input)


# ---------------------------------------------------------------- triangles


def _triangle(x, diagonal, kernel, op):
    check_tensor(op, x)
    if x.ndim < 2:
        raise ShapeError(f"{op}: input tensor must have at least 2 dimensions, got shape {tuple(x.shape)}")
    n, m = x.shape[-2:]
    be = x._backend
    offset = run_kernel(K.SUB, arange(m, backend=be), run_kernel(K.RESHAPE, arange(n, backend=be), shape=(n, 1)))
    mask = run_kernel(kernel, offset, scalar_tensor(int(diagonal), int64, be))
    return run_kernel(K.WHERE, mask, x, scalar_tensor(0, x.dtype, be))


def tril(input, diagonal=0) -> Tensor:
    """The lower triangle of the last two dims (elements with ``col - row <= diagonal``); zeros elsewhere.

    >>> import webgrad as wg
    >>> wg.ones(2, 2).tril().tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return _triangle(input, diagonal, K.LESS_EQUAL, "tril")


def triu(input, diagonal=0) -> Tensor:
    """The upper triangle of the last two dims (elements with ``col - row >= diagonal``); zeros elsewhere.

    >>> import webgrad as wg
    >>> wg.ones(2, 2).triu(1).tolist()
    [[0.0, 1.0], [0.0, 0.0]]
    """
    return _triangle(input, diagonal, K.GREATER_EQUAL, "triu")


concat = cat
swapdims = transpose


def swapaxes(input, axis0, axis1) -> Tensor:
    """``transpose(input, axis0, axis1)`` (numpy's name).

    >>> import webgrad as wg
    >>> wg.zeros(2, 3).swapaxes(0, 1).shape
    webgrad.Size([3, 2])
    """
    return transpose(input, axis0, axis1)


METHODS = {
    "reshape": reshape, "view": view, "flatten": flatten, "unflatten": unflatten, "squeeze": squeeze,
    "unsqueeze": unsqueeze, "permute": permute, "transpose": transpose, "swapaxes": swapaxes,
    "swapdims": swapdims, "movedim": movedim, "T": property(_T), "mT": property(_mT), "expand": expand,
    "expand_as": expand_as, "broadcast_to": broadcast_to, "contiguous": contiguous, "clone": clone,
    "narrow": narrow, "split": _split_method, "chunk": chunk, "flip": flip, "roll": roll, "repeat": repeat,
    "tile": tile, "tril": tril, "triu": triu, "select": select, "unbind": unbind, "diagonal": diagonal, "t": t,
    "view_as": view_as, "reshape_as": reshape_as,
}

__all__ = ["reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "swapaxes",
           "swapdims", "movedim", "expand", "expand_as", "broadcast_to", "contiguous", "clone", "narrow", "split",
           "chunk", "flip", "roll", "cat", "concat", "stack", "repeat", "tile", "pad", "tril", "triu", "select",
           "unbind", "diagonal", "t"]
