"""float16 and bfloat16 elementwise math against PyTorch's own half results, value for value.

PyTorch's CPU kernels compute half precision in float32 ("opmath") and round once at the end; an op
webgrad composes of several kernels does the same through ``core/ops/opmath.py``, a cpu kernel of
several numpy steps through ``backends/cpu/opmath.py``. Where PyTorch itself composes (``softsign``,
``tanhshrink``) or computes in the half dtype step by step (``logit``, ``xlogy``, ``ndtr``, ``entr``,
bfloat16 ``x ** 3``), webgrad rounds per step as well; those are checked here too.

The reference is PyTorch's result on the same half tensor, of a length that PyTorch's vectorized loops
cover whole (its scalar tail loop rounds some ops per step: a few-element tensor's ``i0e`` differs).
Results agree bit for bit, but: ``ULPS`` lists the ops whose float32 math itself differs from
PyTorch's (libm's exp/log/sin, erf and Bessel approximations), by one unit in the last place of the
half dtype on a few values; on a GPU backend (float16 only) every op is allowed one unit, its WGSL
float32 math being its own.
"""
import math

import ml_dtypes
import numpy as np
import pytest
import torch

import webgrad as wg
import webgrad.nn.functional as WF
import torch.nn.functional as TF

_NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
_VALUES = np.concatenate([np.linspace(-8, 8, 1024), np.geomspace(1e-3, 60, 512), -np.geomspace(1e-3, 60, 512),
                          np.geomspace(1e-6, 6e4, 256), -np.geomspace(1e-6, 6e4, 256)])   # 2560 = 40 * 64

# name: (webgrad's op, PyTorch's, number of tensor operands): ops PyTorch computes in float32 and rounds once
OPMATH = {
    "sinh": (wg.sinh, torch.sinh, 1), "cosh": (wg.cosh, torch.cosh, 1), "asin": (wg.asin, torch.asin, 1),
    "acos": (wg.acos, torch.acos, 1), "asinh": (wg.asinh, torch.asinh, 1), "acosh": (wg.acosh, torch.acosh, 1),
    "atanh": (wg.atanh, torch.atanh, 1), "i0": (wg.i0, torch.i0, 1), "sinc": (wg.sinc, torch.sinc, 1),
    "special.i1": (wg.special.i1, torch.special.i1, 1), "sigmoid": (wg.sigmoid, torch.sigmoid, 1),
    "rsqrt": (wg.rsqrt, torch.rsqrt, 1), "silu": (WF.silu, TF.silu, 1), "selu": (WF.selu, TF.selu, 1),
    "celu": (lambda x: WF.celu(x, 0.7), lambda x: TF.celu(x, 0.7), 1), "mish": (WF.mish, TF.mish, 1),
    "hardsigmoid": (WF.hardsigmoid, TF.hardsigmoid, 1), "hardswish": (WF.hardswish, TF.hardswish, 1),
    "leaky_relu": (WF.leaky_relu, TF.leaky_relu, 1), "glu": (WF.glu, TF.glu, 1),
    "hypot": (wg.hypot, torch.hypot, 2), "logaddexp": (wg.logaddexp, torch.logaddexp, 2),
    "logaddexp2": (wg.logaddexp2, torch.logaddexp2, 2), "floor_divide": (wg.floor_divide, torch.floor_divide, 2),
    "addcmul": (lambda a, b, c: wg.addcmul(a, b, c, value=0.7), lambda a, b, c: torch.addcmul(a, b, c, value=0.7), 3),
    "addcdiv": (lambda a, b, c: wg.addcdiv(a, b, c, value=0.7), lambda a, b, c: torch.addcdiv(a, b, c, value=0.7), 3),
    **{f"pow{p}": (lambda x, p=p: x ** p, lambda x, p=p: x ** p, 1) for p in (0.5, -0.5, -1.0, 1.7)},
}
# float16 pow by arithmetic is float32 math in PyTorch, bfloat16's rounds each step (both kept, as PyTorch's)
OPMATH.update({f"pow{p}": (lambda x, p=p: x ** p, lambda x, p=p: x ** p, 1) for p in (2.0, 3.0, -2.0)})
# PyTorch composes these, or computes them step by step in the half dtype: webgrad too (no opmath)
STEPWISE = {
    "softsign": (WF.softsign, TF.softsign, 1), "tanhshrink": (WF.tanhshrink, TF.tanhshrink, 1),
    "logit": (wg.logit, torch.logit, 1), "special.ndtr": (wg.special.ndtr, torch.special.ndtr, 1),
    "special.entr": (wg.special.entr, torch.special.entr, 1), "xlogy": (wg.xlogy, torch.xlogy, 2),
    "special.xlog1py": (wg.special.xlog1py, torch.special.xlog1py, 2),
}
# one unit in the last place where the float32 math differs from PyTorch's (not the rounding): its
# vectorized exp (sigmoid), i1's series, addcmul's multiply-add contracted to one fused multiply-add
ULPS = {"float16": {"special.i1": 1, "addcmul": 1},
        "bfloat16": {"sigmoid": 1, "silu": 1, "glu": 1, "addcmul": 1}}
