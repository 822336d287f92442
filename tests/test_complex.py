"""Complex numbers against PyTorch: dtypes and promotion, creation and printing, the complex ops
and elementwise math on complex tensors, gradients (PyTorch's conjugate convention, compared with
torch.autograd and checked by finite differences through real inputs), the views, and the GPU's
refusal."""
import warnings

import numpy as np
import pytest
import torch

import safetensors.torch

import webgrad as wg
from opinfo import gradcheck, gradgradcheck

DTYPES = ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
Z = [[1 + 2j, -0.5 + 0.25j, 3 - 1j], [0.75 - 2j, -1.5 - 0.5j, 2 + 0.125j]]
W = [[0.5 - 1j, 2 + 1j, -1 + 0.5j], [1.5 + 0.25j, 0.25 - 2j, -0.75 - 1j]]


def _both(data, dtype="complex64", requires_grad=False):
    return (wg.tensor(data, dtype=getattr(wg, dtype), requires_grad=requires_grad),
            torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad))


def _close(w, t, rtol=1e-6, atol=1e-6):
    assert str(w.dtype).split(".")[1] == str(t.dtype).split(".")[1], (w.dtype, t.dtype)
    np.testing.assert_allclose(w.detach().numpy(), t.detach().resolve_conj().numpy(), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- dtypes


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", DTYPES)
def test_promotion_is_pytorchs(a, b):
    want = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert wg.promote_types(getattr(wg, a), getattr(wg, b)).name == str(want).split(".")[1]


@pytest.mark.parametrize("dims", ["int64", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("other", [1j, 2.5, 3, "complex64-0d", "complex128-0d", "float64-0d"])
def test_tensor_with_scalar_or_0d_promotes_as_pytorch(dims, other):
    w, t = wg.ones(3, dtype=getattr(wg, dims)), torch.ones(3, dtype=getattr(torch, dims))
    if isinstance(other, str):
        name = other.split("-")[0]
        wo, to = wg.tensor(1, dtype=getattr(wg, name)), torch.tensor(1, dtype=getattr(torch, name))
    else:
        wo = to = other
    _close(w + wo, t + to)
    _close(wo * w, to * t)


def test_dtype_attributes():
    assert wg.complex64.is_complex and not wg.float32.is_complex and not wg.complex64.is_floating
    assert wg.cfloat is wg.complex64 and wg.cdouble is wg.complex128
    assert wg.complex64.to_real() is wg.float32 and wg.complex128.to_real() is wg.float64
    assert wg.float32.to_real() is wg.float32 and wg.float64.to_complex() is wg.complex128
    assert wg.complex64.itemsize == torch.complex64.itemsize == 8
    assert wg.tensor([1j]).is_complex() and wg.is_complex(wg.tensor([1j])) and not wg.ones(1).is_complex()
    assert not wg.tensor([1j]).is_floating_point()
    assert wg.ones(1).cfloat().dtype is wg.complex64 and wg.ones(1).cdouble().dtype is wg.complex128
    assert wg.tensor([1j]).type() == torch.tensor([1j]).type()


# ---------------------------------------------------------------- creation and printing


@pytest.mark.parametrize("data, dtype", [([1 + 2j], None), (1j, None), ([[1 + 2.5j, 3], [0, -1j]], None),
                                          ([1 + 2j], "complex128"), ([1e-8 + 1j, 1e8], None),
                                          ([0.1 + 1j, -2.25 - 3j, 1000.5], None), ([], "complex64")])
def test_printing_is_pytorchs(data, dtype):
    w = wg.tensor(data, dtype=None if dtype is None else getattr(wg, dtype))
    t = torch.tensor(data, dtype=None if dtype is None else getattr(torch, dtype))
    assert repr(w) == repr(t).replace("torch.", "webgrad."), (repr(w), repr(t))


def test_creation_from_python_and_numpy():
    assert wg.tensor([1 + 2j, 3]).dtype is wg.complex64 and wg.tensor([1 + 2j, 3]).tolist() == [1 + 2j, 3 + 0j]
    assert wg.tensor(np.array([1j])).dtype is wg.complex128
    assert wg.tensor([1, 2], dtype=wg.cfloat).tolist() == [1 + 0j, 2 + 0j]
    assert wg.zeros(2, dtype=wg.complex64).tolist() == [0j, 0j]
    assert wg.tensor(2 + 1j).item() == 2 + 1j


def test_complex_and_polar():
    re, im = _both([[1.0, -2.0, 0.5]], "float32")
    ang, _ = _both([[0.5, 2.0, -1.0]], "float32")
    _close(wg.complex(re, ang), torch.complex(im, torch.tensor([[0.5, 2.0, -1.0]])))
    _close(wg.polar(re.abs(), ang), torch.polar(im.abs(), torch.tensor([[0.5, 2.0, -1.0]])))
    d64 = wg.complex(re.double(), re.double())
    assert d64.dtype is wg.complex128
    with pytest.raises(RuntimeError, match="complex"):
        wg.complex(re, re.double())
    with pytest.raises(RuntimeError, match="polar"):
        wg.polar(wg.tensor([1, 2]), wg.tensor([1, 2]))
    with pytest.raises(TypeError, match="complex"):
        wg.complex([1.0], re)


# ---------------------------------------------------------------- ops against torch

UNARY = ["neg", "exp", "reciprocal", "log", "sqrt", "square", "sin", "cos", "tanh", "abs", "angle", "conj",
         "conj_physical", "sgn", "rsqrt", "tan", "log2", "log10", "log1p", "expm1",
         "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp2", "sinc",   # (ComplexMath)
         "sigmoid"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_unary_values_and_gradients(name, dtype):
    (w, t) = _both(Z, dtype, requires_grad=True)
    wy, ty = getattr(wg, name)(w), getattr(torch, name)(t)
    tol = 2e-6 if dtype == "complex64" else 1e-12
    _close(wy, ty, tol, tol)
    weight = torch.tensor(W, dtype=ty.dtype) if ty.is_complex() else torch.tensor(np.real(W), dtype=ty.dtype)
    wloss = (wg.view_as_real(wy * wg.tensor(weight.numpy()).conj()) if wy.is_complex()
             else wy * wg.tensor(weight.numpy())).sum()
    tloss = (torch.view_as_real(ty * weight.conj()) if ty.is_complex() else ty * weight).sum()
    wloss.backward()
    tloss.backward()
    _close(w.grad, t.grad, tol * 10, tol * 10)


BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b, "rsub": lambda a, b: 2.5 - a * b, "scalar": lambda a, b: (a * 1j + 2) / 3,
          "pow": lambda a, b: a ** b, "pow-scalar": lambda a, b: a ** 2 + b ** 0.5 + 2 ** a + a ** (1 + 1j)}


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("b_dtype", ["complex64", "float32", "float64"])
def test_binary_values_and_gradients(name, b_dtype):
    fn = BINARY[name]
    wa, ta = _both(Z, "complex64", requires_grad=True)
    b_data = W if b_dtype.startswith("complex") else np.real(W).tolist()
    wb, tb = _both(b_data, b_dtype, requires_grad=True)
    wy, ty = fn(wa, wb), fn(ta, tb)
    _close(wy, ty, 2e-6, 2e-6)
    g = torch.tensor(np.array(W) * (1 - 0.5j), dtype=ty.dtype)
    wy.backward(wg.tensor(g.numpy()))
    ty.backward(g)
    _close(wa.grad, ta.grad, 2e-5, 2e-5)
    if tb.grad is not None:
        _close(wb.grad, tb.grad, 2e-5, 2e-5)


COMPOSED = {   # ops composed of real kernels, whose complex forms once dropped the imaginary parts
    "trace": lambda L, z: L.trace(z[:, :2]), "vdot": lambda L, z: L.vdot(z[0], z[1]),
    "cov": lambda L, z: L.cov(z), "trapezoid": lambda L, z: L.trapezoid(z), "gradient": lambda L, z: L.gradient(z)[0],
    "cumulative_trapezoid": lambda L, z: L.cumulative_trapezoid(z), "float_power": lambda L, z: L.float_power(z, 2),
    "float_power-complex": lambda L, z: L.float_power(z, 0.5 + 1j), "inplace-asin": lambda L, z: z.clone().asin_(),
    # the norms and variances of complex tensors: of their magnitudes (real results)
    "norm": lambda L, z: z.norm(), "norm-1": lambda L, z: z.norm(1, dim=1), "norm-3": lambda L, z: z.norm(3),
    "linalg.norm": lambda L, z: L.linalg.norm(z), "vector_norm-inf": lambda L, z: L.linalg.vector_norm(z, float("inf")),
    "matrix_norm-fro": lambda L, z: L.linalg.matrix_norm(z), "matrix_norm-1": lambda L, z: L.linalg.matrix_norm(z, 1),
    "linalg.norm-inf": lambda L, z: L.linalg.norm(z, float("inf")), "dist": lambda L, z: L.dist(z[0], z[1]),
    "var": lambda L, z: z.var(), "var-dim": lambda L, z: z.var(1, correction=0), "std": lambda L, z: z.std(0),
    "var_mean": lambda L, z: L.var_mean(z, 1)[0] + L.var_mean(z, 1)[1],
    "std_mean": lambda L, z: L.std_mean(z, 0, keepdim=True)[0] * L.std_mean(z, 0, keepdim=True)[1],
}


@pytest.mark.parametrize("name", list(COMPOSED))
def test_composed_ops_keep_the_imaginary_parts(name):
    (w, t) = _both(Z, "complex64", requires_grad=True)
    wy, ty = COMPOSED[name](wg, w), COMPOSED[name](torch, t)
    _close(wy, ty, 1e-5, 1e-5)
    wl, tl = [(lib.view_as_real(y) if y.is_complex() else y * lib.arange(1.0, y.numel() + 1).reshape(y.shape)).sum()
              for lib, y in ((wg, wy), (torch, ty))]
    wl.backward()
    tl.backward()
    _close(w.grad, t.grad, 1e-5, 1e-5)


# what PyTorch refuses for complex input (orderings, roundings, ...): refused here too, never computed on a
# real part
REFUSED = {
    "sort": lambda L, z: L.sort(z), "argsort": lambda L, z: L.argsort(z), "msort": lambda L, z: L.msort(z),
    "topk": lambda L, z: L.topk(z, 1), "kthvalue": lambda L, z: L.kthvalue(z, 1), "median": lambda L, z: L.median(z),
    "nanmedian": lambda L, z: L.nanmedian(z), "quantile": lambda L, z: L.quantile(z, 0.5), "mode": lambda L, z: L.mode(z),
    "unique": lambda L, z: L.unique(z), "unique_consecutive": lambda L, z: L.unique_consecutive(z),
    "searchsorted": lambda L, z: L.searchsorted(z, z), "histc": lambda L, z: L.histc(z),
    "isposinf": lambda L, z: L.isposinf(z), "isneginf": lambda L, z: L.isneginf(z), "nansum": lambda L, z: L.nansum(z),
    "trunc": lambda L, z: L.trunc(z), "frac": lambda L, z: L.frac(z), "round": lambda L, z: L.round(z),
    "floor": lambda L, z: L.floor(z), "relu": lambda L, z: L.relu(z), "deg2rad": lambda L, z: L.deg2rad(z),
    "logit": lambda L, z: L.logit(z), "i0": lambda L, z: L.i0(z), "erf": lambda L, z: L.erf(z),
    "softmax": lambda L, z: L.nn.functional.softmax(z, 0), "log_softmax": lambda L, z: L.nn.functional.log_softmax(z, 0),
    "hardshrink": lambda L, z: L.nn.functional.hardshrink(z), "mse_loss": lambda L, z: L.nn.functional.mse_loss(z, z),
    "gelu": lambda L, z: L.nn.functional.gelu(z),
}


def test_in_place_abs_is_refused_as_pytorch():
    for name in ("abs_", "absolute_"):
        with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
            getattr(torch.tensor([1j]), name)()
        with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
            getattr(wg.tensor([1j]), name)()


@pytest.mark.parametrize("name", list(REFUSED))
def test_what_pytorch_refuses_for_complex_is_refused(name):
    (w, t) = _both(Z, "complex64")
    with pytest.raises(RuntimeError):       # (NotImplementedError is one)
        REFUSED[name](torch, t)
    with pytest.raises(RuntimeError, match=f"{name.split('_')[0]}.*complex"):
        REFUSED[name](wg, w)


def test_reductions_and_movement_against_torch():
    (w, t) = _both(Z, "complex64", requires_grad=True)
    pairs = [(w.sum(), t.sum()), (w.sum(0), t.sum(0)), (w.mean(1), t.mean(1)), (w.reshape(3, 2), t.reshape(3, 2)),
             (w.view(-1), t.view(-1)), (w.flatten(), t.flatten()), (w.transpose(0, 1), t.transpose(0, 1)),
             (wg.cat([w, w * 2]), torch.cat([t, t * 2])), (wg.stack([w, w], 1), torch.stack([t, t], 1)),
             (w[1, ::2], t[1, ::2]), (w[:, wg.tensor([2, 0])], t[:, torch.tensor([2, 0])]), (w.t() @ w, t.t() @ t),
             (w.mH, t.mH), (w.H, t.H), (w.adjoint(), t.adjoint()), (wg.adjoint(w * 2), torch.adjoint(t * 2))]
    for wy, ty in pairs:
        _close(wy, ty, 2e-6, 2e-6)
    wl = sum((wg.view_as_real(wy) * k).sum() for k, (wy, _) in enumerate(pairs, 1))
    tl = sum((torch.view_as_real(ty.resolve_conj()) * k).sum() for k, (_, ty) in enumerate(pairs, 1))
    wl.backward()
    tl.backward()
    _close(w.grad, t.grad, 1e-5, 1e-5)


@pytest.mark.parametrize("name", ["mH", "H", "adjoint", "mT"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 2, 3)])
def test_conjugate_transposes_take_the_shapes_pytorch_takes(name, shape):
    def apply(lib, x):
        return getattr(x, name)() if name == "adjoint" else getattr(x, name)
    t = torch.ones(shape, dtype=torch.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # PyTorch warns that H of a 0-d tensor is deprecated
        try:
            want = apply(torch, t)
        except RuntimeError:
            with pytest.raises(RuntimeError, match=name):
                apply(wg, wg.ones(shape, dtype=wg.complex64))
            return
    got = apply(wg, wg.ones(shape, dtype=wg.complex64))
    assert tuple(got.shape) == tuple(want.shape)


def test_real_imag_and_views_gradients():
    (w, t) = _both(Z, "complex128", requires_grad=True)
    wl = (w.real * 2 - w.imag * w.real + wg.angle(w) + wg.view_as_real(w.exp()).sum(-1)).sum()
    tl = (t.real * 2 - t.imag * t.real + torch.angle(t) + torch.view_as_real(t.exp()).sum(-1)).sum()
    wl.backward()
    tl.backward()
    _close(w.grad, t.grad, 1e-12, 1e-12)


def test_type_as_and_float_warn_as_pytorch():
    z = wg.tensor([1 + 2j])
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert z.float().tolist() == [1.0]
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert z.type_as(wg.zeros(1, dtype=wg.float64)).dtype is wg.float64
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert wg.ones(1).type_as(z).dtype is wg.complex64
        x = wg.ones(1, requires_grad=True)
        (x * z).abs().sum().backward()   # the gradient's cast back to float32 does not warn
    assert x.grad.tolist() == pytest.approx([5 ** 0.5])


def test_complex_leaf_requires_grad_and_cast_gradients():
    z = wg.tensor([1 + 2j], requires_grad=True)
    with pytest.warns(UserWarning, match="imaginary"):
        z.float().sum().backward()
    assert z.grad.tolist() == [1 + 0j]


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match="imag"):
        wg.ones(2).imag
    with pytest.raises(RuntimeError, match="view_as_real"):
        wg.view_as_real(wg.ones(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        wg.view_as_complex(wg.ones(2, 3))
    with pytest.raises(RuntimeError, match="view_as_complex"):
        wg.view_as_complex(wg.ones(2, 2, dtype=wg.int64))
    z, t = wg.tensor([1j]), torch.tensor([1j])
    for name, error in [("relu", NotImplementedError), ("floor", NotImplementedError), ("lt", NotImplementedError),
                        ("floor_divide", NotImplementedError), ("maximum", RuntimeError)]:   # refused by torch too
        args = () if name in ("relu", "floor") else (t,)
        with pytest.raises(error, match="not implemented for complex"):
            getattr(wg, name)(z, *[z for _ in args])
        with pytest.raises(error):
            getattr(torch, name)(t, *args)
    for name, error in [("amax", NotImplementedError), ("argmax", RuntimeError)]:   # refused by torch too
        with pytest.raises(error, match="not implemented for complex"):
            getattr(wg, name)(z)
        with pytest.raises(error):
            getattr(torch, name)(t)
    for not_yet in (wg.prod, wg.logsumexp):   # PyTorch has them for complex input

        with pytest.raises(NotImplementedError, match="not implemented for complex"):
            not_yet(z)
    assert (z == z).tolist() == [True] and (z != 1j).tolist() == [False]
    assert wg.ones(2).real is not None and wg.real(wg.ones(2)).tolist() == [1.0, 1.0]
    assert not wg.is_conj(wg.tensor([1j]).conj())


# ---------------------------------------------------------------- finite differences (real inputs, float64, cpu)

RNG = np.random.default_rng(0)
PAIRS = RNG.standard_normal((3, 2, 2))


def _rotary(x, a):
    return wg.view_as_real(wg.view_as_complex(x) * wg.polar(wg.ones_like(a), a)).flatten(-2)


FD = {
    "rotary": (_rotary, PAIRS, RNG.standard_normal((3, 2))),
    "complex-mul-div": (lambda x, y: wg.view_as_real(wg.view_as_complex(x) * wg.view_as_complex(y)
                                                     / wg.complex(y[..., 1] + 3, x[..., 0])), PAIRS, PAIRS[::-1] + 0.5),
    "abs-angle": (lambda a, b: wg.stack([wg.complex(a, b).abs(), wg.complex(a, b).angle()]), PAIRS[0] + 0.1,
                  PAIRS[1] - 0.2),
    "exp-conj-real-imag": (lambda x: wg.stack([(wg.view_as_complex(x).exp().conj() * 1j).real,
                                               wg.view_as_complex(x).exp().imag]), PAIRS),
    "pow": (lambda x, y: wg.view_as_real(wg.view_as_complex(x) ** wg.view_as_complex(y) + wg.view_as_complex(x) ** 3),
            PAIRS, PAIRS[::-1] * 0.5),
    "complex-math": (lambda x: wg.view_as_real(wg.stack([f(wg.view_as_complex(x)) for f in (
        wg.sinh, wg.cosh, wg.asin, wg.acos, wg.atan, wg.asinh, wg.acosh, wg.atanh, wg.exp2, wg.sinc)])), PAIRS),
    "norms-variances": (lambda x: wg.stack([wg.view_as_complex(x).norm(), wg.view_as_complex(x).var(),
                                            wg.linalg.vector_norm(wg.view_as_complex(x), 3),
                                            wg.view_as_complex(x).std(0).sum()]), PAIRS),
    "sum-mean-cat": (lambda x: wg.view_as_real(wg.cat([wg.view_as_complex(x).sum(0, keepdim=True),
                                                       wg.view_as_complex(x).mean(1)[None]], 1)), PAIRS),
}


@pytest.mark.parametrize("name", list(FD))
def test_gradients_by_finite_differences(name):
    fn, *arrays = FD[name]
    gradcheck(fn, *arrays, what=name)


@pytest.mark.parametrize("name", ["rotary", "abs-angle", "pow", "complex-math"])
def test_second_order_by_finite_differences(name):
    fn, *arrays = FD[name]
    gradgradcheck(fn, *arrays, what=name)


# ---------------------------------------------------------------- views


def test_view_as_real_and_complex_share_storage():
    z = wg.tensor([1 + 2j, 3j, 5 + 0j])
    r = wg.view_as_real(z)
    r.mul_(2)
    assert z.tolist() == [2 + 4j, 6j, 10 + 0j]
    z.add_(1)
    assert r.tolist() == [[3.0, 4.0], [1.0, 6.0], [11.0, 0.0]]
    r[:, 1].zero_()   # a view of the view writes through to z
    assert z.tolist() == [3 + 0j, 1 + 0j, 11 + 0j]
    x = wg.zeros(3, 2)
    c = wg.view_as_complex(x)
    c.add_(1j)
    assert x.tolist() == [[0.0, 1.0]] * 3
    x[0, 0] = 5.0
    assert c.tolist() == [5 + 1j, 1j, 1j]


def test_real_and_imag_share_storage():
    (w, t) = _both(Z, "complex64")
    for target in (w, t):
        target.real.fill_(7)
        target.imag[1:].mul_(-1)
        target[0, 0] = 0j
    _close(w, t)
    wr, tr = w.real, t.real
    w.mul_(1j)
    t.mul_(1j)
    _close(wr, tr)


def test_real_and_imag_are_assignable():
    for lib in (wg, torch):
        z, x = lib.tensor([1 + 2j]), lib.ones(2)
        z.real = lib.tensor([5.0])
        z.imag = lib.tensor([7.0])
        x.real = lib.tensor([3.0, 4.0])
        assert z.tolist() == [5 + 7j] and x.tolist() == [3.0, 4.0]
        with pytest.raises(RuntimeError, match="imag:? is not implemented"):
            x.imag = lib.ones(2)


def test_writes_through_views_are_differentiable():
    (w, t) = _both(Z, "complex64", requires_grad=True)
    outs = []
    for x, vr in ((w, wg.view_as_real), (t, torch.view_as_real)):
        y = x * 2
        vr(y)[..., 0].mul_(3)
        outs.append(vr(y).pow(2).sum())
    outs[0].backward()
    outs[1].backward()
    _close(w.grad, t.grad, 1e-5, 1e-5)


# ---------------------------------------------------------------- backends


def test_gpu_backends_refuse_complex(backend):
    if backend == "cpu":
        assert (wg.complex(wg.ones(2), wg.ones(2)) * 1j).tolist() == [-1 + 1j, -1 + 1j]
        return
    x = wg.ones(2, 2)
    for make in (lambda: wg.tensor([1j]), lambda: x.to(wg.complex64), lambda: x * 1j,
                 lambda: wg.view_as_complex(x), lambda: wg.polar(x, x),
                 lambda: wg.tensor([1j], device="cpu").to(backend)):
        with pytest.raises(TypeError, match="no complex dtypes"):
            make()
    from webgrad import kernel_names as K
    from webgrad.engine import run_kernel
    for name, attrs in ((K.REAL, {}), (K.IMAG, {}), (K.CONJ, {}), (K.COMPLEX_MATH, {"fn": "sinh"})):
        with pytest.raises(TypeError, match=f"{name}.*no complex dtypes"):
            run_kernel(name, x, **attrs)


def test_node_names_are_pytorchs():
    names = []
    for lib in (wg, torch):
        z = lib.tensor([1 + 2j], requires_grad=True)
        x = lib.ones(1, 2, requires_grad=True)
        outs = [z.angle(), lib.polar(x[0, :1], x[0, 1:]), lib.view_as_real(z), lib.view_as_complex(x), z.real, z.imag,
                z.conj(), lib.complex(x[0, :1], x[0, 1:]), z.sgn(), z.conj_physical(), z.abs(), z * z, z.exp()]
        names.append([o.grad_fn.name() for o in outs])
    assert names[0] == names[1]


def test_complex64_files_go_both_ways_with_safetensors(tmp_path):
    (w, t) = _both(Z, "complex64")
    wg.save({"z": w, "r": w.real}, tmp_path / "w.safetensors")
    got = safetensors.torch.load_file(tmp_path / "w.safetensors")
    assert torch.equal(got["z"], t) and torch.equal(got["r"], t.real)
    safetensors.torch.save_file({"t": t * 1j}, tmp_path / "t.safetensors")
    _close(wg.load(tmp_path / "t.safetensors")["t"], t * 1j, 0, 0)
    with pytest.raises(TypeError, match="cannot store dtype complex128"):   # (safetensors has no C128)
        wg.save({"z": w.cdouble()}, tmp_path / "d.safetensors")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [3, 40])   # (PyTorch's normal: one value at a time below 16, in blocks from 16)
def test_random_complex_values_are_pytorchs(dtype, n):
    draws = {"randn": lambda L: L.randn(n, dtype=getattr(L, dtype)),
             "rand": lambda L: L.rand(n, 2, dtype=getattr(L, dtype)),
             "normal_": lambda L: L.empty(n, dtype=getattr(L, dtype)).normal_(1.5, 2.0),
             "uniform_": lambda L: L.empty(n, dtype=getattr(L, dtype)).uniform_(-1, 3),
             "randn_like": lambda L: L.randn_like(L.zeros(n, dtype=getattr(L, dtype)))}
    for name, draw in draws.items():
        wg.manual_seed(7)
        torch.manual_seed(7)
        w, t = draw(wg), draw(torch)
        assert w.dtype == getattr(wg, dtype), name
        np.testing.assert_array_equal(w.numpy(), t.numpy(), err_msg=name)


def test_random_complex_draws_are_refused_on_the_gpu(backend):
    if backend == "cpu":
        return
    with pytest.raises(TypeError, match="no complex dtypes"):
        wg.randn(3, dtype=wg.complex64, backend=backend)


def test_complex_parameters_are_computed_as_plain_tensors():
    z, tz = wg.nn.Parameter(wg.tensor(Z)), torch.nn.Parameter(torch.tensor(Z))
    for name in ("exp", "asin", "sigmoid"):
        _close(getattr(wg, name)(z), getattr(torch, name)(tz))
    with pytest.raises(RuntimeError, match="In-place abs"):
        wg.nn.Parameter(wg.tensor([1j]), requires_grad=False).abs_()
