"""Fuzz: broadcasting binary ops, comparisons, logical/bitwise ops, ``where`` and Python-scalar operands,
over every dtype pair a backend holds (PyTorch's promotion), with NaN/inf/-0.0 among the values:
against PyTorch (values, dtypes, gradients, error types) and numpy; gradients by finite differences."""
import operator

import numpy as np
from hypothesis import strategies as st

from fuzz_check import assert_values, check_against_torch, run_fuzz
from fuzz_strategies import FLOATS, NUMPY_DTYPE, Input, broadcast_pair, dtypes, inputs
from opinfo import gradcheck


def expected_dtype(name):
    return np.float64 if name in FLOATS else NUMPY_DTYPE[name]


def int_power(a, b):
    """numpy's power, but an integer to a negative power is PyTorch's: 0, or +-1 for a base of +-1."""
    if a.dtype.kind not in "iub" or b.dtype.kind not in "iub":
        return np.power(a, b)
    a, b = a.astype(np.int64), b.astype(np.int64)
    negative = np.where(a == 1, 1, np.where(a == -1, 1 - 2 * (np.abs(b) % 2), 0))
    return np.where(b < 0, negative, np.power(a, np.abs(b)))


def left_shift(a, b):
    """PyTorch's ``a << b`` on int64 values: 0 for a shift outside [0, 64) (numpy's is undefined there)."""
    inside = (b >= 0) & (b < 64)
    return np.where(inside, np.left_shift(a, np.where(inside, b, 0)), 0)


def right_shift(a, b):
    """PyTorch's arithmetic ``a >> b`` on int64 values: the sign alone for a shift outside [0, 64)."""
    return np.right_shift(a, np.where((b < 0) | (b >= 64), 63, b))


def method(name):
    return lambda lib, a, b: getattr(lib, name)(a, b)


def infix(fn):
    return lambda lib, a, b: fn(a, b)


# name -> (program, numpy reference on float64/int64/bool values)
BINARY = {
    "add": (method("add"), np.add), "sub": (method("sub"), np.subtract), "mul": (method("mul"), np.multiply),
    "div": (method("div"), np.true_divide), "pow": (method("pow"), int_power),
    "floor_divide": (method("floor_divide"), np.floor_divide), "remainder": (method("remainder"), np.remainder),
    "maximum": (method("maximum"), np.maximum), "minimum": (method("minimum"), np.minimum),
    "atan2": (method("atan2"), np.arctan2),
    "eq": (method("eq"), np.equal), "ne": (method("ne"), np.not_equal), "lt": (method("lt"), np.less),
    "le": (method("le"), np.less_equal), "gt": (method("gt"), np.greater), "ge": (method("ge"), np.greater_equal),
    "logical_and": (method("logical_and"), np.logical_and), "logical_or": (method("logical_or"), np.logical_or),
    "logical_xor": (method("logical_xor"), np.logical_xor),
    "a + b": (infix(operator.add), np.add), "a - b": (infix(operator.sub), np.subtract),
    "a * b": (infix(operator.mul), np.multiply), "a / b": (infix(operator.truediv), np.true_divide),
    "a // b": (infix(operator.floordiv), np.floor_divide), "a % b": (infix(operator.mod), np.remainder),
    "a ** b": (infix(operator.pow), int_power), "a == b": (infix(operator.eq), np.equal),
    "a < b": (infix(operator.lt), np.less), "a >= b": (infix(operator.ge), np.greater_equal),
    "a & b": (infix(operator.and_), np.bitwise_and), "a | b": (infix(operator.or_), np.bitwise_or),
    "a ^ b": (infix(operator.xor), np.bitwise_xor), "a << b": (infix(operator.lshift), left_shift),
    "a >> b": (infix(operator.rshift), right_shift),
    "bitwise_and": (method("bitwise_and"), np.bitwise_and), "bitwise_or": (method("bitwise_or"), np.bitwise_or),
    "bitwise_xor": (method("bitwise_xor"), np.bitwise_xor),
    "bitwise_left_shift": (method("bitwise_left_shift"), left_shift),
    "bitwise_right_shift": (method("bitwise_right_shift"), right_shift),
}
# numpy's float64 answer to these may differ from a float32 one by a whole unit near integer quotients:
# for floats PyTorch alone judges them
ROUNDING = {"floor_divide", "remainder", "a // b", "a % b"}
# PyTorch's gradients of these across dtypes use each operand in its own dtype, before the cast to the common
# one (MIXED_ROUNDING_GRAD, see test_fuzz_known.py): there they are checked for values only
MIXED_ROUNDING_GRAD = ROUNDING | {"atan2"}
SCALAR_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
              "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "<": operator.lt, "==": operator.eq,
              "&": operator.and_, "|": operator.or_, "^": operator.xor}


@st.composite
def binary_cases(draw, backend):
    name = draw(st.sampled_from(sorted(BINARY)))
    shape_a, shape_b = draw(broadcast_pair())
    dtype_a = draw(dtypes(backend))
    dtype_b = draw(st.one_of(st.just(dtype_a), dtypes(backend)))
    special = draw(st.integers(0, 3)) == 0
    a, b = draw(inputs(dtype_a, shape_a, special, backend=backend)), draw(inputs(dtype_b, shape_b, special,
                                                                                  backend=backend))
    return name, a, b


