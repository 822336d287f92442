"""Binary elementwise ops: forward vs numpy, finite-difference gradients, broadcasting, promotion, bad input."""
import re

import numpy as np
import pytest

import webgrad as wg
from backends_under_test import BACKENDS
from opinfo import OpCase, assert_close, gradcheck, gradgradcheck, op_tests

rng = np.random.default_rng(1)


def uniform(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def positive(*shape):
    return uniform(*shape, lo=0.5, hi=2.0)


def nonzero(*shape):
    x = uniform(*shape)
    return np.where(x < 0, x - 0.3, x + 0.3)


def apart(*shapes):
    """Two arrays whose broadcast elements differ by at least 0.1 (no ties for maximum/minimum)."""
    a = uniform(*shapes[0])
    b = uniform(*shapes[1])
    gap = b - a
    return a, np.where(np.abs(gap) < 0.1, b + 0.2, b)


# name: (webgrad fn, numpy reference, input maker (called with a shape), second order?)
ARITH = {
    "add": (wg.add, np.add, uniform, False),
    "add_alpha": (lambda a, b: wg.add(a, b, alpha=2.5), lambda a, b: a + 2.5 * b, uniform, False),
    "sub": (lambda a, b: a - b, np.subtract, uniform, False),
    "sub_alpha": (lambda a, b: a.sub(b, alpha=-3), lambda a, b: a + 3 * b, uniform, False),
    "mul": (lambda a, b: a * b, np.multiply, uniform, True),
    "div": (lambda a, b: a / b, np.divide, nonzero, True),
    "pow": (lambda a, b: a ** b, np.power, positive, True),
    "atan2": (wg.atan2, np.arctan2, nonzero, False),
    "floor_divide": (lambda a, b: a // b, np.floor_divide, nonzero, False),   # numpy's is Python's, as torch's
    "remainder": (lambda a, b: a % b, np.remainder, nonzero, False),
}

SHAPES = [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (3,)), ((2, 1, 3), (4, 1)), ((), ())]


def _cases():
    cases = []
    for name, (fn, ref, make, second) in ARITH.items():
        for sa, sb in SHAPES:
            cases.append(OpCase(name, fn, ref, [make(*sa), make(*sb)]))
        cases.append(OpCase(name, fn, ref, [make(0, 3), make(3)], grad=False))
        cases.append(OpCase(name, fn, ref, [make(40, 30), make(30)], grad=False, id=f"{name}-large"))
    for name, fn, ref in [("maximum", wg.maximum, np.maximum), ("minimum", wg.minimum, np.minimum)]:
        for sa, sb in SHAPES[:4]:
            cases.append(OpCase(name, fn, ref, list(apart(sa, sb))))
        cases.append(OpCase(name, fn, ref, list(apart((40, 30), (30,))), grad=False, id=f"{name}-large"))
    # Python scalars on either side
    x = nonzero(3, 4)
    for name, fn, ref in [
        ("radd", lambda a: 2 + a, lambda a: 2 + a), ("rsub", lambda a: 2 - a, lambda a: 2 - a),
        ("rmul", lambda a: 2.5 * a, lambda a: 2.5 * a), ("rdiv", lambda a: 3 / a, lambda a: 3 / a),
        ("rpow", lambda a: 2 ** a, lambda a: 2.0 ** a), ("pow_scalar", lambda a: a ** 3, lambda a: a ** 3),
        ("pow_negative_scalar", lambda a: a ** -2, lambda a: a ** -2.0),
        ("div_scalar", lambda a: a / 4, lambda a: a / 4),
        ("max_scalar", lambda a: wg.maximum(a, 0.05), lambda a: np.maximum(a, 0.05)),
        ("expression", lambda a: (a * a + 2) / (1 + a ** 2) - a, lambda a: (a * a + 2) / (1 + a ** 2) - a),
    ]:
        cases.append(OpCase(name, fn, ref, [x]))
    # where
    cond = rng.random((3, 4)) > 0.5
    cases += [
        OpCase("where", wg.where, np.where, [cond, uniform(3, 4), uniform(3, 4)]),
        OpCase("where", wg.where, np.where, [cond[:, :1], uniform(4), uniform(3, 1)]),
        OpCase("where", lambda c, a: wg.where(c, a, 0.0), lambda c, a: np.where(c, a, 0.0), [cond, uniform(3, 4)],
               id="where-scalar-other"),
        OpCase("where", lambda c, b: wg.where(c, 1.5, b), lambda c, b: np.where(c, 1.5, b), [cond, uniform(4)],
               id="where-scalar-input"),
        OpCase("where", lambda a: a.where(a > 0, -a), lambda a: np.abs(a), [nonzero(5)], id="where-method"),
        OpCase("where", wg.where, np.where, [rng.random((40, 30)) > 0.5, uniform(40, 30), uniform(30)], grad=False,
               id="where-large"),
    ]
    # comparisons and logic (bool out, not differentiable)
    ints = rng.integers(-2, 3, (4, 5)).astype(np.int32)
    for name, op in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                     ("gt", np.greater), ("ge", np.greater_equal)]:
        fn = getattr(wg, name)
        cases += [
            OpCase(name, fn, op, [ints, rng.integers(-2, 3, (5,)).astype(np.int32)], grad=False),
            OpCase(name, fn, op, [uniform(3, 1).round(), uniform(4).round()], grad=False),
            OpCase(name, lambda a, f=fn: f(a, 0.5), lambda a, o=op: o(a, 0.5), [ints], grad=False,
                   id=f"{name}-int-vs-float-scalar"),
            OpCase(name, fn, op, [ints.reshape(-1)[:1].reshape(()), ints], grad=False),
            OpCase(name, fn, op, [uniform(40, 30).round(), uniform(30).round()], grad=False, id=f"{name}-large"),
        ]
    bools = rng.random((2, 5, 3)) > 0.5
    for name in ("logical_and", "logical_or", "logical_xor"):
        fn, op = getattr(wg, name), getattr(np, name)
        cases += [
            OpCase(name, fn, op, [bools, bools[0, :, :1]], grad=False),
            OpCase(name, fn, op, [ints, ints[:1]], grad=False),
            OpCase(name, fn, op, [rng.random((40, 30)) > 0.5, rng.random(30) > 0.5], grad=False, id=f"{name}-large"),
        ]
    return cases


