"""Unary elementwise ops: forward vs numpy, finite-difference gradients, dtypes, bad input."""
import math

import numpy as np
import pytest

import webgrad as wg
from opinfo import OpCase, assert_close, gradcheck, gradgradcheck, op_tests

rng = np.random.default_rng(0)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def uniform(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def off_zero(*shape, gap=0.1):
    """Values in [-2, 2] at least ``gap`` from 0 (away from kinks of relu, abs, ...)."""
    x = uniform(*shape)
    return np.where(x < 0, x - gap, x + gap)


def off_integers(*shape):
    """Values away from integers and half-integers (where floor/ceil/round/sign jump)."""
    return np.floor(uniform(*shape, lo=-3, hi=3)) + rng.uniform(0.1, 0.4, shape) * rng.choice([1, 2], shape)


def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _softplus(x, beta, threshold):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


# name: (webgrad fn, numpy reference, input maker, second order?)
UNARY = {
    "neg": (wg.neg, np.negative, uniform, False),
    "abs": (wg.abs, np.abs, off_zero, False),
    "exp": (wg.exp, np.exp, uniform, True),
    "log": (wg.log, np.log, lambda *s: uniform(*s, lo=0.2, hi=3), False),
    "log1p": (wg.log1p, np.log1p, lambda *s: uniform(*s, lo=-0.5, hi=3), False),
    "expm1": (wg.expm1, np.expm1, uniform, False),
    "sqrt": (wg.sqrt, np.sqrt, lambda *s: uniform(*s, lo=0.2, hi=3), False),
    "rsqrt": (wg.rsqrt, lambda x: 1 / np.sqrt(x), lambda *s: uniform(*s, lo=0.2, hi=3), False),
    "square": (wg.square, np.square, uniform, False),
    "reciprocal": (wg.reciprocal, np.reciprocal, off_zero, False),
    "sin": (wg.sin, np.sin, uniform, False),
    "cos": (wg.cos, np.cos, uniform, False),
    "tan": (wg.tan, np.tan, lambda *s: uniform(*s, lo=-1.2, hi=1.2), False),
    "tanh": (wg.tanh, np.tanh, uniform, True),
    "sigmoid": (wg.sigmoid, _sigmoid, lambda *s: uniform(*s, lo=-6, hi=6), True),
    "relu": (wg.relu, lambda x: np.maximum(x, 0), off_zero, False),
    "leaky_relu": (lambda x: wg.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x), off_zero, False),
    "elu": (lambda x: wg.elu(x, alpha=1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)), off_zero, False),
    "gelu": (wg.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), uniform, True),
    "gelu_tanh": (lambda x: wg.gelu(x, approximate="tanh"), _gelu_tanh, uniform, False),
    "silu": (wg.silu, lambda x: x * _sigmoid(x), uniform, False),
    "softplus": (wg.softplus, lambda x: _softplus(x, 1.0, 20.0), uniform, False),
    "softplus_threshold": (lambda x: wg.softplus(x, beta=2, threshold=1.0), lambda x: _softplus(x, 2.0, 1.0),
                           off_zero, False),
    "sign": (wg.sign, np.sign, off_zero, False),
    "floor": (wg.floor, np.floor, off_integers, False),
    "ceil": (wg.ceil, np.ceil, off_integers, False),
    "round": (wg.round, np.round, off_integers, False),
    "erf": (wg.erf, _erf, uniform, False),
    "clamp": (lambda x: wg.clamp(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7), off_integers, False),
    "clamp_min": (lambda x: x.clamp(min=0.25), lambda x: np.maximum(x, 0.25), off_integers, False),
    "clamp_max": (lambda x: x.clip(max=0.25), lambda x: np.minimum(x, 0.25), off_integers, False),
    "method": (lambda x: x.exp().sin().abs(), lambda x: np.abs(np.sin(np.exp(x))), uniform, False),
}