# the GPU's float16 floor_divide is float32 math rounded once; PyTorch's rounds (a - fmod(a, b)) / b per step
GPU_ULPS = {"floor_divide": 2}
# PyTorch's vectorized lerp is a fused multiply-add: where end - input nearly cancels input, its float32
# result keeps a residue (4.8e-8 for a true 0) that webgrad's separate multiply and add do not
FUSED = {
    "lerp": (lambda a, b: wg.lerp(a, b, 0.3), lambda a, b: torch.lerp(a, b, 0.3), 2),
    "lerp_tensor": (wg.lerp, torch.lerp, 3),
}


def _operands(n, dtype, lib):
    """``n`` half tensors of ``_VALUES`` (the second reversed, the third a shifted copy) in ``lib``."""
    arrays = [_VALUES, _VALUES[::-1].copy(), np.roll(_VALUES, 7)][:n]
    if lib is torch:
        return [torch.tensor(a, dtype=torch.float32).to(getattr(torch, dtype)) for a in arrays]
    return [wg.tensor(a.astype(np.float32)).to(getattr(wg, dtype)) for a in arrays]


def _ordinal(values, dtype):
    """Each half value's place in the ordered line of the dtype's values (adjacent values differ by 1)."""
    bits = np.asarray(values, np.float32).astype(_NP[dtype]).view(np.int16).astype(np.int64)
    return np.where(bits < 0, -32768 - bits, bits)


def ulp_distance(ours, theirs, dtype):
    """Units in the last place of ``dtype`` between two arrays of its values; 0 where both are NaN.

    >>> ulp_distance(np.array([1.0, np.nan]), np.array([1.0009765625, np.nan]), "float16").tolist()
    [1, 0]
    """
    a, b = np.asarray(ours, np.float32), np.asarray(theirs, np.float32)
    return np.where(np.isnan(a) & np.isnan(b), 0, np.abs(_ordinal(a, dtype) - _ordinal(b, dtype)))


def _check(name, table, backend, dtype):
    ours_fn, theirs_fn, n = table[name]
    theirs = theirs_fn(*_operands(n, dtype, torch))
    ours = ours_fn(*_operands(n, dtype, wg))
    assert ours.dtype is getattr(wg, dtype) and ours.device == backend
    ours, theirs = np.array(ours.float().tolist(), np.float32), theirs.float().numpy()
    assert ours.shape == theirs.shape
    allowed = GPU_ULPS.get(name, 1) if backend != "cpu" else ULPS[dtype].get(name, 0)
    distance = ulp_distance(ours, theirs, dtype)
    worst = int(distance.argmax())
    assert distance.max() <= allowed, (f"{name} {dtype}: {int((distance > allowed).sum())} values off by more than "
                                       f"{allowed} ulp, e.g. ours {ours.ravel()[worst]} PyTorch's {theirs.ravel()[worst]}")
    if allowed:   # rare: a handful of values, not a whole range
        assert (distance > 0).mean() < 0.05, f"{name} {dtype}: {int((distance > 0).sum())} values off by 1 ulp"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(OPMATH))