CASES = _cases()
globals().update(op_tests(CASES))


@pytest.mark.parametrize("name", [n for n, row in ARITH.items() if row[3]])
def test_second_order(name):
    fn, _, make, _ = ARITH[name]
    gradgradcheck(fn, make(2, 3), make(3))


def test_second_order_with_scalars():
    gradgradcheck(lambda a: a ** 3 / (a + 3), uniform(4))


def test_every_kernel_has_cpu_impl_and_gradient():
    K = wg.kernel_names
    differentiable = {K.ADD, K.SUB, K.MUL, K.DIV, K.FLOOR_DIVIDE, K.REMAINDER, K.FMOD, K.POW, K.MAXIMUM, K.MINIMUM,
                      K.ATAN2, K.WHERE, K.ZETA}
    for name in K.BINARY + (K.WHERE,):
        assert name in wg.kernels_for_backend("cpu"), name
        assert (wg.get_gradient(name) is not None) == (name in differentiable), name


# ---------------------------------------------------------------- special gradients


def test_maximum_minimum_ties_split_half():
    a = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = wg.tensor([1.0, 0.0, 5.0], requires_grad=True)
    (wg.maximum(a, b) + wg.minimum(a, b) * 10).sum().backward()
    assert a.grad.tolist() == [5.5, 1.0, 10.0]
    assert b.grad.tolist() == [5.5, 10.0, 1.0]


def test_pow_exponent_gradient_as_torch_where_base_not_positive():
    """d(a ** b)/db = a ** b * log(a): NaN for a negative base, 0 at a zero base with b >= 0 (PyTorch's)."""
    a = wg.tensor([-2.0, 0.0, 2.0], requires_grad=True)
    b = wg.tensor([2.0, 2.0, 2.0], requires_grad=True)
    (a ** b).sum().backward()
    assert np.isnan(b.grad.tolist()[0]) and b.grad.tolist()[1] == 0.0
    assert abs(b.grad.tolist()[2] - 4 * np.log(2)) < 1e-5
    assert a.grad.tolist() == [-4.0, 0.0, 4.0]


