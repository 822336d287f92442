"""Bitwise ops (``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``, ``bitwise_*``) against PyTorch on every backend:
values, dtypes (promotion with tensors and Python ints), PyTorch's shift rules at and beyond the bit
width, in-place and reflected forms, and PyTorch's errors."""
import operator
from contextlib import nullcontext

import numpy as np
import pytest
import torch

import webgrad as wg

VALUES = [6, -3, 0, -8, 2147483647, -2147483648, 1, 255]
SHIFTS = [-1, 0, 1, 7, 31, 32, 63, 64, 65, 3]
DTYPES = {"int32": (wg.int32, torch.int32), "int64": (wg.int64, torch.int64), "bool": (wg.bool, torch.bool)}
OPERATORS = {"&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift}
FUNCTIONS = {"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor", "<<": "bitwise_left_shift",
             ">>": "bitwise_right_shift"}


def pair(values, dtype, backend):
    w, t = DTYPES[dtype]
    return wg.tensor(values, backend=backend).to(w), torch.tensor(values).to(t)


def same(got, want):
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (got.dtype, want.dtype)
    assert got.tolist() == want.tolist()


def fits_32_bits(t):
    """Whether every value of ``t`` fits in 32 bits (int64 is held in 32 bits on the GPU backends)."""
    return bool(((t >= -2 ** 31) & (t < 2 ** 31)).all())


@pytest.mark.parametrize("op", sorted(OPERATORS))
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_operators_match_torch(backend, op, dtype):
    a, ta = pair(VALUES, dtype, backend)
    b, tb = pair(SHIFTS[:len(VALUES)] if op in "<<>>" else VALUES[::-1], dtype, backend)
    want = OPERATORS[op](ta, tb)
    assert getattr(torch, FUNCTIONS[op])(ta, tb).tolist() == want.tolist()
    if backend != "cpu" and not fits_32_bits(want):   # int64 in 32 bits: the GPU holds the low word
        want = want.to(torch.int32).to(want.dtype)
    same(OPERATORS[op](a, b), want)
    same(getattr(wg, FUNCTIONS[op])(a, b), want)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_shifts_at_and_beyond_the_bit_width(backend, dtype):
    """PyTorch's: << gives 0 for a negative shift or one not below the width, >> fills with the sign there."""
    for s in SHIFTS:
        a, ta = pair([6, -3, 0, -8, 1], dtype, backend)
        same(a >> s, ta >> s)
        want = ta << s
        if fits_32_bits(want) or backend == "cpu":
            same(a << s, want)
        else:   # the GPU holds int64 in 32 bits: the low word of PyTorch's result
            same(a << s, want.to(torch.int32).to(ta.dtype))


@pytest.mark.parametrize("op", ["&", "|", "^"])
def test_bool_tensors_stay_bool(backend, op):
    a, ta = pair([True, True, False, False], "bool", backend)
    b, tb = pair([True, False, True, False], "bool", backend)
    same(OPERATORS[op](a, b), OPERATORS[op](ta, tb))
    same(OPERATORS[op](a, True), OPERATORS[op](ta, True))
    same(OPERATORS[op](a, 3), OPERATORS[op](ta, 3))               # a Python int lifts bool to int64


@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_promotion_and_broadcasting(backend, op):
    a, ta = pair([[1], [6], [-5]], "int32", backend)
    b, tb = pair([1, 2, 3, 0], "int64", backend)
    same(OPERATORS[op](a, b), OPERATORS[op](ta, tb))
    same(OPERATORS[op](a, 2), OPERATORS[op](ta, 2))               # the tensor's width stays
    same(OPERATORS[op](3, b), OPERATORS[op](3, tb))               # the reflected form
    c, tc = pair([True, False, True, True], "bool", backend)
    same(OPERATORS[op](a, c), OPERATORS[op](ta, tc))              # bool with an integer: the integer's dtype


def test_not(backend):
    for dtype in ("int32", "int64", "bool"):
        a, ta = pair([0, 1, -1, 7] if dtype != "bool" else [True, False], dtype, backend)
        same(~a, ~ta)
        same(wg.bitwise_not(a), torch.bitwise_not(ta))
        same(a.bitwise_not(), ta.bitwise_not())
        a.bitwise_not_()
        same(a, ta.bitwise_not_())


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                                  "bitwise_right_shift"])
def test_methods_and_in_place_forms(backend, name):
    a, ta = pair([5, -6, 12], "int32", backend)
    b, tb = pair([1, 2, 3], "int64", backend)
    same(getattr(a, name)(b), getattr(ta, name)(tb))
    same(getattr(wg, name)(a, other=b), getattr(torch, name)(ta, other=tb))
    same(getattr(wg, name)(7, b), getattr(torch, name)(7, tb))
    kept = a
    assert getattr(a, name + "_")(b) is kept
    same(a, getattr(ta, name + "_")(tb))                           # int32 keeps its dtype