def test_opmath_ops_round_once_as_pytorch(name, backend, dtype):
    _check(name, OPMATH, backend, dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(STEPWISE))
def test_ops_pytorch_rounds_step_by_step_stay_so(name, backend, dtype):
    _check(name, STEPWISE, backend, dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(FUSED))
def test_lerp_within_an_ulp_or_a_fused_residue(name, backend, dtype):
    ours_fn, theirs_fn, n = FUSED[name]
    theirs = theirs_fn(*_operands(n, dtype, torch)).float().numpy()
    ours = np.array(ours_fn(*_operands(n, dtype, wg)).float().tolist(), np.float32)
    far = np.abs(theirs) > 1e-6
    assert ulp_distance(ours[far], theirs[far], dtype).max() <= 1
    with np.errstate(invalid="ignore"):   # inf - inf
        near = (ours == theirs) | (np.abs(ours - theirs) <= 1e-7) | (np.isnan(ours) & np.isnan(theirs))
    assert np.all(near[~far])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["sinh", "acosh", "sigmoid", "sinc", "i0", "rsqrt"])
def test_inplace_forms_write_the_half_tensor(name, backend, dtype):
    x = _operands(1, dtype, wg)[0]
    expected = getattr(wg, name)(x).float().tolist()
    kept = x
    out = getattr(x, name + "_")()
    assert out is kept and x.dtype is getattr(wg, dtype)
    assert np.array_equal(np.array(x.float().tolist()), np.array(expected), equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["sinh", "asinh", "logaddexp", "selu", "sigmoid", "hypot"])
def test_gradients_flow_through_opmath_in_the_half_dtype(name, backend, dtype):
    (ours_fn, theirs_fn, n), values = OPMATH[name], np.linspace(-3, 3, 64, dtype=np.float32)
    ours = [wg.tensor(values[::k or 1] + 0.1 * k).to(getattr(wg, dtype)).requires_grad_() for k in range(n)]
    theirs = [torch.tensor(values[::k or 1] + 0.1 * k, dtype=torch.float32).to(getattr(torch, dtype)).requires_grad_()
              for k in range(n)]
    ours_fn(*ours).sum().backward()
    theirs_fn(*theirs).sum().backward()
    for a, b in zip(ours, theirs):
        assert a.grad.dtype is getattr(wg, dtype)
        assert ulp_distance(a.grad.float().tolist(), b.grad.float().numpy(), dtype).max() <= 2


def test_opmath_keeps_other_dtypes_and_promotion():
    half = wg.tensor([0.5, 1.5], dtype=wg.float16)
    assert wg.sinh(wg.tensor([0.5])).dtype is wg.float32 and wg.sinh(wg.tensor([0.5], dtype=wg.float64)).dtype is wg.float64
    assert wg.hypot(half, wg.tensor([1.0, 2.0], dtype=wg.bfloat16)).dtype is wg.float32      # as PyTorch's promotion
    assert wg.hypot(half, wg.tensor(2.0)).dtype is wg.float16                               # a 0-d float32 beside it
    assert wg.logaddexp(half, wg.tensor([1.0, 2.0], dtype=wg.float64)).dtype is wg.float64
    assert math.isnan(wg.acosh(wg.tensor([-1e4])).item())   # NaN below 1, as PyTorch's (the sum rounded to -1)