def test_pow_zero_exponent_at_zero_base_has_zero_gradient():
    a = wg.tensor([0.0, 1.0], requires_grad=True)
    (a ** 0).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0]


def test_pow_negative_base_integer_exponent():
    gradcheck(lambda a: a ** 3, np.array([-1.5, -0.5, 2.0]), what="pow negative base")


@pytest.mark.parametrize("exponent, bitwise", [(2.0, True), (3.0, True), (-0.5, True), (-1.0, True), (-2.0, True),
                                               (0.5, False), (2.5, False)])
def test_pow_scalar_exponent_as_torch(backend, exponent, bitwise):
    """PyTorch's cpu pow takes 2, 3, -0.5, -1, -2 by arithmetic (x*x, x*x*x, 1/sqrt(x), ...): cpu gives its
    float32 numbers bit for bit there (numpy's power differs in the last bit on a third of them). Its 0.5 is
    MKL's sqrt and the rest its vectorised pow, each within an ulp of numpy's."""
    torch = pytest.importorskip("torch")
    x = rng.uniform(0.3, 3.0, 1000).astype(np.float32) * rng.choice([-1, 1], 1000).astype(np.float32)
    x = np.abs(x) if exponent % 1 else x
    want = torch.pow(torch.from_numpy(x), exponent).numpy()
    got = (wg.tensor(x) ** exponent).numpy()
    if backend == "cpu" and bitwise:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=3e-7 if backend == "cpu" else 2e-6)


def test_where_condition_gets_no_gradient():
    a = wg.tensor([1.0, 2.0], requires_grad=True)
    y = wg.where(wg.tensor([True, False]), a, a * 10)
    y.sum().backward()
    assert a.grad.tolist() == [1.0, 10.0]


