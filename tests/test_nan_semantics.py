"""NaN, infinities, signed zeros, huge and tiny values through every elementwise and reduction
kernel, on every backend, against PyTorch (float32).

The reference is torch itself: a NaN must be where torch has one, an infinity where torch has it,
a zero of torch's sign, finite values within a tolerance of the op's float32 accuracy. WGSL has
no NaN constant and compilers may assume there is no NaN (lavapipe folds ``x != x`` to false), so
these values are what the GPU kernels most easily get wrong without an error.

Subnormal inputs (below 1.18e-38) may be flushed to zero by a GPU (WGSL allows it): there a
result is right when it is torch's for the input or for the input flushed, and a subnormal
result may be flushed. Where a backend is known to differ from torch, ``KNOWN`` says so and a
strict xfail test keeps the list true.
"""
from __future__ import annotations

import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

MIN_NORMAL = float(np.finfo(np.float32).tiny)   # 1.18e-38
EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38, -3e38, 1e-30, -1e-30, MIN_NORMAL, 1e-45, -1e-45, 1e-40,
                 1.5, -1.5, 2.5, -0.5, 0.5, 1.0, -1.0, 7.0, 20.0, 88.8, 89.0, -104.0, 100.0], np.float32)


# ---------------------------------------------------------------- comparing with torch

def _subnormal(a):
    a = np.asarray(a, np.float64)
    return (a != 0) & (np.abs(a) < MIN_NORMAL)


def _flushed(a):
    """``a`` with its subnormals replaced by zeros of their sign (what a flushing GPU reads)."""
    a = np.array(a, copy=True)
    if a.dtype.kind == "f":
        a[_subnormal(a)] = np.copysign(0.0, a[_subnormal(a)])
    return a


def _agree(got, want, rtol, atol, zero_sign=True):
    """Elementwise: same NaNs, same infinities, zeros of the same sign, finite values close."""
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype == bool or want.dtype.kind in "iu":
        return got == want
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.isfinite(w) & (np.abs(g - w) <= atol + rtol * np.abs(w)))
    if zero_sign:
        ok &= ~((g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w)))
    return ok


def assert_like_torch(got, inputs, torch_fn, rtol=1e-6, atol=0.0, zero_sign=True, skip=None, what=""):
    """``got`` (a webgrad result) against ``torch_fn`` of the numpy ``inputs``, also accepting what
    torch gives for the inputs flushed (where an input is subnormal) and a flushed subnormal result;
    ``skip`` masks elements compared elsewhere."""
    want = _torch(torch_fn, inputs)
    got = got.numpy() if isinstance(got, wg.Tensor) else np.asarray(got)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, torch {want.shape}"
    assert got.dtype.kind == want.dtype.kind or (want.dtype == bool) == (got.dtype == bool), \
        f"{what}: dtype {got.dtype}, torch {want.dtype}"
    ok = _agree(got, want, rtol, atol, zero_sign)
    flush = np.zeros(want.shape, bool)
    for a in inputs:
        if np.asarray(a).dtype.kind == "f":
            sub = _subnormal(a)
            try:                        # elementwise: where the input is subnormal
                flush |= np.broadcast_to(sub, want.shape)
            except ValueError:          # a reduction or a product: anywhere, if any input is
                flush |= sub.any()
    if flush.any():
        ok |= flush & _agree(got, _torch(torch_fn, [_flushed(a) for a in inputs]), rtol, atol, zero_sign=False)
    if want.dtype.kind == "f":
        ok |= _subnormal(want) & (got == 0)
        ok |= flush & _agree(got, want, rtol, atol, zero_sign=False)
    if skip is not None:
        ok |= skip
    bad = np.argwhere(~ok)
    assert not len(bad), f"{what}: {len(bad)} element(s) unlike torch, e.g. " + "; ".join(
        f"at {tuple(int(v) for v in i)}: inputs {_at(inputs, want.shape, i)} "
        f"gave {got[tuple(i)]!r}, torch {want[tuple(i)]!r}" for i in bad[:4])


