"""Hypothesis strategies shared by the fuzz suite: dtypes, shapes, values, dims and indices.

Values are drawn as float64/int64/bool numpy arrays that the target dtype holds exactly (a float16
input is a float64 array of float16 values), so webgrad, PyTorch and numpy all start from the same
numbers. An input is an ``Input(values, dtype)``; ``fuzz_check`` turns it into a tensor of either library.
"""
from __future__ import annotations

from typing import NamedTuple

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import webgrad as wg

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int32", "int64")
ALL_DTYPES = ("bool",) + INTS + FLOATS
GRAD_DTYPES = ("float32", "float64")     # half-precision gradients are checked through float32 ops elsewhere
NUMPY_DTYPE = {"bool": np.bool_, "int32": np.int32, "int64": np.int64, "float16": np.float16,
               "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64}
SPECIALS = (np.nan, np.inf, -np.inf, -0.0)
MAX_SIDE = 4


class Input(NamedTuple):
    """One tensor input: its values (float64, int64 or bool numpy) and the dtype name it is made with."""
    values: np.ndarray
    dtype: str

    @property
    def shape(self):
        return self.values.shape


def held_dtypes(backend: str, among=ALL_DTYPES) -> tuple:
    """The dtype names of ``among`` that ``backend`` holds (the GPU backends have no float64 or half types)."""
    held = {d.name for d in wg.registry.backend(backend).dtypes}
    return tuple(d for d in among if d in held)


def dtypes(backend: str, among=ALL_DTYPES):
    return st.sampled_from(held_dtypes(backend, among))


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=MAX_SIDE):
    """Shapes with 0 to 4 dims of 0 to 4 elements (empty and 0-d tensors included)."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcast_pair(max_dims=4, min_side=0):
    """Two shapes that usually broadcast together, and sometimes (1 in 8) two shapes drawn apart, which
    may not: the error path is fuzzed too."""
    together = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=max_dims, min_side=min_side,
                                                 max_side=MAX_SIDE).map(lambda b: b.input_shapes)
    apart = st.tuples(shapes(0, max_dims, max(min_side, 1)), shapes(0, max_dims, max(min_side, 1)))
    return st.one_of(*[together] * 7, apart)


def _elements(dtype: str, special: bool, low=-8.0, high=8.0, subnormal=True):
    if dtype == "bool":
        return st.booleans()
    if dtype in INTS:
        return st.integers(int(low), int(high))
    width = 16 if dtype in ("float16", "bfloat16") else 32
    finite = st.floats(low, high, width=width, allow_subnormal=subnormal)
    return st.one_of(finite, finite, finite, st.sampled_from(SPECIALS)) if special else finite


def exact(values: np.ndarray, dtype: str) -> np.ndarray:
    """``values`` rounded to what ``dtype`` holds, as float64/int64/bool numpy."""
    held = np.asarray(values).astype(NUMPY_DTYPE[dtype])
    return held.astype(np.bool_ if dtype == "bool" else np.int64 if dtype in INTS else np.float64)


@st.composite
def inputs(draw, dtype, shape, special=False, low=-8.0, high=8.0, unique=False, backend="cpu"):
    """An ``Input`` of ``dtype`` and ``shape``: small values, with NaN/inf/-0.0 among them when ``special``;
    ``unique`` gives distinct values (no ties, for ops whose gradient picks one element). Subnormal
    floats only for ``cpu``: WGSL lets a GPU flush them to zero, and lavapipe does."""
    if isinstance(dtype, st.SearchStrategy):
        dtype = draw(dtype)
    if isinstance(shape, st.SearchStrategy):
        shape = draw(shape)
    elements = _elements(dtype, special, low, high, subnormal=backend == "cpu")
    if unique and dtype in FLOATS:   # values k / 4: distinct after rounding to any float type
        elements = st.integers(int(low * 4), int(high * 4)).map(lambda k: k / 4)
    values = draw(hnp.arrays(np.float64 if dtype in FLOATS else NUMPY_DTYPE[dtype], shape, elements=elements,
                             unique=unique and dtype != "bool"))
    return Input(exact(values, dtype), dtype)


def dim_for(ndim: int, out_of_range=True):
    """A dim for a tensor of ``ndim`` dims, negative ones included and now and then one out of range."""
    n = max(ndim, 1)
    ok = st.integers(-n, n - 1)
    return st.one_of(ok, ok, ok, ok, ok, st.sampled_from([n, -n - 1])) if out_of_range else ok


@st.composite
def dims_for(draw, ndim: int, allow_none=True):
    """``None``, one dim, or a tuple of dims (empty, or with a repeat now and then)."""
    kind = draw(st.sampled_from(["none", "int", "tuple", "tuple"] if allow_none else ["int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(dim_for(ndim))
    picked = draw(st.lists(st.integers(0, max(ndim, 1) - 1), max_size=ndim, unique=True))
    dims = [d - ndim if draw(st.booleans()) and ndim else d for d in picked]
    if dims and draw(st.integers(0, 9)) == 0:
        dims.append(dims[0])
    return tuple(dims)


# ---------------------------------------------------------------- indices


@st.composite
def slices(draw, size: int, negative_steps=True):
    """A slice into a dim of ``size``: any of start/stop/step may be None; bounds may pass the ends."""
    bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
    steps = st.integers(-3, 3).filter(bool) if negative_steps else st.integers(1, 3)
    return slice(draw(bound), draw(bound), draw(st.one_of(st.none(), steps)))


@st.composite
def int_array_index(draw, size: int, as_list: bool):
    """Integer positions along a dim of ``size`` (negatives, repeats, empty, now and then one out of range),
    as a list or an int64 Input (0-d to 2-d)."""
    lo, hi = -size, size - 1
    if size == 0 or draw(st.integers(0, 14)) == 0:
        lo, hi = -size - 1, size        # may be out of range
    shape = (draw(st.integers(0, 3)),) if as_list else draw(shapes(0, 2, 0, 3))
    values = draw(hnp.arrays(np.int64, shape, elements=st.integers(lo, hi)))
    return values.tolist() if as_list else Input(values, "int64")


@st.composite
def index_items(draw, shape: tuple, advanced=True, negative_steps=True):
    """A tuple that indexes a tensor of ``shape`` as ``t[...]`` does: ints, slices, None, one Ellipsis,
    integer lists or tensors, and boolean masks over one or more dims; now and then one too many."""
    items, dim, ellipsis = [], 0, False
    while dim < len(shape) and draw(st.integers(0, 3)):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]
                                    + (["list", "array", "mask"] if advanced else [])))
        size = shape[dim]
        if kind == "int":
            items.append(draw(st.integers(-size - 1, size) if draw(st.integers(0, 9)) == 0 else
                              st.integers(-size, size - 1)) if size else draw(st.integers(-1, 0)))
        elif kind == "slice":
            items.append(draw(slices(size, negative_steps)))
        elif kind == "none":
            items.append(None)
            continue
        elif kind == "ellipsis" and not ellipsis:
            ellipsis = True
            items.append(Ellipsis)
            skipped = draw(st.integers(0, len(shape) - dim))
            dim += skipped
            continue
        elif kind in ("list", "array"):
            items.append(draw(int_array_index(size, kind == "list")))
        elif kind == "mask":
            span = draw(st.integers(1, min(2, len(shape) - dim)))
            mask_shape = tuple(shape[dim:dim + span])
            if draw(st.integers(0, 14)) == 0:
                mask_shape = mask_shape[:-1] + (mask_shape[-1] + 1,)        # a mask that does not fit
            items.append(Input(draw(hnp.arrays(np.bool_, mask_shape)), "bool"))
            dim += span
            continue
        else:
            continue
        dim += 1
    if draw(st.integers(0, 19)) == 0:
        items.append(0)                                                       # one index too many
    return tuple(items)