# reductions PyTorch accumulates in float32 and rounds once (a half sum of squares overflows at 256)
REDUCTIONS = {
    "mean": lambda m, x: m.mean(x), "mean_dim": lambda m, x: m.mean(x.reshape(64, 32), 0),
    "var": lambda m, x: m.var(x), "var_dim": lambda m, x: m.var(x.reshape(64, 32), 1, correction=0),
    "std": lambda m, x: m.std(x), "std_mean": lambda m, x: m.std_mean(x.reshape(64, 32), 1)[0],
    "var_mean": lambda m, x: m.var_mean(x)[0], "norm": lambda m, x: m.norm(x),
    "norm_3": lambda m, x: m.norm(x.reshape(64, 32), 3, 1), "vector_norm": lambda m, x: m.linalg.vector_norm(x),
    "l1_loss": lambda m, x: m.nn.functional.l1_loss(x, x.flip(0)),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_accumulate_in_float32_and_round_once(name, backend, dtype):
    values = np.linspace(-100, 300, 2048, dtype=np.float32)
    theirs = REDUCTIONS[name](torch, torch.tensor(values).to(getattr(torch, dtype))).float().numpy()
    ours = REDUCTIONS[name](wg, wg.tensor(values).to(getattr(wg, dtype)))
    assert ours.dtype is getattr(wg, dtype)
    assert np.isfinite(theirs).all()   # a half accumulation would overflow here
    assert ulp_distance(ours.float().tolist(), theirs, dtype).max() <= 1   # float32 sums in another order


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_std_gradient_flows_in_the_half_dtype(backend, dtype):
    values = np.linspace(-100, 300, 64, dtype=np.float32)
    ours = wg.tensor(values).to(getattr(wg, dtype)).requires_grad_()
    theirs = torch.tensor(values).to(getattr(torch, dtype)).requires_grad_()
    ours.std().backward()
    theirs.std().backward()
    assert ours.grad.dtype is getattr(wg, dtype)
    assert ulp_distance(ours.grad.float().tolist(), theirs.grad.float().numpy(), dtype).max() <= 2


# the same, for ops with arguments (written once for both libraries: m is torch or webgrad)
FORMS = {
    "add_alpha": lambda m, x, y: m.add(x, y, alpha=0.3), "sub_alpha": lambda m, x, y: m.sub(x, y, alpha=0.3),
    "softshrink": lambda m, x, y: m.nn.functional.softshrink(x, 0.3),
    "threshold": lambda m, x, y: m.nn.functional.threshold(x, 0.3, -0.7),
    "elu_alpha": lambda m, x, y: m.nn.functional.elu(x, alpha=0.7),
    "leaky_relu_0.2": lambda m, x, y: m.nn.functional.leaky_relu(x, 0.2),
    "addmm": lambda m, x, y: m.addmm(x[:64].reshape(8, 8), x[64:128].reshape(8, 8), y[:64].reshape(8, 8), beta=0.5,
                                     alpha=0.3),
    "addmv": lambda m, x, y: m.addmv(x[:8], x[64:128].reshape(8, 8), y[:8], beta=0.5, alpha=0.3),
    "addr": lambda m, x, y: m.addr(x[:64].reshape(8, 8), x[64:72], y[:8], beta=0.5, alpha=0.3),
    "baddbmm": lambda m, x, y: m.baddbmm(x[:128].reshape(2, 8, 8), x[128:256].reshape(2, 8, 8),
                                         y[:128].reshape(2, 8, 8), beta=0.5, alpha=0.3),
    "matmul_long": lambda m, x, y: (x[:2048] / 64).reshape(4, 512) @ (y[:2048] / 64).reshape(512, 4),
    "logcumsumexp": lambda m, x, y: m.logcumsumexp(x.reshape(40, 64), 1),
    "rms_norm": lambda m, x, y: m.nn.functional.rms_norm(x.reshape(40, 64), (64,)),
    "rms_norm_weight": lambda m, x, y: m.nn.functional.rms_norm(x.reshape(40, 64), (64,), y[:64]),
}
# logcumsumexp's exp/log1p steps in float32 (PyTorch's libm differs); bfloat16 addmv: PyTorch's gemv sums in
# another order
FORMS_ULPS = {"logcumsumexp": 1, "addmv": 1}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(FORMS))
def test_ops_with_arguments_round_once_as_pytorch(name, backend, dtype):
    x, y = _operands(2, dtype, torch)
    theirs = FORMS[name](torch, x, y).float().numpy()
    ours = FORMS[name](wg, *_operands(2, dtype, wg))
    assert ours.dtype is getattr(wg, dtype)
    allowed = 1 if backend != "cpu" else FORMS_ULPS.get(name, 0)
    assert ulp_distance(np.array(ours.float().tolist(), np.float32), theirs, dtype).max() <= allowed