def _cases():
    cases = []
    for name, (fn, ref, make, second) in UNARY.items():
        cases += [
            OpCase(name, fn, ref, [make(3, 5)]),
            OpCase(name, fn, ref, [make()]),                                  # 0-d
            OpCase(name, fn, ref, [make(0, 3)], grad=False),                 # empty
            OpCase(name, fn, ref, [make(37, 29)], grad=False, id=f"{name}-large"),  # 1073 elements
        ]
    cases.append(OpCase("logical_not", wg.logical_not, np.logical_not, [rng.random((4, 5)) > 0.5], grad=False))
    cases.append(OpCase("logical_not", wg.logical_not, np.logical_not, [np.array([0, 2, -1], np.int32)], grad=False,
                        id="logical_not-int"))
    cases.append(OpCase("clamp_tensor", lambda x, lo, hi: x.clamp(lo, hi),
                        lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
                        [uniform(3, 4), uniform(4, lo=-1.5, hi=-0.8), uniform(3, 1, lo=0.8, hi=1.5)]))
    return cases


CASES = _cases()
globals().update(op_tests(CASES))


@pytest.mark.parametrize("name", [n for n, row in UNARY.items() if row[3]])
def test_second_order(name):
    fn, _, make, _ = UNARY[name]
    gradgradcheck(fn, make(2, 3))


# ---------------------------------------------------------------- dtypes

FLOAT_MATH = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "tanh",
              "sigmoid", "silu", "erf", "gelu", "elu", "leaky_relu", "softplus"]
KEEP_DTYPE = ["neg", "abs", "square", "relu", "sign", "floor", "ceil", "round"]


@pytest.mark.parametrize("name", FLOAT_MATH)
def test_float_math_on_int_is_float32(name, backend):
    x = wg.tensor([1, 2, 3])
    y = getattr(wg, name)(x)
    assert y.dtype is wg.float32
    assert_close(y, getattr(wg, name)(wg.tensor([1.0, 2.0, 3.0])), what=name)


@pytest.mark.parametrize("name", KEEP_DTYPE)
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_dtype_kept(name, dtype, backend):
    x = wg.tensor(np.array([-3, 0, 2, 5]).astype(dtype))
    y = getattr(x, name)()
    assert y.dtype is wg.to_dtype(dtype)
    ref = {"neg": np.negative, "relu": lambda a: np.maximum(a, 0)}.get(name, getattr(np, name, None))
    assert y.tolist() == ref(np.array([-3, 0, 2, 5])).astype(dtype).tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_math_keeps_float64(dtype, backend):
    x = wg.tensor([0.5], dtype=dtype)
    for name in FLOAT_MATH:
        assert getattr(x, name)().dtype is wg.to_dtype(dtype), name


@pytest.mark.float64
def test_clamp_dtypes(backend):
    i = wg.tensor([-3, 0, 5])
    assert i.clamp(-1, 1).dtype is wg.int64 and i.clamp(-1, 1).tolist() == [-1, 0, 1]
    f = i.clamp(-0.5, 1.5)
    assert f.dtype is wg.float32 and f.tolist() == [-0.5, 0.0, 1.5]
    assert wg.tensor([1.0], dtype=wg.float64).clamp(0, 0.5).dtype is wg.float64
    assert wg.clamp(wg.tensor([0.0, 5.0]), 3, 1).tolist() == [1.0, 1.0]  # min > max: all max, as torch


def test_round_half_to_even_and_decimals(backend):
    assert wg.round(wg.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])).tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0]
    assert_close(wg.tensor([1.2345, -2.5555]).round(decimals=2), np.array([1.23, -2.56]))


def test_sigmoid_softplus_extremes_are_finite(backend):
    x = wg.tensor([-1000.0, -80.0, 0.0, 80.0, 1000.0])
    assert_close(wg.sigmoid(x), _sigmoid(np.array([-1000.0, -80, 0, 80, 1000])), atol=1e-30)
    assert_close(wg.softplus(x), np.array([0.0, 0.0, math.log(2), 80.0, 1000.0]), atol=1e-30)
    assert_close(wg.silu(x), np.array([0.0, 0.0, 0.0, 80.0, 1000.0]), atol=1e-30)


@pytest.mark.float64
def test_casts(backend):
    x = wg.tensor([1.7, -0.0, 2.2])
    assert x.int().dtype is wg.int32 and x.int().tolist() == [1, 0, 2]
    assert x.long().dtype is wg.int64 and x.long().tolist() == [1, 0, 2]
    assert x.bool().tolist() == [True, False, True]
    assert x.double().dtype is wg.float64
    assert wg.tensor([True, False]).float().tolist() == [1.0, 0.0]
    assert x.float() is x or x.float().tolist() == x.tolist()


