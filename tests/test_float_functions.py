"""The floating-point and integer elementwise functions of torch/Tensor (copysign, signbit, sgn,
nextafter, ldexp, frexp, float_power, gcd, lcm, heaviside) and their in-place forms: values, signed
zeros, NaN and inf against PyTorch on every backend; gradients by finite differences and as PyTorch's."""
import numpy as np
import pytest

import webgrad as wg
from opinfo import OpCase, op_tests, torch_reference as tref

torch = pytest.importorskip("torch")

A = np.array([-0.0, 0.0, -1.0, 1.0, np.nan, -np.nan, np.inf, -np.inf, 3.5, -7.25, 1e30, 1e-30], np.float32)
B = np.array([1.0, -1.0, -0.0, 0.0, 2.0, -2.0, np.inf, -np.inf, 3.5, 8.0, np.nan, -1e-30], np.float32)
rng = np.random.default_rng(31)


def same(got, want):
    """Equal values, NaN where PyTorch has NaN, and the same sign bits (signed zeros)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))


@pytest.mark.parametrize("name", ["copysign", "nextafter", "heaviside"])
def test_binary_float_functions(backend, name):
    got = getattr(wg, name)(wg.tensor(A), wg.tensor(B)).numpy()
    same(got, getattr(torch, name)(torch.from_numpy(A), torch.from_numpy(B)).numpy())
    method = getattr(wg.tensor(A), name)(wg.tensor(B)).numpy()
    same(method, got)
    x = wg.tensor(A)
    assert getattr(x, name + "_")(wg.tensor(B)) is x
    same(x.numpy(), got)


def test_signbit_sgn_ldexp_frexp(backend):
    a, ta = wg.tensor(A), torch.from_numpy(A)
    same(wg.signbit(a).numpy(), torch.signbit(ta).numpy())
    same(wg.signbit(wg.tensor([-3, 0, 2])).numpy(), torch.signbit(torch.tensor([-3, 0, 2])).numpy())
    same(a.sgn().numpy(), ta.sgn().numpy())
    same(wg.ldexp(a, wg.tensor([3] * len(A))).numpy(), torch.ldexp(ta, torch.tensor([3] * len(A))).numpy())
    same(wg.ldexp(wg.tensor([1, 3]), wg.tensor([2, -1])).numpy(),
         torch.ldexp(torch.tensor([1, 3]), torch.tensor([2, -1])).numpy())
    normal = A[(np.abs(A) > 1e-37) | ~np.isfinite(A) | (A == 0)]   # a GPU may flush subnormals
    mantissa, exponent = wg.frexp(wg.tensor(normal))
    want = torch.frexp(torch.from_numpy(normal))
    same(mantissa.numpy(), want.mantissa.numpy())
    same(exponent.numpy(), want.exponent.numpy())
    assert type(wg.frexp(a)).__name__ == "frexp" and wg.frexp(a).exponent.dtype is wg.int32
    with pytest.raises(RuntimeError, match="floating"):
        wg.frexp(wg.tensor([1, 2]))


def test_gcd_lcm(backend):
    i = np.array([0, -12, 7, 0, 5, -4, 6, 10000, 2 ** 20, 46368], np.int64)   # lcm within int32 (the GPU's int64)
    j = np.array([0, 18, -21, 5, 0, 6, -4, 9998, 3 ** 5, 28657], np.int64)   # Fibonacci: Euclid's longest
    for name in ("gcd", "lcm"):
        got = getattr(wg, name)(wg.tensor(i), wg.tensor(j))
        assert got.tolist() == getattr(torch, name)(torch.from_numpy(i), torch.from_numpy(j)).tolist()
        x = wg.tensor(i)
        assert getattr(x, name + "_")(wg.tensor(j)) is x and x.tolist() == got.tolist()
        with pytest.raises(NotImplementedError, match=name):
            getattr(wg, name)(wg.tensor([1.0]), wg.tensor([2.0]))


def test_float_power(backend):
    if wg.float64 in wg.registry.backend(backend).dtypes:
        got = wg.float_power(wg.tensor([2, 3]), 2)
        assert got.dtype is wg.float64 and got.tolist() == [4.0, 9.0]
        x = wg.tensor([3.0], dtype=wg.float64)
        assert x.float_power_(0.5) is x
        assert x.tolist() == torch.tensor([3.0], dtype=torch.float64).float_power_(0.5).tolist()
        with pytest.raises(RuntimeError, match="float_power_"):
            wg.tensor([2.0]).float_power_(2)
    else:
        with pytest.raises(TypeError, match="float64"):
            wg.float_power(wg.tensor([2.0]), 2)


def test_inplace_torch_aliases(backend):
    x = wg.tensor([0.25, 0.5])
    assert wg.logit_(x, eps=0.3) is x
    np.testing.assert_allclose(x.numpy(), torch.logit_(torch.tensor([0.25, 0.5]), eps=0.3).numpy(), rtol=1e-6)
    for name in ("sinc", "i0"):
        z = wg.tensor([0.0, 0.75])
        assert getattr(wg, name + "_")(z) is z
        np.testing.assert_allclose(z.numpy(), getattr(torch, name)(torch.tensor([0.0, 0.75])).numpy(), rtol=1e-6)
        assert getattr(wg, name) is getattr(wg.Tensor, name) or getattr(wg.tensor([0.5]), name)().shape == (1,)
    y = wg.tensor([0.0, 2.0])
    assert wg.xlogy_(y, wg.tensor([0.0, 3.0])) is y
    np.testing.assert_allclose(y.numpy(), [0.0, 2 * np.log(3.0)], rtol=1e-6)


def test_gradients_as_torch():
    a = wg.tensor([1.0, 0.0, -2.0], requires_grad=True)
    b = wg.tensor([-1.0, -1.0, 1.0], requires_grad=True)
    wg.copysign(a, b).sum().backward()
    ta, tb = torch.tensor([1.0, 0.0, -2.0], requires_grad=True), torch.tensor([-1.0, -1.0, 1.0], requires_grad=True)
    torch.copysign(ta, tb).sum().backward()
    assert a.grad.tolist() == ta.grad.tolist() and b.grad.tolist() == tb.grad.tolist()
    a.grad = b.grad = None
    wg.nextafter(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 1.0] and b.grad.tolist() == [0.0, 0.0, 0.0]
    x = wg.tensor([1.0, 0.0, -2.0], requires_grad=True)
    wg.frexp(x * 3).mantissa.sum().backward()
    tx = torch.tensor([1.0, 0.0, -2.0], requires_grad=True)
    torch.frexp(tx * 3).mantissa.sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()
    with pytest.raises(RuntimeError, match="heaviside"):
        wg.heaviside(x, wg.tensor(0.5)).sum().backward()


CASES = [
    OpCase("copysign", wg.copysign, tref(torch.copysign), [rng.uniform(-3, 3, (4, 5)), rng.uniform(-3, 3, 5)],
           second_order=True),
    OpCase("ldexp", lambda x: wg.ldexp(x, wg.tensor([1, -2, 3], backend=x.device)),
           lambda x: torch.ldexp(torch.from_numpy(x), torch.tensor([1, -2, 3])).numpy(), [rng.uniform(-3, 3, (2, 3))],
           second_order=True),
    OpCase("frexp_mantissa", lambda x: wg.frexp(x)[0], lambda x: torch.frexp(torch.from_numpy(x))[0].numpy(),
           [rng.uniform(-30, 30, (3, 4))]),
]

globals().update(op_tests(CASES))


def test_xlogy_gradients_are_pytorchs_where_input_is_zero(backend):
    """PyTorch: d/dx = xlogy(grad, other) (log(other) at x = 0, masked only where other <= 0), d/dy = x / y."""
    xs, ys = [0.0, 0.0, 0.0, 1.0, -2.0, 2.0, 0.0], [2.0, 0.0, -1.0, 3.0, 0.5, 0.0, 0.25]
    grads = []
    for lib, kw in ((torch, {}), (wg, {"backend": backend})):
        x, y = lib.tensor(xs, requires_grad=True, **kw), lib.tensor(ys, requires_grad=True, **kw)
        value = lib.xlogy(x, y)
        value.sum().backward()
        grads.append([value.tolist(), x.grad.tolist()])
    np.testing.assert_allclose(np.array(grads[1]), np.array(grads[0]), rtol=1e-6)