def _at(inputs, shape, i):
    try:
        return [np.broadcast_to(np.asarray(a), shape)[tuple(i)] for a in inputs]
    except ValueError:
        return "(see the test)"


def _torch(fn, inputs):
    out = fn(*[torch.from_numpy(np.ascontiguousarray(a)) for a in inputs])
    out = out.numpy()
    return out.astype(np.int32) if out.dtype == np.int64 else out


# ---------------------------------------------------------------- unary elementwise

# name: (webgrad function, torch function, rtol)
UNARY = {
    "neg": (lambda x: -x, torch.neg, 0), "abs": (wg.abs, torch.abs, 0),
    "exp": (wg.exp, torch.exp, 2e-6), "log": (wg.log, torch.log, 1e-6), "log1p": (wg.log1p, torch.log1p, 2e-6),
    "expm1": (wg.expm1, torch.expm1, 2e-6), "sqrt": (wg.sqrt, torch.sqrt, 1e-6), "rsqrt": (wg.rsqrt, torch.rsqrt, 1e-6),
    "square": (wg.square, torch.square, 1e-6), "reciprocal": (wg.reciprocal, torch.reciprocal, 1e-6),
    "sin": (wg.sin, torch.sin, 1e-6), "cos": (wg.cos, torch.cos, 1e-6), "tan": (wg.tan, torch.tan, 1e-6),
    "tanh": (wg.tanh, torch.tanh, 2e-6), "sigmoid": (wg.sigmoid, torch.sigmoid, 2e-6), "relu": (wg.relu, torch.relu, 0),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), lambda x: TF.leaky_relu(x, 0.1), 1e-6),
    "elu": (F.elu, TF.elu, 2e-6), "silu": (F.silu, TF.silu, 2e-6),
    "gelu": (F.gelu, TF.gelu, 2e-6),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda x: TF.gelu(x, approximate="tanh"), 2e-6),
    "softplus": (F.softplus, TF.softplus, 2e-6),
    "softplus_beta": (lambda x: F.softplus(x, 2.0, 5.0), lambda x: TF.softplus(x, 2.0, 5.0), 2e-6),
    "sign": (wg.sign, torch.sign, 0), "floor": (wg.floor, torch.floor, 0), "ceil": (wg.ceil, torch.ceil, 0),
    "round": (wg.round, torch.round, 0), "erf": (wg.erf, torch.erf, 2e-6),
    "clamp": (lambda x: wg.clamp(x, -1.0, 1.0), lambda x: torch.clamp(x, -1.0, 1.0), 0),
    "clamp_min": (lambda x: wg.clamp(x, min=0.0), lambda x: torch.clamp(x, min=0.0), 0),
    "clamp_max": (lambda x: wg.clamp(x, max=-0.0), lambda x: torch.clamp(x, max=-0.0), 0),
    "clamp_nan_bound": (lambda x: wg.clamp(x, min=float("nan")), lambda x: torch.clamp(x, min=float("nan")), 0),
    "clamp_crossed": (lambda x: wg.clamp(x, 2.0, -2.0), lambda x: torch.clamp(x, 2.0, -2.0), 0),
    "to_int32": (lambda x: x.to(wg.int32), lambda x: x.to(torch.int32), 0),
    "to_bool": (lambda x: x.to(wg.bool), lambda x: x.to(torch.bool), 0),
    "logical_not": (wg.logical_not, torch.logical_not, 0),
    "isnan": (lambda x: x != x, lambda x: x != x, 0),
}

