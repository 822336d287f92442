"""Fuzz: ``t[...]`` and ``t[...] = v`` with ints, slices (steps of any sign, bounds past the ends), None,
Ellipsis, integer lists and tensors (negative, repeated, empty, out of range) and boolean masks, on
tensors of every dtype including empty and 0-d ones: against PyTorch (values, dtypes, gradients, error
types; a negative step, which PyTorch refuses, against its flip and a positive step) and numpy."""
import numpy as np
import torch
from hypothesis import strategies as st

from fuzz_check import assert_numpy, check_against_torch, make_tensor, run_fuzz
from fuzz_strategies import Input, dtypes, index_items, inputs, shapes


def build_index(items, tensors):
    """The index tuple with each ``Input`` among ``items`` replaced by the next of ``tensors``."""
    tensors = iter(tensors)
    return tuple(next(tensors) if isinstance(i, Input) else i for i in items)


def tensor_inputs(items):
    return [i for i in items if isinstance(i, Input)]


def show(items) -> str:
    return "[" + ", ".join(f"<{i.dtype} {list(i.shape)}>" if isinstance(i, Input) else repr(i) for i in items) + "]"


@st.composite
def getitem_cases(draw, backend):
    x = draw(inputs(dtypes(backend), shapes(0, 4), backend=backend))
    return x, draw(index_items(x.shape))


def numpy_index(items):
    return build_index(items, [i.values for i in tensor_inputs(items)])


def out_of_range_but_empty(x, items):
    """An excuse (see fuzz_check): webgrad checks every index; PyTorch checks only those it reads, none
    when the indexed region is empty (unless the indexed dim itself is empty), so ``zeros(0, 2)[[0], []]``
    is PyTorch's empty result and webgrad's IndexError."""
    flips, forward = positive_steps(items, x.shape)

    def region_is_empty():
        t = make_tensor(torch, x, "cpu").flip(flips)
        try:
            return t[build_index(forward, [make_tensor(torch, i, "cpu") for i in tensor_inputs(items)])].numel() == 0
        except (IndexError, RuntimeError, ValueError):
            return False

    def excuse(got, want):
        return (want.error is None and isinstance(got.error, IndexError) and "out of" in str(got.error)
                and region_is_empty())
    return excuse


def numpy_agrees(items) -> bool:
    """numpy takes ints (and 0-d integer arrays) beside integer arrays as arrays too (the result's dims
    move); PyTorch takes them as ints."""
    ints = any(type(i) is int or (isinstance(i, Input) and i.dtype != "bool" and not i.values.ndim) for i in items)
    arrays = any(type(i) is list or (isinstance(i, Input) and i.values.ndim) for i in items)
    return not (ints and arrays)


def positive_steps(items, shape):
    """PyTorch's equivalent of an index with negative slice steps (which it refuses): the dims to flip
    first, and the index into the flipped tensor, every step positive."""
    consumed = sum(it.values.ndim if isinstance(it, Input) and it.dtype == "bool" else 1
                   for it in items if it is not None and it is not Ellipsis)
    flips, out, d = [], [], 0
    for it in items:
        if it is None or it is Ellipsis:
            d += len(shape) - consumed if it is Ellipsis else 0
        elif isinstance(it, slice) and (it.step or 1) < 0:
            if d < len(shape):
                r = range(*it.indices(shape[d]))
                flips.append(d)
                it = slice(shape[d] - 1 - r[0], shape[d] - r[-1], -it.step) if len(r) else slice(0, 0)
            else:   # one index too many: an IndexError either way
                it = slice(None)
        d += it.values.ndim if isinstance(it, Input) and it.dtype == "bool" else it is not None and it is not Ellipsis
        out.append(it)
    return flips, tuple(out)


def getitem_program(items, shape):
    flips, forward = positive_steps(items, shape)

    def program(lib, t, *ix):
        if lib is torch and flips:
            return t.flip(flips)[build_index(forward, ix)]
        return t[build_index(items, ix)]
    return program


def check_getitem(backend, case):
    x, items = case
    got, want = check_against_torch(getitem_program(items, x.shape), [x] + tensor_inputs(items), backend,
                                    f"x{show(items)}", excuse=out_of_range_but_empty(x, items))
    if want.error is None and got.error is None and numpy_agrees(items):
        try:
            expected = x.values[numpy_index(items)]
        except IndexError:   # numpy checks the indices of an empty result too; PyTorch (and so webgrad) not
            assert not any(o.size for o in got.outputs)
            return
        assert_numpy(got, expected, f"x{show(items)}", backend)


def test_getitem_matches_torch_and_numpy(backend):
    run_fuzz(backend, getitem_cases(backend), lambda case: check_getitem(backend, case), cpu=1600, gpu=360)


@st.composite
def setitem_cases(draw, backend):
    x, items = draw(getitem_cases(backend))
    try:
        target = x.values[numpy_index(items)].shape
    except IndexError:
        target = ()
    if draw(st.booleans()):
        return x, items, draw(st.integers(-3, 3)) if x.dtype != "bool" else draw(st.booleans())
    shape = target[draw(st.integers(0, len(target))):]                  # a trailing part: it broadcasts
    shape = tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in shape)
    return x, items, draw(inputs(x.dtype, shape, backend=backend))


def _set(t, index, value):
    t = t.clone() if hasattr(t, "clone") else t.copy()
    t[index] = value
    return t


def check_setitem(backend, case):
    x, items, value = case
    tensors = tensor_inputs(items) + ([value] if isinstance(value, Input) else [])
    flips, forward = positive_steps(items, x.shape)

    def program(lib, t, *ix):
        v = ix[-1] if isinstance(value, Input) else value
        if lib is torch and flips:
            return _set(t.flip(flips), build_index(forward, ix), v).flip(flips)
        return _set(t, build_index(items, ix), v)
    check_against_torch(program, [x] + tensors, backend, f"x{show(items)} = {value!r}",
                        excuse=out_of_range_but_empty(x, items))


def test_setitem_matches_torch(backend):
    run_fuzz(backend, setitem_cases(backend), lambda case: check_setitem(backend, case), cpu=1000, gpu=240)