def test_broadcast_gradient_shapes():
    a = wg.tensor(np.ones((3, 1)), requires_grad=True)
    b = wg.tensor(np.ones(4), requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.tolist() == [[4.0]] * 3
    assert b.grad.shape == (4,) and b.grad.tolist() == [3.0] * 4


def test_int_operand_gets_no_gradient():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x * wg.tensor([3, 4])
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


# ---------------------------------------------------------------- dtypes and promotion

PROMOTION = [
    # (a, b, op, expected dtype)
    ("int32", "float32", "add", "float32"),
    ("int32", "float64", "mul", "float64"),
    ("float32", "float64", "sub", "float64"),
    ("bool", "int32", "add", "int32"),
    ("bool", "float32", "mul", "float32"),
    ("int32", "int32", "add", "int32"),
    ("int32", "int32", "div", "float32"),
    ("bool", "bool", "div", "float32"),
    ("int32", "int32", "pow", "int32"),
    ("int32", "int32", "atan2", "float32"),
    ("int32", "float32", "maximum", "float32"),
    ("float32", "int32", "eq", "bool"),
    ("float64", "int32", "lt", "bool"),
    ("bool", "bool", "logical_and", "bool"),
    ("int32", "float32", "logical_xor", "bool"),
    ("int32", 2.5, "add", "float32"),
    ("int32", 2, "mul", "int32"),
    ("float64", 1, "add", "float64"),
    ("float64", 2.5, "mul", "float64"),
    ("float32", True, "add", "float32"),
    ("bool", True, "add", "bool"),
    ("bool", 2, "add", "int64"),
    ("int32", "int64", "add", "int64"),
    ("int64", "float32", "mul", "float32"),
    ("bool", 2.0, "mul", "float32"),
    (3, "int32", "sub", "int32"),
    (0.5, "int32", "pow", "float32"),
    (2, "float64", "div", "float64"),
    ("int32", 1.5, "ge", "bool"),
]


def _operand(spec):
    return wg.tensor(np.array([1, 0, 1]).astype(spec)) if isinstance(spec, str) else spec


@pytest.mark.parametrize("a, b, op, want", PROMOTION, ids=[f"{a}-{op}-{b}" for a, b, op, _ in PROMOTION])
def test_promotion(a, b, op, want, backend):
    assert getattr(wg, op)(_operand(a), _operand(b)).dtype is wg.to_dtype(want)


def test_promotion_matches_torch():
    """Every pair of dtypes, 0-d tensors beside tensors with dims, and Python scalars, as torch promotes them."""
    torch = pytest.importorskip("torch")
    names = ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
    operands = [(n, nd) for n in names for nd in (1, 0)] + [True, 2, 2.5]

    def make(spec, lib):
        if not isinstance(spec, tuple):
            return spec
        name, ndim = spec
        return lib.ones((2,) * ndim, dtype=getattr(lib, name))
    for a in operands:
        for b in operands:
            if not (isinstance(a, tuple) or isinstance(b, tuple)):
                continue
            for op in ("add", "mul", "div", "maximum", "eq"):
                torch_refuses = {"maximum": not (isinstance(a, tuple) and isinstance(b, tuple)),
                                 "eq": not isinstance(a, tuple)}   # torch wants a tensor there
                if torch_refuses.get(op):
                    continue
                want = getattr(torch, op)(make(a, torch), make(b, torch)).dtype
                got = getattr(wg, op)(make(a, wg), make(b, wg)).dtype
                assert str(want)[6:] == got.name, (a, b, op)


def test_int_arithmetic_is_exact(backend):
    a, b = wg.tensor([7, -7, 6]), wg.tensor([2, 2, -4])
    assert (a + b).tolist() == [9, -5, 2]
    assert (a * b).tolist() == [14, -14, -24]
    assert (a - 1).tolist() == [6, -8, 5]
    assert (a ** 2).tolist() == [49, 49, 36]
    assert (a / b).tolist() == [3.5, -3.5, -1.5]


def test_div_rounding_modes(backend):
    a, b = wg.tensor([7, -7, 7, -7]), wg.tensor([2, 2, -2, -2])
    assert wg.div(a, b, rounding_mode="floor").tolist() == [3, -4, -4, 3]
    assert wg.div(a, b, rounding_mode="trunc").tolist() == [3, -3, -3, 3]
    assert wg.div(a, b, rounding_mode="floor").dtype is wg.int64
    f = wg.tensor([7.5, -7.5])
    assert wg.div(f, 2, rounding_mode="trunc").tolist() == [3.0, -3.0]
    assert (f // 2).tolist() == [3.0, -4.0]
    assert (a % 3).tolist() == [1, 2, 1, 2]
    assert (7 // wg.tensor([2, -2])).tolist() == [3, -4]
    assert wg.div(a, b, rounding_mode=None).tolist() == [3.5, -3.5, -3.5, 3.5]


def test_comparison_operators_return_tensors(backend):
    x = wg.tensor([1.0, 2.0, 3.0])
    assert (x == 2).tolist() == [False, True, False]
    assert (x != 2).dtype is wg.bool
    assert (2 < x).tolist() == [False, False, True]     # reflected: x.__gt__(2)
    assert (x >= wg.tensor([3.0])).tolist() == [False, False, True]
    assert (x == None) is False  # noqa: E711  (not a number: identity comparison, as PyTorch)
    assert len({x, x, wg.tensor([1.0])}) == 2        # tensors stay hashable by identity
    assert x in [x]


def test_bool_operators(backend):
    a, b = wg.tensor([True, True, False]), wg.tensor([True, False, False])
    assert (a & b).tolist() == [True, False, False]
    assert (a | b).tolist() == [True, True, False]
    assert (a ^ b).tolist() == [False, True, False]
    assert (a & True).tolist() == [True, True, False]
    assert (~a).tolist() == [False, False, True]
    x = wg.tensor([0.5, 1.5])
    assert ((x > 0) & (x < 1)).tolist() == [True, False]


def test_scalars_and_empty(backend):
    assert (wg.tensor(2.0) * wg.tensor(3.0)).shape == ()
    assert (wg.tensor(2.0) + wg.ones(0, 3)).shape == (0, 3)
    assert wg.where(wg.tensor(True), 1, 2).tolist() == 1
    assert wg.where(wg.tensor([True, False]), 1, 2.5).tolist() == [1.0, 2.5]


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "eq", "lt",
                                "logical_and"])
def test_shape_mismatch_names_op_and_shapes(op, backend):
    a, b = wg.ones(2, 3, backend=backend), wg.ones(4, backend=backend)
    for x in (a, a.detach().requires_grad_()):   # not recorded, and recorded; PyTorch's RuntimeError
        with pytest.raises(RuntimeError, match=rf"^{op}: shapes \(2, 3\) and \(4,\) cannot be broadcast") as e:
            getattr(wg, op)(x, b)
        assert isinstance(e.value, ValueError)   # what webgrad raised before, and numpy raises


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["add_", "sub_", "mul_"])
@pytest.mark.parametrize("shape", [(2, 3), (64, 64)], ids=["small", "large"])
def test_inplace_shape_mismatch_leaves_self(op, backend, shape):
    a = wg.ones(*shape, backend=backend)
    with pytest.raises(ValueError, match=rf"^{op[:-1]}: shapes {re.escape(str(shape))} and \(4,\) cannot be broadcast"):
        getattr(a, op)(wg.ones(4, backend=backend))
    assert a.tolist() == np.ones(shape).tolist() and a._version == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel", wg.kernel_names.BINARY)