# (case, backend or "*", input value): where a backend differs from torch, and why
KNOWN = {
    ("relu", "cpu", -0.0): "cpu's relu is numpy's maximum(x, 0), which gives 0.0 for -0.0; torch keeps -0.0",
    ("elu", "cpu", -0.0): "cpu's elu takes numpy's minimum(x, 0), 0.0 for -0.0; torch keeps -0.0",
    ("clamp_min", "cpu", -0.0): "cpu's clamp is numpy's maximum: 0.0 for clamp(-0.0, min=0.0); torch keeps -0.0",
    ("clamp_max", "cpu", 0.0): "cpu's clamp is numpy's minimum: -0.0 for clamp(0.0, max=-0.0); torch keeps 0.0",
    ("gelu", "*", np.inf): "torch's vectorised gelu(inf) is NaN (inf * 0 inside; one element alone gives inf); "
                           "webgrad gives inf, the limit",
    ("gelu", "*", 3e38): "torch's vectorised gelu overflows inside at 3e38 (inf); webgrad gives 3e38, the value",
}


def _known(case, backend):
    return [v for (c, b, v) in KNOWN if c == case and b in (backend, "*")]


def _mask(x, values):
    m = np.zeros(x.shape, bool)
    for v in values:
        m |= np.isnan(x) if isinstance(v, float) and np.isnan(v) else (x == v) & (np.signbit(x) == np.signbit(v))
    return m


@pytest.mark.parametrize("case", sorted(UNARY))
def test_unary_edge_values(backend, case):
    fn, torch_fn, rtol = UNARY[case]
    got = fn(wg.tensor(EDGE))
    assert_like_torch(got, [EDGE], torch_fn, rtol=rtol, atol=1e-37, skip=_mask(EDGE, _known(case, backend)),
                      what=f"{case} on {backend}")


def test_vec4_and_strided_variants_agree(backend):
    """The same kernels on vec4 items (a size divisible by 4) and through strides (a transposed input)."""
    x = np.resize(EDGE[np.isfinite(EDGE) | np.isnan(EDGE)], (4, 8)).astype(np.float32)
    for case in ("relu", "clamp", "sign", "sin", "to_bool", "isnan"):
        fn, torch_fn, rtol = UNARY[case]
        assert_like_torch(fn(wg.tensor(x)), [x], torch_fn, rtol=rtol, atol=1e-37, skip=_mask(x, _known(case, backend)),
                          what=f"{case} (vec4) on {backend}")
        assert_like_torch(fn(wg.tensor(x.T.copy()).transpose(0, 1)), [x], torch_fn, rtol=rtol, atol=1e-37,
                          skip=_mask(x, _known(case, backend)), what=f"{case} (strided) on {backend}")


@pytest.mark.parametrize("case,backend_name,value", sorted(KNOWN, key=str))
def test_known_differences_from_torch(case, backend_name, value):
    """Each KNOWN entry still holds (strict: a fix makes this fail, so the entry goes)."""
    backends = [backend_name] if backend_name != "*" else wg.backends()
    fn, torch_fn, _ = UNARY[case]
    at = _mask(EDGE, [value])
    for b in backends:
        got = fn(wg.tensor(EDGE, device=b)).numpy()
        assert not _agree(got, _torch(torch_fn, [EDGE]), 1e-6, 0.0)[at].all(), \
            f"{case}({value}) on {b} now agrees with torch: drop it from KNOWN"


# ---------------------------------------------------------------- binary elementwise

A, B = np.repeat(EDGE, len(EDGE)), np.tile(EDGE, len(EDGE))

BINARY = {
    "add": (lambda a, b: a + b, torch.add, 0), "sub": (lambda a, b: a - b, torch.sub, 0),
    "mul": (lambda a, b: a * b, torch.mul, 0), "div": (lambda a, b: a / b, torch.div, 1e-6),
    "pow": (lambda a, b: a ** b, torch.pow, 1e-5), "maximum": (wg.maximum, torch.maximum, 0),
    "minimum": (wg.minimum, torch.minimum, 0), "atan2": (wg.atan2, torch.atan2, 1e-6),
    "eq": (lambda a, b: a == b, torch.eq, 0), "ne": (lambda a, b: a != b, torch.ne, 0),
    "lt": (lambda a, b: a < b, torch.lt, 0), "le": (lambda a, b: a <= b, torch.le, 0),
    "gt": (lambda a, b: a > b, torch.gt, 0), "ge": (lambda a, b: a >= b, torch.ge, 0),
    "logical_and": (wg.logical_and, torch.logical_and, 0), "logical_or": (wg.logical_or, torch.logical_or, 0),
    "logical_xor": (wg.logical_xor, torch.logical_xor, 0),
    "where": (lambda a, b: wg.where(a > b, a, b), lambda a, b: torch.where(a > b, a, b), 0),
}
# torch.maximum's answer for (0.0, -0.0) depends on its vectorisation: the sign of a tied zero is unspecified
ZERO_SIGN_FREE = {"maximum", "minimum"}


