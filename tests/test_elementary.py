"""The elementary functions composed from other kernels (``core/ops/elementary.py``) and the
Log2/Log10/Fmod kernels, against PyTorch: forward on every backend, finite-difference gradients
(float64, cpu), backends agreeing with cpu, and the gradients equal to torch's."""
import math

import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests, to_numpy

rng = np.random.default_rng(7)


def u(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape)


def away(*shape, lo=0.3, hi=2.0):
    """Magnitudes in [lo, hi] with random signs."""
    return u(*shape, lo=lo, hi=hi) * rng.choice([-1.0, 1.0], shape)


def torch_ref(fn, **kw):
    """A numpy reference calling PyTorch's ``fn`` (integer arrays as int64); tuples come back as tuples."""
    def ref(*arrays):
        ts = [torch.tensor(a.astype(np.int64) if a.dtype.kind == "i" else a) for a in arrays]
        out = fn(*ts, **kw)
        return tuple(o.numpy() for o in out) if isinstance(out, (tuple, list)) else out.numpy()
    return ref


# name: (webgrad fn, torch fn, inputs)
UNARY = {
    "sinh": (wg.sinh, torch.sinh, [u(3, 4)]),
    "cosh": (wg.cosh, torch.cosh, [u(3, 4)]),
    "asin": (wg.asin, torch.asin, [u(3, 4, lo=-0.9, hi=0.9)]),
    "acos": (wg.acos, torch.acos, [u(3, 4, lo=-0.9, hi=0.9)]),
    "atan": (wg.atan, torch.atan, [u(3, 4, lo=-4, hi=4)]),
    "asinh": (wg.asinh, torch.asinh, [u(3, 4, lo=-4, hi=4)]),
    "acosh": (wg.acosh, torch.acosh, [u(3, 4, lo=1.2, hi=5)]),
    "atanh": (wg.atanh, torch.atanh, [u(3, 4, lo=-0.9, hi=0.9)]),
    "exp2": (wg.exp2, torch.exp2, [u(3, 4, lo=-4, hi=4)]),
    "log2": (wg.log2, torch.log2, [u(3, 4, lo=0.1, hi=9)]),
    "log10": (wg.log10, torch.log10, [u(3, 4, lo=0.1, hi=90)]),
    "frac": (wg.frac, torch.frac, [np.floor(u(3, 4, lo=-3, hi=3)) + u(3, 4, lo=0.1, hi=0.9)]),
    "deg2rad": (wg.deg2rad, torch.deg2rad, [u(3, 4, lo=-360, hi=360)]),
    "rad2deg": (wg.rad2deg, torch.rad2deg, [u(3, 4)]),
    "arcsinh_alias": (wg.arcsinh, torch.arcsinh, [u(5)]),
    "trunc": (wg.trunc, torch.trunc, [np.floor(u(3, 4, lo=-3, hi=3)) + u(3, 4, lo=0.1, hi=0.9)]),
}
BINARY = {
    "hypot": (wg.hypot, torch.hypot, [away(3, 4), away(4)]),
    "logaddexp": (wg.logaddexp, torch.logaddexp, [u(3, 4, lo=-5, hi=5), u(3, 4, lo=-5, hi=5)]),
    "logaddexp2": (wg.logaddexp2, torch.logaddexp2, [u(2, 3, lo=-5, hi=5), u(3, lo=-5, hi=5)]),
    "fmod": (wg.fmod, torch.fmod, [u(3, 4, lo=-7, hi=7), away(3, 4, lo=0.7, hi=2.3)]),
    "lerp_scalar": (lambda a, b: wg.lerp(a, b, 0.3), lambda a, b: torch.lerp(a, b, 0.3), [u(3, 4), u(3, 4)]),
    "lerp_high": (lambda a, b: wg.lerp(a, b, 0.8), lambda a, b: torch.lerp(a, b, 0.8), [u(3, 4), u(3, 4)]),
}
TERNARY = {
    "lerp_tensor": (wg.lerp, torch.lerp, [u(3, 4), u(3, 4), u(3, 4, lo=-0.5, hi=1.5)]),
    "addcmul": (lambda a, b, c: wg.addcmul(a, b, c, value=0.5), lambda a, b, c: torch.addcmul(a, b, c, value=0.5),
                [u(3, 4), u(3, 1), u(4)]),
    "addcdiv": (lambda a, b, c: wg.addcdiv(a, b, c, value=-2), lambda a, b, c: torch.addcdiv(a, b, c, value=-2),
                [u(3, 4), u(3, 4), away(3, 4)]),
}

CASES = [OpCase(name, fn, torch_ref(tfn), inputs, rtol=2e-5, atol=2e-6)
         for table in (UNARY, BINARY, TERNARY) for name, (fn, tfn, inputs) in table.items()]