def test_binary_kernels_raise_on_shapes_that_do_not_broadcast(kernel, backend):
    """The contract add, sub and mul lean on (they leave the shape check to the kernel): every
    backend's binary kernel raises ValueError for shapes that do not broadcast."""
    dtype = wg.int64 if kernel in wg.kernel_names.BITWISE else wg.float32   # integer-only kernels take ints
    a, b = wg.ones(2, 3, backend=backend, dtype=dtype), wg.ones(4, backend=backend, dtype=dtype)
    with pytest.raises(ValueError):
        wg.run_kernel(kernel, a, b)
    with pytest.raises(ValueError):
        wg.run_kernel(kernel, b, a)
    with pytest.raises(ValueError):
        wg.run_kernel(kernel, wg.ones(0, 3, backend=backend, dtype=dtype), wg.ones(2, 1, backend=backend, dtype=dtype))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "maximum", "atan2", "lt", "logical_or"])
def test_unsupported_operand_names_op(op):
    with pytest.raises(TypeError, match=rf"^{op}: expected tensors or Python numbers, got Tensor and str"):
        getattr(wg, op)(wg.ones(2), "a")
    with pytest.raises(TypeError, match=rf"^{op}: .*got list and Tensor"):
        getattr(wg, op)([1.0], wg.ones(2))


def test_bad_operator_use():
    x = wg.ones(3)
    with pytest.raises(TypeError, match="add"):
        x + [1, 2, 3]
    with pytest.raises(NotImplementedError, match="bitwise_and: not implemented for float32"):   # PyTorch's type
        x & x
    with pytest.raises(ValueError, match="div: rounding_mode"):
        wg.div(x, 2, rounding_mode="round")
    with pytest.raises(ValueError, match=r"^mul: shapes \(3,\) and \(2,\)"):
        x * wg.ones(2)


def test_int_negative_power_names_op():
    with pytest.raises(RuntimeError, match="pow: integers to negative integer powers"):   # PyTorch's type
        wg.tensor([1, 2]) ** -1
    assert (wg.tensor([1, 2]) ** -1.0).tolist() == [1.0, 0.5]


# ---------------------------------------------------------------- found by tests/fuzz


def test_integer_tensor_to_negative_tensor_powers_as_torch(backend):
    """A tensor exponent may be negative (only a negative Python int is refused): 0, or +-1 for +-1."""
    a, b = [0, 1, -1, 2, -2, -1, 3], [-1, -1, -3, -1, -3, -2, 2]
    want = torch_available().pow(torch_available().tensor(a), torch_available().tensor(b)).tolist()
    assert wg.pow(wg.tensor(a), wg.tensor(b)).tolist() == want == [0, 1, -1, 0, 0, 1, 9]
    assert (2 ** wg.tensor([-1, 2])).tolist() == [0, 4]