def _scalar_by_half(a, b) -> bool:
    """A 0-d operand of another dtype beside a float16/bfloat16 one: PyTorch rounds it to the half dtype for
    some ops and not for others (its opmath scalars, see ops.binary._opmath_scalar); numpy, computing in
    float64, would round it for none, so there PyTorch alone judges."""
    halves = {"float16", "bfloat16"}
    return a.dtype != b.dtype and any(x.dtype in halves and not y.values.ndim for x, y in ((a, b), (b, a)))


def check_binary(backend, case):
    name, a, b = case
    program, ref = BINARY[name]
    grad = not (name in MIXED_ROUNDING_GRAD and a.dtype != b.dtype)
    got, want = check_against_torch(program, [a, b], backend, name, numpy_ref=ref, grad=grad)
    if want.error is None and not (name in ROUNDING and got.dtypes[0] in FLOATS) and not _scalar_by_half(a, b):
        values = [v.astype(np.float64) if got.dtypes[0] in FLOATS else v for v in (a.values, b.values)]
        with np.errstate(all="ignore"):   # rounded to the result's dtype, as the op's own result is
            expected = ref(*values).astype(NUMPY_DTYPE[got.dtypes[0]]).astype(expected_dtype(got.dtypes[0]))
        assert_values(got.outputs[0], expected, got.dtypes[0], backend, f"{name} against numpy",
                      scale=1 + np.abs(expected[np.isfinite(expected)]).max(initial=0))


def test_binary_broadcasting_matches_torch(backend):
    run_fuzz(backend, binary_cases(backend), lambda case: check_binary(backend, case), cpu=1200, gpu=300)


@st.composite
def scalar_cases(draw, backend):
    op = draw(st.sampled_from(sorted(SCALAR_OPS)))
    scalar = draw(st.one_of(st.booleans(), st.integers(-4, 4), st.floats(-4, 4, width=16)))
    x = draw(inputs(dtypes(backend), st.sampled_from([(), (3,), (2, 3)]), backend=backend))
    reflected = draw(st.booleans())
    if op == "**" and type(scalar) is bool and not reflected:   # PyTorch's d(x ** False)/dx is NaN at x = 0
        scalar = int(scalar)                                    # (0 * 0 ** -1); webgrad's is 0, deliberately
    return op, scalar, reflected, x


def check_scalar(backend, case):
    op, scalar, reflected, x = case
    fn = SCALAR_OPS[op]
    program = (lambda lib, t: fn(scalar, t)) if reflected else (lambda lib, t: fn(t, scalar))
    ref = (lambda v: fn(scalar, v)) if reflected else (lambda v: fn(v, scalar))
    check_against_torch(program, [x], backend, f"{scalar!r} {op} x" if reflected else f"x {op} {scalar!r}",
                        numpy_ref=ref)


def test_python_scalar_operands_match_torch(backend):
    """A Python scalar raises the category, never the width (int32 tensor + 2.5 is float32)."""
    run_fuzz(backend, scalar_cases(backend), lambda case: check_scalar(backend, case), cpu=600, gpu=150)


@st.composite
def where_cases(draw, backend):
    shapes = draw(st.sampled_from([((3,), (3,), (3,)), ((2, 1), (3,), ()), ((), (2, 3), (2, 1)),
                                   ((2, 3), (2, 3), (1,)), ((0, 3), (3,), (1, 1)), ((2,), (3,), (2,))]))
    cond = draw(inputs("bool", shapes[0]))
    dtype = draw(dtypes(backend))
    other = draw(st.one_of(st.just(dtype), dtypes(backend)))
    return cond, draw(inputs(dtype, shapes[1], backend=backend)), draw(inputs(other, shapes[2], backend=backend))


def test_where_matches_torch(backend):
    run_fuzz(backend, where_cases(backend),
             lambda case: check_against_torch(lambda lib, c, a, b: lib.where(c, a, b), list(case), backend, "where"),
             cpu=300, gpu=90)


# ---------------------------------------------------------------- finite differences (float64, cpu)

SMOOTH = {  # name -> (program, the domain of b as (low, high))
    "add": (lambda a, b: a + b, (-4, 4)), "sub": (lambda a, b: a - b, (-4, 4)), "mul": (lambda a, b: a * b, (-4, 4)),
    "div": (lambda a, b: a / b, (0.5, 4)), "atan2": (lambda a, b: a.atan2(b), (0.5, 4)),
    "pow": (lambda a, b: a.abs().add(0.5) ** b, (-2, 2)), "maximum": (lambda a, b: a.maximum(b), (-4, 4)),
    "minimum": (lambda a, b: a.minimum(b), (-4, 4)),
}


@st.composite
def smooth_cases(draw):
    name = draw(st.sampled_from(sorted(SMOOTH)))
    shape_a, shape_b = draw(broadcast_pair(max_dims=2, min_side=1).filter(lambda s: _broadcasts(*s)))
    low, high = SMOOTH[name][1]
    a = draw(inputs("float64", shape_a, unique=True, low=-4, high=4))
    b = draw(inputs("float64", shape_b, unique=True, low=low, high=high))
    b = Input(b.values + 0.125, "float64")     # off a's grid k / 4: no ties for maximum/minimum
    return name, a, b


def _broadcasts(*shapes):
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


def test_binary_gradients_match_finite_differences():
    run_fuzz("cpu", smooth_cases(), lambda case: gradcheck(SMOOTH[case[0]][0], case[1].values, case[2].values,
                                                           what=case[0]), cpu=300, gpu=0)