@pytest.mark.parametrize("case", sorted(BINARY))
def test_binary_edge_values(backend, case):
    fn, torch_fn, rtol = BINARY[case]
    got = fn(wg.tensor(A), wg.tensor(B))
    assert_like_torch(got, [A, B], torch_fn, rtol=rtol, atol=1e-37, zero_sign=case not in ZERO_SIGN_FREE,
                      what=f"{case} on {backend}")


@pytest.mark.parametrize("case", ["floor_divide", "remainder"])
def test_float_division_rounding_like_torch(backend, case):
    """FloorDivide and Remainder are kernels computing from fmod as torch does: exact near integers,
    NaN for inf // x, 0 for 0 % inf, -0.0 for -0.0 % x."""
    fn, torch_fn = {"floor_divide": (lambda a, b: a // b, torch.floor_divide),
                    "remainder": (lambda a, b: a % b, torch.remainder)}[case]
    assert_like_torch(fn(wg.tensor(A), wg.tensor(B)), [A, B], _one_at_a_time(torch_fn), rtol=1e-6, atol=1e-37,
                      what=f"{case} on {backend}")


def _one_at_a_time(torch_fn):
    """``torch_fn`` element by element: torch's scalar path, whose remainder is the exact fmod's (its
    vectorised path gives NaN where a / b overflows, e.g. 3e38 % 1e-30)."""
    def fn(a, b):
        return torch.stack([torch_fn(x.reshape(1), y.reshape(1))[0] for x, y in zip(a.reshape(-1), b.reshape(-1))])
    return fn


# ---------------------------------------------------------------- integers

INT_EDGE = np.array([0, 1, -1, 2, -2, 7, -7, 3, 46341, -46341, 2**31 - 1, -2**31], np.int32)
IA, IB = np.repeat(INT_EDGE, len(INT_EDGE)), np.tile(INT_EDGE, len(INT_EDGE))


@pytest.mark.parametrize("case", ["add", "sub", "mul", "maximum", "minimum", "eq", "lt", "ge", "logical_and"])
def test_integer_binary_wraps_as_torch(backend, case):
    fn, torch_fn, _ = BINARY[case]
    assert_like_torch(fn(wg.tensor(IA), wg.tensor(IB)), [IA, IB], torch_fn, what=f"int {case} on {backend}")


def test_integer_pow_wraps_as_torch(backend):
    b = np.tile(np.array([0, 1, 2, 3, 5, 30, 31], np.int32), len(INT_EDGE))
    a = np.repeat(INT_EDGE, 7)
    assert_like_torch(wg.tensor(a) ** wg.tensor(b), [a, b], torch.pow, what=f"int pow on {backend}")


def test_integer_pow_negative_exponent_on_the_gpu(gpu):
    """torch: 1 ** -k == 1, (-1) ** -k == +-1, any other base ** -k == 0 (cpu, as numpy, raises)."""
    a, b = np.array([1, -1, -1, 2, 0, -5], np.int32), np.array([-3, -3, -2, -1, -1, -2], np.int32)
    got = (wg.tensor(a, device="wgpu") ** wg.tensor(b, device="wgpu")).numpy()
    assert got.tolist() == _torch(torch.pow, [a, b]).tolist() == [1, -1, 1, 0, 0, 0]


@pytest.mark.parametrize("case", ["neg", "abs", "sign", "relu", "square"])
def test_integer_unary_as_torch(backend, case):
    fn, torch_fn, _ = UNARY[case]
    assert_like_torch(fn(wg.tensor(INT_EDGE)), [INT_EDGE], torch_fn, what=f"int {case} on {backend}")


def test_integer_reductions_wrap_as_torch(backend):
    x = INT_EDGE.reshape(3, 4)
    for name in ("sum", "prod", "amax", "amin", "argmax", "argmin", "cumsum"):
        got = getattr(wg.tensor(x), name)(1)
        want = getattr(torch.from_numpy(x), name)(1).numpy()
        if name in ("sum", "prod", "cumsum"):   # torch widens to int64; webgrad's int32 wraps as int64's low bits
            want = want.astype(np.int32)
        np.testing.assert_array_equal(got.numpy().astype(want.dtype), want, err_msg=f"int {name} on {backend}")


def test_integer_division_agrees_with_cpu(backend):
    """Integer // and % (cores' compositions through float32) give the cpu's answers, divisors nonzero."""
    keep = IB != 0
    a, b = wg.tensor(IA[keep]), wg.tensor(IB[keep])
    ca, cb = wg.tensor(IA[keep], device="cpu"), wg.tensor(IB[keep], device="cpu")
    np.testing.assert_array_equal((a // b).numpy(), (ca // cb).numpy())
    np.testing.assert_array_equal((a % b).numpy(), (ca % cb).numpy())


# ---------------------------------------------------------------- reductions

ROWS = np.array([[1.0, 5.0, np.nan, 7.0, np.nan, 0.0],
                 [3.0, -np.inf, 2.0, np.inf, 1.0, -1.0],
                 [np.nan] * 6,
                 [2.0, 2.0, 1.0, 1.0, 0.0, 0.0],
                 [-0.0, 0.0, -0.0, 0.0, 0.0, -0.0],
                 [np.inf, np.inf, 3e38, 3e38, -np.inf, 1e-30]], np.float32)


def _long_rows():
    """The same rows, 300 long (the workgroup-per-row kernels), NaNs and extrema late."""
    x = np.zeros((6, 300), np.float32)
    x[:, 250:256] = ROWS
    x[2, :] = np.nan
    return x


REDUCTIONS = {
    "sum": (lambda x: x.sum(1), lambda x: x.sum(1)), "prod": (lambda x: x.prod(1), lambda x: x.prod(1)),
    "mean": (lambda x: x.mean(1), lambda x: x.mean(1)),
    "amax": (lambda x: x.amax(1), lambda x: x.amax(1)), "amin": (lambda x: x.amin(1), lambda x: x.amin(1)),
    "max_values": (lambda x: x.max(1).values, lambda x: x.max(1).values),
    "max_indices": (lambda x: x.max(1).indices, lambda x: x.max(1).indices),
    "min_indices": (lambda x: x.min(1).indices, lambda x: x.min(1).indices),
    "argmax": (lambda x: x.argmax(1), lambda x: x.argmax(1)), "argmin": (lambda x: x.argmin(1), lambda x: x.argmin(1)),
    "argmax_all": (lambda x: x.argmax(), lambda x: x.argmax()),
    "argmin_columns": (lambda x: x.argmin(0), lambda x: x.argmin(0)),
    "max_all": (lambda x: x.max(), lambda x: x.max()),
    "all": (lambda x: x.all(1), lambda x: x.all(1)), "any": (lambda x: x.any(1), lambda x: x.any(1)),
    "cumsum": (lambda x: x.cumsum(1), lambda x: x.cumsum(1)),
    "logsumexp": (lambda x: x.logsumexp(1), lambda x: x.logsumexp(1)),
    "softmax": (lambda x: F.softmax(x, 1), lambda x: torch.softmax(x, 1)),
    "log_softmax": (lambda x: F.log_softmax(x, 1), lambda x: torch.log_softmax(x, 1)),
}


@pytest.mark.parametrize("rows", ["short", "long"])
@pytest.mark.parametrize("case", sorted(REDUCTIONS))
def test_reduction_edge_values(backend, case, rows):
    x = ROWS if rows == "short" else _long_rows()
    fn, torch_fn = REDUCTIONS[case]
    # a sum's zero sign depends on the order of its additions (-0.0 + 0.0): not checked there
    assert_like_torch(fn(wg.tensor(x)), [x], torch_fn, rtol=2e-6, atol=1e-37,
                      zero_sign=case not in ("sum", "mean", "cumsum", "logsumexp", "max_all", "amax", "amin",
                                             "max_values"),
                      what=f"{case} ({rows} rows) on {backend}")


def test_matmul_edge_values(backend):
    a = np.array([[np.inf, 1.0], [np.nan, 0.0], [0.0, 0.0], [3e38, 3e38]], np.float32)
    b = np.array([[0.0, 1.0, 2.0], [1.0, -np.inf, 1.0]], np.float32)
    assert_like_torch(wg.tensor(a) @ wg.tensor(b), [a, b], torch.matmul, rtol=1e-6, what=f"matmul on {backend}")


def test_cross_entropy_edge_logits(backend):
    x = np.array([[np.nan, 0.0, 1.0], [np.inf, 0.0, 1.0], [-np.inf, 0.0, 1.0], [3e38, -3e38, 0.0],
                  [-np.inf, -np.inf, 0.0], [88.8, 89.0, -104.0]], np.float32)
    t = np.array([1, 1, 1, 0, 2, 2])
    got = F.cross_entropy(wg.tensor(x), wg.tensor(t), reduction="none")
    # (torch's loss of a row whose target is its max may be -0.0: the sign of a difference's zero)
    assert_like_torch(got, [x, t], lambda a, b: TF.cross_entropy(a, b, reduction="none"), rtol=2e-6,
                      zero_sign=False, what=f"cross_entropy on {backend}")


# ---------------------------------------------------------------- gradients

GRADIENTS = {
    "relu": (wg.relu, torch.relu), "abs": (wg.abs, torch.abs), "sqrt": (wg.sqrt, torch.sqrt),
    "clamp": (lambda x: wg.clamp(x, -1.0, 1.0), lambda x: torch.clamp(x, -1.0, 1.0)),
    "sigmoid": (wg.sigmoid, torch.sigmoid), "tanh": (wg.tanh, torch.tanh),
    "maximum_zero": (lambda x: wg.maximum(x, wg.zeros_like(x)), lambda x: torch.maximum(x, torch.zeros_like(x))),
    "amax": (lambda x: x.amax(), lambda x: x.amax()),
    "softplus": (F.softplus, TF.softplus), "exp": (wg.exp, torch.exp),
}
GRAD_EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 30.0, -30.0], np.float32)



def _grad(fn, values, backend_name):
    x = wg.tensor(values, requires_grad=True, device=backend_name)
    fn(x).sum().backward()
    return x.grad


def _torch_grad(torch_fn):
    def grad(v):
        t = v.clone().requires_grad_()
        torch_fn(t).sum().backward()
        return t.grad
    return grad


@pytest.mark.parametrize("case", sorted(GRADIENTS))
def test_gradient_at_edge_values(backend, case):
    fn, torch_fn = GRADIENTS[case]
    values = GRAD_EDGE if case != "amax" else GRAD_EDGE[1:]   # one NaN at a time: amax's is below
    assert_like_torch(_grad(fn, values, backend), [values], _torch_grad(torch_fn), rtol=2e-6, zero_sign=False,
                      skip=_mask(values, []), what=f"d {case} on {backend}")


def test_amax_gradient_with_nan(backend):
    """torch's amax gradient goes to the elements equal to the result: none when it is NaN."""
    values = np.array([1.0, np.nan, 3.0], np.float32)
    x = wg.tensor(values, requires_grad=True)
    x.amax().backward()
    t = torch.from_numpy(values).requires_grad_()
    t.amax().backward()
    assert_like_torch(x.grad, [values], lambda v: t.grad, what=f"d amax with NaN on {backend}")
