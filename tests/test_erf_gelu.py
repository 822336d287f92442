"""erf (vectorised on cpu, Chebyshev pieces; helpers.wgsl's erf_ on the GPU backends), Gelu in both
forms and its fused backward GeluGrad: accuracy against mpmath, forward and gradients against
PyTorch over shapes and dtypes, finite differences to second order, backends agreeing."""
import math

import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from opinfo import OpCase, gradcheck, gradgradcheck, op_tests, torch_reference as tref

torch = pytest.importorskip("torch")
mpmath = pytest.importorskip("mpmath")   # a dependency of torch (through sympy)
TF = torch.nn.functional
K = wg.kernel_names

rng = np.random.default_rng(19)


def rn(*shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def gelu_grad(approximate):
    """GeluGrad(dy, x, gelu(x)), as GELU's rule calls it."""
    return lambda dy, x: wg.run_kernel(K.GELU_GRAD, dy, x, F.gelu(x, approximate=approximate),
                                       approximate=approximate)


def torch_gelu_grad(approximate):
    return lambda dy, x: torch.ops.aten.gelu_backward(torch.from_numpy(dy), torch.from_numpy(x),
                                                       approximate=approximate).numpy()


CASES = [
    OpCase("erf", wg.erf, tref(torch.erf), [rn(4, 37, scale=2)], second_order=True),
    OpCase("erf_wide", wg.erf, tref(torch.erf), [np.linspace(-7, 7, 301)], grad=False),
    OpCase("gelu", F.gelu, tref(TF.gelu), [rn(3, 5, 7, scale=2)], second_order=True),
    OpCase("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), tref(TF.gelu, approximate="tanh"),
           [rn(3, 5, 7, scale=2)], second_order=True),
    OpCase("gelu_vec4", F.gelu, tref(TF.gelu), [rn(64, scale=3)]),
    OpCase("gelu_scalar", F.gelu, lambda x: TF.gelu(torch.tensor(x)).numpy(), [np.array(0.7)]),
    OpCase("gelu_empty", F.gelu, tref(TF.gelu), [np.zeros((0, 3))]),
    OpCase("gelu_grad", gelu_grad("none"), torch_gelu_grad("none"), [rn(4, 9), rn(4, 9, scale=2)],
           second_order=True),
    OpCase("gelu_grad_tanh", gelu_grad("tanh"), torch_gelu_grad("tanh"), [rn(4, 9), rn(4, 9, scale=2)],
           second_order=True),
]

globals().update(op_tests(CASES))


def _ulps(got, x, dtype):
    """|got - erf(x)| in units in the last place of ``dtype`` at erf(x) (mpmath, 30 digits)."""
    with mpmath.workdps(30):
        want = np.array([float(mpmath.erf(mpmath.mpf(float(v)))) for v in x])
    ulp = np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
    ulp[want == 0] = np.spacing(dtype(0))
    return np.abs(got.astype(np.float64) - want) / ulp


GRID = np.concatenate([np.linspace(-7, 7, 14001), np.geomspace(1e-12, 7, 2000), -np.geomspace(1e-300, 1, 200),
                       [0.999999, 1.0, 1.000001, 2.5, 4.5, 6.0]])


def test_erf_float64_within_one_ulp():
    from webgrad.backends.cpu.erf import erf
    assert _ulps(erf(GRID), GRID, np.float64).max() <= 1.0


def test_erf_float32_within_two_and_a_half_ulps():
    from webgrad.backends.cpu.erf import erf
    x = GRID.astype(np.float32)
    got = erf(x)
    assert got.dtype == np.float32
    assert _ulps(got, x, np.float32).max() <= 2.5


def test_gpu_erf_within_three_ulps(gpu):
    x = GRID.astype(np.float32)
    got = wg.tensor(x, backend="wgpu").erf().numpy()
    assert _ulps(got, x, np.float32).max() <= 3.0


@pytest.mark.parametrize("dtype", [wg.float32, wg.float64])
def test_erf_special_values(backend, dtype):
    x = wg.tensor([float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e-30], dtype=dtype)
    got = x.erf().tolist()
    assert math.isnan(got[0]) and got[1:5] == [1.0, -1.0, 0.0, -0.0]
    assert math.copysign(1, got[4]) == -1 and got[5] == pytest.approx(1.1283791670955126e-30, rel=1e-6)


def test_erf_coefficients_are_reproduced():
    """The shipped coefficients are tests/erf_fit.py's Chebyshev interpolants, as its docstring says."""
    import erf_fit
    from webgrad.backends.cpu import erf as module
    for name, coefficients in erf_fit.coefficients().items():
        np.testing.assert_allclose(getattr(module, name), coefficients, rtol=1e-15, atol=0, err_msg=name)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("shape", [(7,), (3, 4, 5), (2, 1000), (16, 64, 33)])
def test_gelu_matches_torch(approximate, shape):
    x = rn(*shape, scale=3)
    for dtype, tol in ((np.float64, 1e-13), (np.float32, 2e-6)):
        a = x.astype(dtype)
        w = wg.tensor(a, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        y, yt = F.gelu(w, approximate=approximate), TF.gelu(t, approximate=approximate)
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
        dy = rn(*shape).astype(dtype)
        y.backward(wg.tensor(dy))
        yt.backward(torch.tensor(dy))
        np.testing.assert_allclose(w.grad.numpy(), t.grad.numpy(), rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gelu_half_precision_as_torch(backend, approximate, dtype):
    x = rn(5, 40, scale=3).astype(np.float32)
    w = wg.tensor(x, backend=backend).to(dtype).requires_grad_()
    t = torch.tensor(x).to(getattr(torch, dtype)).requires_grad_()
    y, yt = F.gelu(w, approximate=approximate), TF.gelu(t, approximate=approximate)
    assert y.dtype.name == dtype
    ulp = {"float16": 2 ** -10, "bfloat16": 2 ** -7}[dtype]     # both compute in float32 and round once
    np.testing.assert_allclose(y.float().detach().numpy(), yt.float().detach().numpy(), rtol=ulp, atol=1e-6)
    y.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(w.grad.float().numpy(), t.grad.float().numpy(), rtol=1e-2, atol=1e-2)


def test_gelu_unknown_form_is_refused(backend):
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(wg.ones(2), approximate="sigmoid")
    with pytest.raises(ValueError, match="GeluGrad"):
        wg.run_kernel(K.GELU_GRAD, wg.ones(2), wg.ones(2), wg.ones(2), approximate="sigmoid")


def test_gelu_third_order():
    """GeluGrad's rule is made of ops, so a third derivative exists and matches gelu'''."""
    x = wg.tensor([-1.3, 0.2, 2.1], dtype=wg.float64, requires_grad=True)
    (g1,) = wg.grad(F.gelu(x).sum(), x, create_graph=True)
    (g2,) = wg.grad(g1.sum(), x, create_graph=True)
    (g3,) = wg.grad(g2.sum(), x)
    v = x.detach().numpy()
    pdf = np.exp(-v * v / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(g3.numpy(), pdf * (v ** 3 - 4 * v), rtol=1e-10)


def test_gelu_float32_tanh_form_coefficients_are_reproduced():
    """float32 GELU's erf(z) ~ tanh(z p(z^2)) on cpu: p is tests/erf_fit.py's fit, as gelu.py says."""
    import erf_fit
    from webgrad.backends.cpu import gelu as module
    np.testing.assert_allclose(module._ERF_BY_TANH, erf_fit.tanh_form()[::-1], rtol=1e-12, atol=0)


def test_gelu_float32_as_accurate_as_torch():
    """float32 exact GELU on cpu is x Phi(x) with Phi within 1e-7 absolute (PyTorch's float32 1 + erf
    rounds to 6e-8): checked on a dense grid against float64, the error bound taken per element."""
    x = np.concatenate([np.linspace(-12, 12, 240001), np.geomspace(1e-30, 12, 2000)]).astype(np.float32)
    x = np.concatenate([x, -x])
    want = TF.gelu(torch.from_numpy(x.astype(np.float64))).numpy()
    got = F.gelu(wg.tensor(x, backend="cpu")).numpy().astype(np.float64)
    bound = 1e-7 * np.abs(x) + np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - want) <= bound).all()


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_result_changed_in_place_leaves_backward_as_torch(backend, approximate):
    """PyTorch's GELU keeps only its input, so changing its result in place (add_, an index write)
    leaves the backward alone; GeluGrad reads the result as it was made, not as it is now."""
    x = rn(4, 6, scale=2).astype(np.float32)
    grads = []
    for lib, make in ((wg, lambda a: wg.tensor(a, backend=backend)), (torch, torch.tensor)):
        t = make(x).requires_grad_()
        y = lib.nn.functional.gelu(t, approximate=approximate)
        y.add_(1.0)
        y[0] = 5.0
        (y * y).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_grad_float32_near_zero_and_far_out_as_torch(approximate):
    """GeluGrad reads Phi(x) as gelu(x) / x on cpu: at 0, in subnormals, far left and far right it
    still gives PyTorch's gradient (1/2 at 0: no 0 / 0)."""
    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    x = np.concatenate([[0.0, -0.0, tiny, -tiny, 1e-38, -1e-30, 1e-20, -1e-12], np.linspace(-20, 20, 4001),
                        [1e30, -1e30, 3e38, -3e38]]).astype(np.float32)
    t = torch.from_numpy(x.copy()).requires_grad_()
    TF.gelu(t, approximate=approximate).sum().backward()
    w = wg.tensor(x, backend="cpu").requires_grad_()
    F.gelu(w, approximate=approximate).sum().backward()
    atol = {"none": 2e-7, "tanh": 3e-6}[approximate]   # tanh: PyTorch's 1 + t cancels near x = -5, ours does not
    np.testing.assert_allclose(w.grad.numpy(), t.grad.numpy(), rtol=2e-6, atol=atol)
    assert w.grad.numpy()[0] == 0.5