def test_bool_to_a_bool_power(backend):
    a, b = wg.tensor([True, False, True, False]), wg.tensor([True, True, False, False])
    assert (a ** b).tolist() == [True, False, True, True] and (a ** b).dtype is wg.bool


@pytest.mark.parametrize("program", [lambda a, b: a - b, lambda a, b: b - a, lambda a, b: a - True,
                                     lambda a, b: False - b, lambda a, b: wg.sub(b, a)],
                         ids=["bool-bool", "int-bool", "bool-scalar", "scalar-int", "sub"])
def test_subtraction_with_a_bool_is_refused_as_torch(program, backend):
    with pytest.raises(RuntimeError, match="sub: subtraction, the `-` operator, with a bool tensor"):
        program(wg.tensor([True, False]), wg.tensor([1, 2]))


def test_negative_zero_scalar_keeps_its_sign(backend):
    """A 0-d constant -0.0 is not served from the cache of +0.0 (they compare equal as keys)."""
    assert wg.tensor(0.0) + 1 is not None       # +0.0 cached first
    assert (wg.tensor([1]) / 0.0).tolist() == [float("inf")]
    assert (wg.tensor([1]) / -0.0).tolist() == [-float("inf")]
    assert (wg.tensor([1.0]) * -0.0).tolist() == [-0.0] and str((wg.tensor([1.0]) * -0.0).tolist()) == "[-0.0]"