@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_in_place_operators(backend, op):
    a, ta = pair([5, -6, 12], "int64", backend)
    view = a[1:]
    a_op = {"&": "__iand__", "|": "__ior__", "^": "__ixor__", "<<": "__ilshift__", ">>": "__irshift__"}[op]
    assert getattr(a, a_op)(2) is a
    same(a, getattr(ta, a_op)(2))
    assert view.tolist() == a.tolist()[1:]                         # written through to the view


def test_in_place_refuses_a_wider_category(backend):
    mask = wg.tensor([True, False], backend=backend)
    with pytest.raises(RuntimeError, match="int64 can't be cast to the desired output type bool"):
        mask &= wg.tensor([1, 2], backend=backend)
    assert mask.tolist() == [True, False]


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                                  "bitwise_right_shift"])
def test_errors_match_torch(backend, name):
    """Floats: PyTorch's NotImplementedError (a RuntimeError) naming the op; shifts refuse two bools too."""
    cases = [(wg.tensor([1.0]), torch.tensor([1.0]), 1), (wg.tensor([1]), torch.tensor([1]), 1.5),
             (wg.tensor([True]), torch.tensor([True]), wg.tensor([1.0]))]
    for a, ta, b in cases:
        tb = torch.tensor(b.tolist()) if isinstance(b, wg.Tensor) else b
        with pytest.raises(NotImplementedError):
            getattr(torch, name)(ta, tb)
        with pytest.raises(NotImplementedError, match=f"^{name}: not implemented for float32"):
            getattr(wg, name)(a, b)
    shift = "shift" in name
    t_bool = torch.tensor([True])
    with (pytest.raises(NotImplementedError) if shift else nullcontext()):
        getattr(torch, name)(t_bool, t_bool)
    with (pytest.raises(NotImplementedError, match=f"^{name}: not implemented for bool") if shift else nullcontext()):
        getattr(wg, name)(wg.tensor([True]), wg.tensor([True]))
    with pytest.raises(TypeError):
        getattr(wg, name)(3, 4)
    with pytest.raises(ValueError, match=f"^{name}: shapes"):
        getattr(wg, name)(wg.tensor([1, 2]), wg.tensor([1, 2, 3]))


def test_not_errors_match_torch(backend):
    with pytest.raises(TypeError):
        ~torch.tensor([1.0])
    with pytest.raises(TypeError, match="invert"):
        ~wg.tensor([1.0])
    with pytest.raises(NotImplementedError, match="^bitwise_not: not implemented for float32"):
        wg.bitwise_not(wg.tensor([1.0]))
    with pytest.raises(NotImplementedError):
        wg.tensor([1.0]).bitwise_not_()


def test_kernels_match_numpy_at_every_size(backend):
    """Long, odd and broadcast shapes (the GPU's vec4 and strided paths)."""
    rng = np.random.default_rng(0)
    for shape_a, shape_b in [((1001,), (1001,)), ((4, 8), (8,)), ((3, 1), (1, 5)), ((0, 3), (3,)), ((), (6,))]:
        x = rng.integers(-2 ** 31, 2 ** 31, shape_a)
        y = rng.integers(-40, 40, shape_b)
        a, b = wg.tensor(x, dtype=wg.int32, backend=backend), wg.tensor(y, dtype=wg.int32, backend=backend)
        ta, tb = torch.tensor(x, dtype=torch.int32), torch.tensor(y, dtype=torch.int32)
        for op in OPERATORS.values():
            same(op(a, b), op(ta, tb))
        same(~a, ~ta)
