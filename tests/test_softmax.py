"""softmax and log_softmax as the fused Softmax/LogSoftmax kernels and their fused backward kernels
(SoftmaxGrad, LogSoftmaxGrad, whose own gradients are ops): against PyTorch along every dim, over
shapes, dtypes and special values; finite differences to second order; backends agreeing (rows
long enough for a workgroup per row, and short ones taken a thread per row)."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from opinfo import OpCase, gradcheck, op_tests

torch = pytest.importorskip("torch")
TF = torch.nn.functional
K = wg.kernel_names

rng = np.random.default_rng(7)


def rn(*shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def ref(fn, dim):
    return lambda x: fn(torch.tensor(x), dim).numpy()


def kernel(name, axis):
    return lambda dy, y: wg.run_kernel(name, dy, y, axis=axis)


def softmax_grad_ref(axis):
    return lambda dy, y: y * (dy - (dy * y).sum(axis, keepdims=True))


def log_softmax_grad_ref(axis):
    return lambda dy, y: dy - np.exp(y) * dy.sum(axis, keepdims=True)


CASES = [
    *[OpCase(f"softmax_dim{d}", lambda x, d=d: F.softmax(x, d), ref(TF.softmax, d), [rn(3, 4, 5)], second_order=True,
             id=f"softmax-dim{d}") for d in (0, 1, 2, -1)],
    *[OpCase(f"log_softmax_dim{d}", lambda x, d=d: F.log_softmax(x, d), ref(TF.log_softmax, d), [rn(3, 4, 5)],
             second_order=True, id=f"log_softmax-dim{d}") for d in (0, 1, -1)],
    OpCase("softmax_long_rows", lambda x: F.softmax(x, 1), ref(TF.softmax, 1), [rn(3, 300, 2, scale=4)]),
    OpCase("log_softmax_long_rows", lambda x: F.log_softmax(x, -1), ref(TF.log_softmax, -1), [rn(5, 700, scale=4)]),
    OpCase("softmax_many_short_rows", lambda x: F.softmax(x, 0), ref(TF.softmax, 0), [rn(3, 600)], grad=False),
    OpCase("softmax_1d", lambda x: F.softmax(x, 0), ref(TF.softmax, 0), [rn(9)]),
    OpCase("softmax_0d", lambda x: F.softmax(x, 0), lambda x: np.ones_like(x), [np.array(0.3)]),
    OpCase("log_softmax_0d", lambda x: F.log_softmax(x, -1), lambda x: np.zeros_like(x), [np.array(0.3)]),
    OpCase("softmax_empty", lambda x: F.softmax(x, 1), ref(TF.softmax, 1), [np.zeros((2, 0, 3))]),
    OpCase("softmax_large_values", lambda x: F.softmax(x, -1), ref(TF.softmax, -1), [rn(4, 6, scale=60)]),
    OpCase("softmax_grad", kernel(K.SOFTMAX_GRAD, 1), softmax_grad_ref(1),
           [rn(3, 5), np.abs(rn(3, 5)) / 4], second_order=True),
    OpCase("log_softmax_grad", kernel(K.LOG_SOFTMAX_GRAD, 0), log_softmax_grad_ref(0),
           [rn(4, 3), -np.abs(rn(4, 3))], second_order=True),
    OpCase("softmax_grad_long", kernel(K.SOFTMAX_GRAD, 1), softmax_grad_ref(1), [rn(2, 100), np.abs(rn(2, 100)) / 50]),
]

globals().update(op_tests(CASES))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(1,), (5, 1), (2, 3, 4, 5), (8, 257), (64, 10)])
def test_matches_torch_every_dim(backend, fn, shape):
    x = rn(*shape, scale=3).astype(np.float32)
    for dim in range(-len(shape), len(shape)):
        w = wg.tensor(x, requires_grad=True)
        t = torch.tensor(x, requires_grad=True)
        y, yt = getattr(F, fn)(w, dim), getattr(TF, fn)(t, dim)
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
        dy = rn(*shape).astype(np.float32)
        y.backward(wg.tensor(dy))
        yt.backward(torch.tensor(dy))
        np.testing.assert_allclose(w.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=f"dim {dim}")


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_other_dtypes_on_cpu(fn, dtype):
    if dtype not in {d.name for d in wg.backend("cpu").dtypes}:
        pytest.skip(f"{dtype} needs ml_dtypes on cpu")
    x = rn(4, 30, scale=3).astype(np.float32)
    w = wg.tensor(x, backend="cpu").to(dtype).requires_grad_()
    t = torch.tensor(x).to(getattr(torch, dtype)).requires_grad_()
    y, yt = getattr(F, fn)(w, 1), getattr(TF, fn)(t, 1)
    assert y.dtype.name == dtype
    tol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(y.double().detach().numpy(), yt.double().detach().numpy(), rtol=tol, atol=tol)
    y.sum().backward()
    yt.sum().backward()
    assert w.grad.dtype.name == dtype
    np.testing.assert_allclose(w.grad.double().numpy(), t.grad.double().numpy(), rtol=tol * 4, atol=tol * 4)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_special_values_as_torch(backend, fn):
    inf, nan = float("inf"), float("nan")
    rows = [[-inf, -inf, -inf], [0.0, -inf, 1.0], [inf, 0.0, 1.0], [nan, 0.0, 1.0], [1e30, -1e30, 0.0]]
    got = getattr(F, fn)(wg.tensor(rows), 1).numpy()
    want = getattr(TF, fn)(torch.tensor(rows), 1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)   # NaN where PyTorch gives NaN


def test_dtype_argument_and_integer_input(backend):
    assert F.softmax(wg.tensor([1, 2]), 0).dtype == wg.float32
    x = wg.tensor([[1.0, 2.0]])
    y = F.log_softmax(x, 1, dtype=wg.float32)
    assert y.dtype == wg.float32
    with pytest.raises(IndexError, match="log_softmax"):
        F.log_softmax(x, 2)


def test_one_kernel_each_way():
    """The forward is one Softmax kernel and the backward one SoftmaxGrad (no composed chain)."""
    x = wg.tensor(rn(4, 6), requires_grad=True)
    with wg.profile() as prof:
        F.softmax(x, 1).backward(wg.tensor(rn(4, 6)))
    assert prof.stats[K.SOFTMAX].calls == 1 and prof.stats[K.SOFTMAX_GRAD].calls == 1
    assert {name for name in prof.stats} <= {K.SOFTMAX, K.SOFTMAX_GRAD}


def test_third_order_through_the_backward_kernels():
    weight = wg.tensor([[1.0, -2.0, 0.5]], dtype=wg.float64)
    for fn in (F.softmax, F.log_softmax):
        @wg.enable_grad()          # (the finite differences call it under no_grad)
        def second(x, fn=fn):
            x = x if x.requires_grad else x.detach().requires_grad_()
            (g,) = wg.grad((fn(x, 1) * weight).sum(), x, create_graph=True)
            (h,) = wg.grad((g * g * g).sum(), x, create_graph=True)
            return h
        gradcheck(second, rn(2, 3), atol=1e-4, rtol=1e-3, eps=1e-5, what=f"{fn.__name__} third order")
