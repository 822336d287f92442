"""webgrad.autograd.gradcheck / gradgradcheck against torch's: the same verdict on right and wrong
backwards, the same errors and warnings, on every backend (float64 where the backend holds it, else
float32 with wider steps and tolerances); and custom Functions that save a returned output."""
import sys
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg
from backends_under_test import FLOAT64_BACKENDS

torch_gradcheck = sys.modules["torch.autograd.gradcheck"]
X = np.array([[0.3, -0.8, 1.2], [0.5, 0.9, -0.4]])


def settings(backend):
    """(dtype name, tolerances) a backend can check at."""
    if backend in FLOAT64_BACKENDS:
        return "float64", {}
    return "float32", {"eps": 1e-2, "atol": 1e-2, "rtol": 1e-2}


def inputs(lib, dtype, device=None):
    kw = {"device": device} if device else {}
    return (lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True, **kw),
            lib.tensor(X[0] * 2, dtype=getattr(lib, dtype), requires_grad=True, **kw))


def make_functions(lib):
    """Functions of (x, y, scale): smooth ones with right backwards, and two with wrong ones."""
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x * x * scale

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 2 * x * ctx.scale, None

    class WrongSquare(Square):
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x * ctx.scale, None   # misses the 2

    class Sinh(lib.autograd.Function):   # returns intermediates and saves them, as PyTorch's tutorial
        @staticmethod
        def forward(ctx, x):
            ex, enx = lib.exp(x), lib.exp(-x)
            ctx.save_for_backward(ex, enx)
            return (ex - enx) / 2, ex, enx

        @staticmethod
        def backward(ctx, g, g_ex, g_enx):
            ex, enx = ctx.saved_tensors
            return g * (ex + enx) / 2 + g_ex * ex - g_enx * enx

    class CubeGrad(lib.autograd.Function):   # the backward of x**3 as a function, with a wrong backward
        @staticmethod
        def forward(ctx, g, x):
            ctx.save_for_backward(g, x)
            return g * 3 * x ** 2

        @staticmethod
        def backward(ctx, gg):
            g, x = ctx.saved_tensors
            return gg * 3 * x ** 2, gg * g * 5 * x   # 6 * x is right

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return CubeGrad.apply(g, x)

    return {
        "wrong_double": lambda x, y: Cube.apply(x) * y,
        "composite": lambda x, y: (x.tanh() * y).sum(-1) + (x @ y.unsqueeze(-1)).squeeze(-1),
        "two_outputs": lambda x, y: (x.exp() * y, (x * y).sigmoid().mean()),
        "function": lambda x, y: Square.apply(x, 3.0) + y,
        "sinh_outputs": lambda x, y: Sinh.apply(x * y),
        "sinh_first": lambda x, y: Sinh.apply(x + y)[0],
        "wrong_function": lambda x, y: WrongSquare.apply(x, 3.0) + y,
        "detached_factor": lambda x, y: x.detach() * x + y,
    }


@pytest.mark.parametrize("name", ["wrong_double", "composite", "two_outputs", "function", "sinh_outputs", "sinh_first",
                                  "wrong_function", "detached_factor"])
@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
def test_verdict_as_torch(backend, name, check):
    dtype, tol = settings(backend)
    if dtype == "float32" and check == "gradgradcheck" and name not in ("wrong_function", "detached_factor"):
        tol = {"eps": 1e-2, "atol": 5e-2, "rtol": 5e-2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # float32: "not double precision", from both
        want = getattr(torch.autograd, check)(make_functions(torch)[name], inputs(torch, dtype),
                                              raise_exception=False, **tol)
        got = getattr(wg.autograd, check)(make_functions(wg)[name], inputs(wg, dtype, backend),
                                          raise_exception=False, **tol)
    assert got is want
    wrong = {"gradcheck": ("wrong_function", "detached_factor"), "gradgradcheck": ("wrong_double", "detached_factor")}[check]
    assert want is (name not in wrong)


def test_mismatch_raises_gradcheck_error(backend):
    dtype, tol = settings(backend)
    with pytest.raises(torch_gradcheck.GradcheckError):
        torch.autograd.gradcheck(make_functions(torch)["wrong_function"], inputs(torch, "float64"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(sys.modules["webgrad.autograd.gradcheck"].GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
            wg.autograd.gradcheck(make_functions(wg)["wrong_function"], inputs(wg, dtype, backend), **tol)
    assert issubclass(sys.modules["webgrad.autograd.gradcheck"].GradcheckError, RuntimeError)


def test_errors_and_warnings_as_torch(backend):
    for lib, device in ((torch, None), (wg, backend)):
        kw = {"device": device} if device else {}
        with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
            lib.autograd.gradcheck(lambda t: t * 2, lib.ones(2, **kw))
        with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
            lib.autograd.gradcheck(lambda t: t * 2, lib.ones(2, requires_grad=True, **kw), eps=1e-2, atol=1e-2)


def test_checks_webgrad_cannot_make_raise():
    x = wg.ones(2, dtype=wg.float64, requires_grad=True)
    for option in ("check_forward_ad", "check_batched_forward_grad"):   # (check_batched_grad holds by construction)
        with pytest.raises(NotImplementedError, match=f"forward-mode.*leave {option}=False"):
            wg.autograd.gradcheck(lambda t: t * 2, x, **{option: True})
    with pytest.raises(NotImplementedError, match="gradgradcheck: .*check_fwd_over_rev=False"):
        wg.autograd.gradgradcheck(lambda t: t * 2, x, check_fwd_over_rev=True)
    with pytest.raises(TypeError, match="bogus"):
        wg.autograd.gradcheck(lambda t: t * 2, x, bogus=1)


def test_gradgradcheck_with_given_grad_outputs():
    x = wg.tensor([0.2, 0.4], dtype=wg.float64, requires_grad=True)
    go = wg.tensor([1.0, -2.0], dtype=wg.float64, requires_grad=True)
    assert wg.autograd.gradgradcheck(lambda t: t.sin() * t, x, go)
    assert wg.autograd.gradgradcheck(lambda t: t.sin() * t, (x,), (go,), check_rev_over_rev=False)


def test_function_saves_a_returned_multi_element_output(backend):
    """save_for_backward of a tensor forward also returns (several elements): its output alias is kept."""
    class Exp(wg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = wg.exp(x)
            ctx.save_for_backward(y)
            return y, y * 2

        @staticmethod
        def backward(ctx, g, g2):
            y, = ctx.saved_tensors
            return (g + 2 * g2) * y

    x = wg.tensor([0.1, 0.2, 0.3], requires_grad=True)
    a, b = Exp.apply(x)
    (a.sum() + b.sum()).backward()
    np.testing.assert_allclose(x.grad.tolist(), 3 * np.exp([0.1, 0.2, 0.3]), rtol=1e-6)