CASES[[c.name for c in CASES].index("trunc")].grad = False   # piecewise constant: zero gradients, checked below
globals().update(op_tests(CASES))


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=[c.id for c in CASES if c.grad])
def test_gradients_equal_torchs(case):
    ours = [wg.tensor(a, dtype=wg.float64, requires_grad=True) for a in case.inputs]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in case.inputs]
    w = rng.standard_normal(np.broadcast_shapes(*(a.shape for a in case.inputs)))
    (case.fn(*ours) * wg.tensor(w)).sum().backward()
    (torch_ref_fn(case)(*theirs) * torch.tensor(w)).sum().backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(to_numpy(o.grad), t.grad.numpy(), rtol=1e-7, atol=1e-10, err_msg=case.id)


def torch_ref_fn(case):
    return {**UNARY, **BINARY, **TERNARY}[case.name][1]


# ---------------------------------------------------------------- edges PyTorch defines


EDGES = [
    ("log2", [0.0, 1.0, 8.0, 0.5, -1.0, math.inf, 2.0 ** -140]),
    ("log10", [0.0, 100.0, 1e-3, -1.0, math.inf]),
    ("sinh", [0.0, -0.0, 1e-8, 80.0, -80.0, math.nan]),
    ("asinh", [0.0, -0.0, 1e-8, -1e-8, 1e10, -1e10]),
    ("atanh", [0.0, 1.0, -1.0, 1.5, 1e-9]),
    ("acosh", [1.0, 0.5, math.inf]),
    ("asin", [1.0, -1.0, 1.5, 0.0]),
    ("acos", [1.0, -1.0, 1.5]),
    ("atan", [math.inf, -math.inf, 0.0]),
    ("exp2", [-200.0, 0.0, 10.0, math.inf, -math.inf]),
    ("frac", [-0.0, 2.5, -2.5, math.inf]),
    ("trunc", [-0.5, 0.5, -1.7, math.nan]),
]


@pytest.mark.parametrize("name,values", EDGES, ids=[e[0] for e in EDGES])
def test_edges_as_pytorch(name, values, backend):
    got = getattr(wg, name)(wg.tensor(values, device=backend)).numpy()
    want = getattr(torch, name)(torch.tensor(values)).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-30, equal_nan=True, err_msg=name)


def test_exact_powers(backend):
    x = wg.tensor([2.0 ** k for k in range(-20, 21)], device=backend)
    assert wg.log2(x).tolist() == [float(k) for k in range(-20, 21)]
    assert wg.log10(wg.tensor([1.0, 10.0, 1000.0], device=backend)).tolist() == [0.0, 1.0, 3.0]


def test_fmod_as_pytorch(backend):
    a = [1.0, -7.5, 7.5, -0.0, 5.0, 5.0, math.inf, 3.0]
    b = [0.1, 2.0, -2.0, 3.0, math.inf, 0.0, 2.0, math.nan]
    got = wg.fmod(wg.tensor(a, device=backend), wg.tensor(b, device=backend)).numpy()
    want = torch.fmod(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_array_equal(np.signbit(got)[~np.isnan(want)], np.signbit(want)[~np.isnan(want)])
    np.testing.assert_allclose(got, want, rtol=0, atol=0, equal_nan=True)
    ints = wg.fmod(wg.tensor([-7, 7, -8], device=backend), wg.tensor([3, -3, 4], device=backend))
    assert ints.dtype == wg.int64 and ints.tolist() == torch.fmod(torch.tensor([-7, 7, -8]),
                                                                  torch.tensor([3, -3, 4])).tolist()


def test_fmod_by_integer_zero_is_an_error_on_cpu():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        wg.fmod(wg.tensor([1, 2]), 0)


def test_integer_inputs_become_float(backend):
    for name in ("sinh", "exp2", "log2", "atan", "deg2rad"):
        got = getattr(wg, name)(wg.tensor([1, 2], device=backend))
        want = getattr(torch, name)(torch.tensor([1, 2]))
        assert got.dtype == wg.float32 and str(want.dtype) == "torch.float32", name
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert wg.trunc(wg.tensor([3, -3], device=backend)).tolist() == [3, -3]


def test_refusals_as_pytorch():
    with pytest.raises(RuntimeError, match="addcdiv"):
        wg.addcdiv(wg.ones(2), wg.tensor([1, 2]), wg.tensor([1, 1]))
    with pytest.raises(TypeError, match="lerp"):
        wg.lerp(wg.tensor([1, 2]), wg.tensor([3, 4]), 0.5)
    with pytest.raises(TypeError, match="hypot"):
        wg.hypot(wg.tensor([1]), wg.tensor([2]))


def test_in_place_methods(backend):
    for name, args in (("sinh_", ()), ("atan_", ()), ("fmod_", (1.5,)), ("lerp_", (wg.ones(3), 0.5)),
                       ("addcmul_", (wg.ones(3), wg.ones(3))), ("trunc_", ()), ("log2_", ())):
        base = [0.25, 0.5, 2.0]
        t = wg.tensor(base, device=backend)
        targs = [torch.tensor(a.tolist()) if isinstance(a, wg.Tensor) else a for a in args]
        out = getattr(t, name)(*[a.to(backend) if isinstance(a, wg.Tensor) else a for a in args])
        want = getattr(torch.tensor(base), name)(*targs)
        assert out is t, name
        np.testing.assert_allclose(t.numpy(), want.numpy(), rtol=1e-6, err_msg=name)