def test_empty_integer_division_by_zero_divides_nothing():
    for op in (lambda a, b: a // b, lambda a, b: a % b):
        assert op(wg.zeros(0, dtype=wg.int32), wg.tensor(0, dtype=wg.int32)).shape == (0,)


def test_where_bad_input():
    with pytest.raises(TypeError, match="where: condition must be a bool tensor, got float32"):
        wg.where(wg.ones(2), 1.0, 0.0)
    with pytest.raises(TypeError, match="where: condition must be a Tensor"):
        wg.where([True], 1.0, 0.0)
    with pytest.raises(ValueError, match=r"where: shapes \(2,\) and \(3,\)"):
        wg.where(wg.tensor([True, False]), wg.ones(3), 0.0)


def test_against_torch():
    torch = pytest.importorskip("torch")
    a, b = uniform(3, 4), nonzero(4)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    wa, wb = wg.tensor(a, requires_grad=True), wg.tensor(b, requires_grad=True)
    for fn in (lambda x, y: x * y + x / y - y, lambda x, y: torch_or_wg(x).atan2(x, y),
               lambda x, y: torch_or_wg(x).maximum(x, y.abs() - 1), lambda x, y: (x.abs() + 0.1) ** y):
        want = fn(ta, tb)
        want.sum().backward()
        got = fn(wa, wb)
        got.sum().backward()
        assert_close(got, want.detach().numpy(), rtol=1e-12, atol=1e-12)
        assert_close(wa.grad, ta.grad.numpy(), rtol=1e-12, atol=1e-12)
        assert_close(wb.grad, tb.grad.numpy(), rtol=1e-12, atol=1e-12)
        for t in (ta, tb, wa, wb):
            t.grad = None


def torch_or_wg(x):
    import torch
    return torch if isinstance(x, torch.Tensor) else wg


def test_floor_divide_is_exact_near_integers_and_integers_divide_exactly(backend):
    t = torch_available()
    assert (wg.tensor([1.0]) // wg.tensor([0.1])).tolist() == [9.0] == (t.tensor([1.0]) // t.tensor([0.1])).tolist()
    big = wg.tensor([2 ** 24 + 1, -(2 ** 24) - 1], dtype=wg.int32)
    assert (big // 2).tolist() == [2 ** 23, -(2 ** 23) - 1] and (big % 3).tolist() == [(2 ** 24 + 1) % 3,
                                                                                      (-(2 ** 24) - 1) % 3]


def test_integer_division_by_zero_raises_on_cpu_as_torch():
    t = torch_available()
    for op in (lambda a, b: a // b, lambda a, b: a % b):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op(t.tensor([5]), t.tensor([0]))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op(wg.tensor([5], device="cpu"), wg.tensor([0], device="cpu"))


def torch_available():
    return pytest.importorskip("torch")


HALF_SCALAR_OPS = {
    "x * s": lambda x, s: x * s, "s * x": lambda x, s: s * x, "x / s": lambda x, s: x / s, "s / x": lambda x, s: s / x,
    "x // s": lambda x, s: x // s, "trunc": lambda x, s: x.div(s, rounding_mode="trunc"),
    "x + s": lambda x, s: x + s, "x % s": lambda x, s: x % s, "x < s": lambda x, s: x < s,
}


@pytest.mark.parametrize("name", sorted(HALF_SCALAR_OPS))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_tensor_with_a_python_float_as_torch(backend, name, dtype):
    """PyTorch computes x * s, x / s and x // s of a float16/bfloat16 x in float32 with the scalar s (a Python
    number or a 0-d tensor) unrounded, and s / x as reciprocal(x) * s; the other ops round s to x's dtype first."""
    torch = pytest.importorskip("torch")
    if getattr(wg, dtype) not in wg.registry.backend(backend).dtypes:
        pytest.skip(f"{backend} holds no {dtype}")
    gen = np.random.default_rng(5)
    values, scalars = gen.uniform(-4, 4, 64), gen.uniform(0.1, 4, 8) * gen.choice([-1, 1], 8)
    fn, tdt = HALF_SCALAR_OPS[name], getattr(torch, dtype)
    x = wg.tensor(values, dtype=wg.float32).to(getattr(wg, dtype))
    tx = torch.tensor(values, dtype=torch.float32).to(tdt)
    zero_d = [wg.float32] + ([wg.float64] if wg.float64 in wg.registry.backend(backend).dtypes else [])
    for s in scalars.tolist():
        for ws, ts in [(s, s)] + [(wg.tensor(s, dtype=d), torch.tensor(s, dtype=getattr(torch, d.name))) for d in zero_d]:
            got, want = fn(x, ws), fn(tx, ts)
            assert got.dtype.name == str(want.dtype).removeprefix("torch.")
            np.testing.assert_array_equal(np.asarray(got.float().tolist()), want.float().numpy(), err_msg=f"{name} {s}")


def test_half_tensor_times_python_float_gradient_as_torch():
    torch = pytest.importorskip("torch")
    values = np.random.default_rng(6).uniform(-4, 4, 32)
    for lib in (wg, torch):
        x = lib.tensor(values).to(lib.bfloat16).requires_grad_()
        (x * 0.587890625 / 1.3).sum().backward()
        if lib is wg:
            got = np.asarray(x.grad.float().tolist())
        else:
            np.testing.assert_array_equal(got, x.grad.float().numpy())


def test_integer_trunc_division_is_exact_and_refuses_zero(backend):
    import torch
    a, b = [-7, 7, -6, 2 ** 30 + 1, 5, 0], [2, -2, 3, 3, -5, 4]
    got = wg.div(wg.tensor(a, backend=backend), wg.tensor(b, backend=backend), rounding_mode="trunc")
    want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode="trunc")
    assert got.dtype == wg.int64 and got.tolist() == want.tolist()
    if backend == "cpu":
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            torch.div(torch.tensor([-7]), 0, rounding_mode="trunc")
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            wg.div(wg.tensor([-7]), 0, rounding_mode="trunc")


def test_the_divisors_gradient_is_pytorchs_bit_for_bit_over_a_wide_range():
    """PyTorch's order, -dy * ((a / b) / b): -dy * a / (b * b) over- and underflows elsewhere (b * b of a tiny b is 0,
    of a huge b inf); one in three of these draws differed."""
    import torch
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000)).astype(np.float32)
    b = (rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000)).astype(np.float32)
    a, b = np.append(a, [0.0, 1e30]).astype(np.float32), np.append(b, [1.17549435e-38, 1e-20]).astype(np.float32)
    grads = []
    for lib in (torch, wg):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        (x / y).backward(lib.ones_like(x))
        grads.append((x.grad.numpy(), y.grad.numpy()))
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_array_equal(got, want)