# backward kernels: PyTorch's tanh/silu/elu/softplus (and bfloat16 sigmoid) ones compute in float32; its
# float16 sigmoid backward rounds (dy * (1 - y)) * y step by step; both as PyTorch's
BACKWARD = {"sigmoid": lambda m, x: m.sigmoid(x), "tanh": lambda m, x: m.tanh(x), "silu": lambda m, x: m.nn.functional.silu(x),
            "elu": lambda m, x: m.nn.functional.elu(x, 0.7), "softplus": lambda m, x: m.nn.functional.softplus(x, 2.0),
            "selu": lambda m, x: m.nn.functional.selu(x), "celu": lambda m, x: m.nn.functional.celu(x, 0.7)}
BACKWARD_ULPS = {"silu": 1, "selu": 2, "celu": 1}   # sigmoid's and exp's float32 math; selu: PyTorch's scales once


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(BACKWARD))
def test_activation_gradients_as_pytorch(name, backend, dtype):
    grads = np.linspace(-1, 1, _VALUES.size, dtype=np.float32)
    theirs = _operands(1, dtype, torch)[0].requires_grad_()
    BACKWARD[name](torch, theirs).backward(torch.tensor(grads).to(theirs.dtype))
    ours = _operands(1, dtype, wg)[0].requires_grad_()
    BACKWARD[name](wg, ours).backward(wg.tensor(grads).to(ours.dtype))
    allowed = max(1, BACKWARD_ULPS.get(name, 0)) if backend != "cpu" else BACKWARD_ULPS.get(name, 0)
    assert ours.grad.dtype is ours.dtype
    distance = ulp_distance(np.array(ours.grad.float().tolist(), np.float32), theirs.grad.float().numpy(), dtype)
    assert distance.max() <= allowed and (distance > 0).mean() < 0.05


def test_trapezoid_of_evenly_spaced_half_samples_as_pytorch(backend):
    """PyTorch's (sum(y) - (y[0] + y[-1]) / 2) * dx: no y[i] + y[i + 1] to overflow (that gave inf - inf = NaN)."""
    values = np.array([3e4, -3e4, 3e4, 3e4, 1.0, -6e4, 6e4], np.float32)
    for dx in (None, 0.25):
        kw = {} if dx is None else {"dx": dx}
        for name in ("trapezoid", "trapz"):
            theirs = getattr(torch, name)(torch.tensor(values).half(), **kw)
            ours = getattr(wg, name)(wg.tensor(values).half(), **kw)
            assert ours.dtype is wg.float16 and ours.item() == theirs.item()


def test_parameters_take_opmath_as_plain_tensors():
    """A half nn.Parameter (a Tensor subclass) rounds once as a plain tensor does: lerp of two refused to run,
    sinh rounded per step."""
    import webgrad.nn as wnn
    v = np.linspace(-6, 6, 257).astype(np.float32)
    p, tp = wnn.Parameter(wg.tensor(v, dtype=wg.bfloat16)), torch.nn.Parameter(torch.tensor(v, dtype=torch.bfloat16))
    for ours, theirs in ((wg.sinh(p), torch.sinh(tp)), (wg.lerp(p, p * 2, 0.3), torch.lerp(tp, tp * 2, 0.3))):
        np.testing.assert_array_equal(ours.float().detach().numpy(), theirs.float().detach().numpy())