def test_cast_gradient():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    (y * wg.tensor([3.0, 4.0], dtype=wg.float64)).sum().backward()
    assert x.grad.dtype is wg.float32 and x.grad.tolist() == [3.0, 4.0]
    x64 = wg.tensor([1.0], dtype=wg.float64, requires_grad=True)
    x64.float().sum().backward()
    assert x64.grad.dtype is wg.float64 and x64.grad.tolist() == [1.0]
    assert not wg.tensor([1.0], requires_grad=True).int().requires_grad


def test_every_kernel_has_cpu_impl_and_gradient():
    K = wg.kernel_names
    not_differentiable = {K.LOGICAL_NOT, K.BITWISE_NOT}
    for name in K.UNARY:
        assert name in wg.kernels_for_backend("cpu"), name
        assert (wg.get_gradient(name) is None) == (name in not_differentiable), name


def test_identity_gradient():
    gradcheck(lambda t: wg.run_kernel("Identity", t) * t, uniform(4), what="identity")


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round"])
def test_piecewise_constant_gradients_are_zeros(name):
    x = wg.tensor([0.3, -1.2], requires_grad=True)
    getattr(x, name)().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_clamp_gradient_passes_inside_including_bounds():
    x = wg.tensor([-2.0, -1.0, 0.0, 1.0, 2.0], requires_grad=True)
    x.clamp(-1, 1).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]


def test_relu_gradient_at_zero_is_zero():
    x = wg.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_neg_operator_and_abs_builtin(backend):
    x = wg.tensor([1.0, -2.0])
    assert (-x).tolist() == [-1.0, 2.0]
    assert abs(x).tolist() == [1.0, 2.0]
    assert (~wg.tensor([True, False])).tolist() == [False, True]


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("name", list(wg.ops.unary._TABLE) + ["round", "leaky_relu", "elu", "gelu", "softplus",
                                                         "clamp", "logical_not"])
def test_non_tensor_input_names_op(name):
    with pytest.raises(TypeError, match=f"^{name}: input must be a Tensor"):
        getattr(wg, name)([1.0, 2.0])


def test_bad_arguments_name_op():
    x = wg.tensor([1.0])
    with pytest.raises(ValueError, match="gelu"):
        wg.gelu(x, approximate="fast")
    with pytest.raises(ValueError, match="clamp"):
        x.clamp()
    with pytest.raises(TypeError, match="clamp"):
        x.clamp("a", 1)
    with pytest.raises(RuntimeError, match="neg"):      # PyTorch's type
        -wg.tensor([True])
    with pytest.raises(TypeError, match="invert"):
        ~wg.tensor([1.0])


def test_against_torch():
    torch = pytest.importorskip("torch")
    x = np.concatenate([uniform(20, lo=-5, hi=5), [-0.5, 0.5, 1.5, 2.5]])
    pairs = {"exp": None, "sigmoid": None, "gelu": None, "silu": None, "erf": None, "round": None, "tanh": None,
             "softplus": None, "elu": None}
    for name in pairs:
        got = getattr(wg, name)(wg.tensor(x, dtype=wg.float64)).numpy()
        want = getattr(torch.nn.functional, name, None) or getattr(torch, name)
        np.testing.assert_allclose(got, want(torch.tensor(x)).numpy(), rtol=1e-12, atol=1e-12, err_msg=name)
    got = wg.gelu(wg.tensor(x, dtype=wg.float64), approximate="tanh").numpy()
    want = torch.nn.functional.gelu(torch.tensor(x), approximate="tanh").numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_bool_input_as_torch(backend):
    """Found by tests/fuzz: sign of bools is a copy, square of bools is int64, relu and neg refuse them
    with PyTorch's RuntimeError."""
    x = wg.tensor([True, False])
    assert wg.sign(x).tolist() == [True, False] and wg.sign(x).dtype is wg.bool
    assert wg.square(x).tolist() == [1, 0] and wg.square(x).dtype is wg.int64
    for op in (wg.relu, wg.neg):
        with pytest.raises(RuntimeError, match="not supported for bool tensors"):
            op(x)
