"""torch.fft's eighteen transforms against PyTorch: values and dtypes for real, complex and integer
input with n/s, dim and every norm; PyTorch's errors; gradients and node names compared with
torch.autograd and checked by finite differences (float64, through real pairs); the GPU backends'
TypeError (they hold no complex dtypes)."""
import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import gradcheck, gradgradcheck

ONE_DIM = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
TWO_DIM = [n + "2" for n in ONE_DIM]
N_DIM = [n + "n" for n in ONE_DIM]
ALL = ONE_DIM + TWO_DIM + N_DIM
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}
NORMS = [None, "backward", "ortho", "forward"]
RNG = np.random.default_rng(0)
REAL = RNG.standard_normal((3, 4, 6))
COMPLEX = RNG.standard_normal((3, 4, 5)) + 1j * RNG.standard_normal((3, 4, 5))


def _sizes(name):
    """Keyword sets for ``name``: its defaults, longer and shorter signals, other dims."""
    if name in ONE_DIM:
        return [{}, {"n": 9}, {"n": 3}, {"dim": 0}, {"dim": -2, "n": 2}, {"n": 1}]
    if name in TWO_DIM:
        return [{}, {"s": (5, 7)}, {"s": (2, -1)}, {"dim": (0, 2)}, {"dim": (2, 0), "s": (3, 4)}]
    return [{}, {"s": (5, 7)}, {"s": (-1, 2, 3)}, {"dim": (1,)}, {"dim": (2, 0)}, {"s": (4,), "dim": (0,)},
            {"dim": 1}, {"s": 4}, {"s": [4, -1]}]


def _numpy(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _same(w, t, tol):
    assert w.dtype.name == str(t.dtype).split(".")[1], (w.dtype, t.dtype)
    assert tuple(w.shape) == tuple(t.shape)
    np.testing.assert_allclose(_numpy(w), _numpy(t), rtol=tol, atol=tol)


def _inputs(name, dtype):
    data = REAL if name in REAL_ONLY or not dtype.startswith("complex") else COMPLEX
    if dtype == "int64":
        data = np.round(REAL * 3)
    return (wg.tensor(data, dtype=getattr(wg, dtype), device="cpu"),
            torch.tensor(data, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name, dtype", [(n, d) for n in ALL for d in ("float32", "float64", "complex64",
                                                                        "complex128", "int64")
                                         if not (n in REAL_ONLY and d.startswith("complex"))])
def test_values_and_dtypes_are_torchs(name, dtype, norm):
    w, t = _inputs(name, dtype)
    tol = 1e-12 if dtype in ("float64", "complex128") else 2e-5
    for kw in _sizes(name):
        _same(getattr(wg.fft, name)(w, norm=norm, **kw), getattr(torch.fft, name)(t, norm=norm, **kw), tol)


def test_positional_arguments_and_round_trips():
    x = wg.tensor(REAL)
    _same(wg.fft.fft(x, 8, 1, "ortho"), torch.fft.fft(torch.tensor(REAL), 8, 1, "ortho"), 1e-12)
    _same(wg.fft.rfftn(x, (2, 5), (0, 1), "forward"), torch.fft.rfftn(torch.tensor(REAL), (2, 5), (0, 1), "forward"),
          1e-12)
    np.testing.assert_allclose(wg.fft.irfftn(wg.fft.rfftn(x), s=x.shape[-3:]).numpy(), REAL, atol=1e-12)
    np.testing.assert_allclose(wg.fft.ifft2(wg.fft.fft2(wg.tensor(COMPLEX))).numpy(), COMPLEX, atol=1e-12)
    np.testing.assert_allclose(wg.fft.hfft(wg.fft.ihfft(x), n=6).numpy(), REAL, atol=1e-12)


def test_empty_dims_copy_and_bool_input():
    for lib in (wg, torch):
        assert lib.fft.fftn(lib.ones(3), dim=()).tolist() == [1 + 0j] * 3
    w, t = wg.fft.fft(wg.tensor([True, False, True])), torch.fft.fft(torch.tensor([True, False, True]))
    _same(w, t, 1e-6)
    wg.set_default_dtype(wg.float64)
    try:
        assert wg.fft.fft(wg.tensor([1, 2])).dtype is wg.complex128
    finally:
        wg.set_default_dtype(wg.float32)


ERRORS = [
    ("fft", {"n": 0}), ("fft", {"n": -2}), ("fft", {"dim": 3}), ("fft", {"norm": "x"}), ("fft", {"norm": 1}),
    ("fft", {"n": 2.0}), ("rfft", {"complex": True}), ("ihfft2", {"complex": True}), ("irfft", {"n": 0}),
    ("fftn", {"dim": (0, 0)}), ("fftn", {"s": (2,), "dim": (0, 1)}), ("fftn", {"s": (2, 2, 2, 2)}),
    ("fftn", {"s": (0, 2)}), ("fftn", {"dim": (0, 5)}), ("rfftn", {"dim": ()}), ("irfftn", {"dim": ()}),
    ("ihfftn", {"dim": ()}), ("hfftn", {"dim": ()}), ("fft", {"scalar": True}), ("fft2", {"vector": True}),
    ("irfft", {"short": True}), ("fft", {"half": True}), ("rfft2", {"half": True}), ("hfft", {"half": True}),
]


_MAKE = {"complex": lambda lib: lib.ones(3, 4) * 1j, "scalar": lambda lib: lib.tensor(1.0),
         "vector": lambda lib: lib.ones(4), "short": lambda lib: lib.ones(1), "half": lambda lib: lib.ones(3, 4).half()}


def _error(lib, name, spec):
    kw = {k: v for k, v in spec.items() if k not in _MAKE}
    made = [_MAKE[k](lib) for k in spec if k in _MAKE]
    x = made[0] if made else lib.ones(3, 4)
    with pytest.raises(Exception) as info:
        getattr(lib.fft, name)(x, **kw)
    return info


@pytest.mark.parametrize("name, spec", ERRORS, ids=[f"{n}-{'-'.join(k)}" for n, k in ERRORS])
def test_errors_are_torchs(name, spec):
    w, t = _error(wg, name, spec), _error(torch, name, spec)
    assert w.type is t.type, (w.value, t.value)
    assert name in str(w.value), w.value


@pytest.mark.parametrize("name", ALL)
def test_out_and_unknown_keywords_raise_typeerror(name):
    x = wg.ones(3, 4)
    with pytest.raises(TypeError, match="out"):   # out= is nowhere in webgrad (docs/porting.md)
        getattr(wg.fft, name)(x, out=wg.ones(3, 4))
    with pytest.raises(TypeError, match="bogus"):
        getattr(wg.fft, name)(x, bogus=1)


# ---------------------------------------------------------------- gradients


def _loss(lib, y, seed=1):
    """A real loss with random weights on each output element (real and imaginary parts apart)."""
    r = np.random.default_rng(seed)
    if y.is_complex():
        weights = lib.tensor(r.standard_normal(tuple(y.shape) + (2,)), dtype=lib.float64)
        return (lib.view_as_real(y.resolve_conj()) * weights).sum()
    return (y * lib.tensor(r.standard_normal(tuple(y.shape)), dtype=lib.float64)).sum()


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name, data", [(n, d) for n in ALL for d in ("real", "complex")
                                        if not (n in REAL_ONLY and d == "complex")])
def test_gradients_and_node_names_are_torchs(name, data, norm):
    x = REAL if data == "real" else COMPLEX
    for kw in _sizes(name):
        w, t = wg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        yw, yt = getattr(wg.fft, name)(w, norm=norm, **kw), getattr(torch.fft, name)(t, norm=norm, **kw)
        assert yw.grad_fn.name() == yt.grad_fn.name()
        _loss(wg, yw).backward()
        _loss(torch, yt).backward()
        _same(w.grad, t.grad, 1e-10)


def _pairs(fn, complex_input):
    """``fn`` of real arrays: real pairs in and out (view_as_complex / view_as_real) where complex."""
    def f(x):
        y = fn(wg.view_as_complex(x) if complex_input else x)
        return wg.view_as_real(y) if y.is_complex() else y
    return f


FD_CASES = [("fft", {}, True), ("ifft", {"n": 7}, False), ("rfft", {"n": 5}, False), ("rfft", {}, False),
            ("irfft", {}, True), ("irfft", {"n": 7}, True), ("hfft", {"n": 6}, True), ("ihfft", {}, False),
            ("fft2", {"norm": "ortho"}, True), ("rfft2", {"s": (3, 3)}, False), ("irfft2", {"s": (2, 5)}, True),
            ("hfftn", {"norm": "forward"}, True), ("ihfftn", {"dim": (0, 1)}, False), ("fftn", {"dim": (1,)}, False),
            ("irfftn", {"dim": (0,)}, False)]


@pytest.mark.parametrize("name, kw, complex_input", FD_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(FD_CASES)])
def test_gradients_by_finite_differences(name, kw, complex_input):
    data = RNG.standard_normal((3, 4, 2) if complex_input else (3, 4))
    gradcheck(_pairs(lambda x: getattr(wg.fft, name)(x, **kw), complex_input), data, what=name)


@pytest.mark.parametrize("name, kw, complex_input", FD_CASES[:6], ids=[c[0] for c in FD_CASES[:6]])
def test_second_order_by_finite_differences(name, kw, complex_input):
    data = RNG.standard_normal((2, 3, 2) if complex_input else (2, 3))
    gradgradcheck(_pairs(lambda x: getattr(wg.fft, name)(x, **kw), complex_input), data, what=name)


# ---------------------------------------------------------------- backends


@pytest.mark.parametrize("name", ALL)
def test_gpu_backends_refuse_with_typeerror(backend, name):
    x = wg.tensor(REAL, dtype=wg.float32)
    if backend == "cpu":
        _same(getattr(wg.fft, name)(x), getattr(torch.fft, name)(torch.tensor(REAL, dtype=torch.float32)), 2e-5)
        return
    with pytest.raises(TypeError, match="no complex dtypes"):
        getattr(wg.fft, name)(x)


def test_compiled_step_matches_eager():
    w = wg.ones(8, requires_grad=True)

    def step(x):
        y = wg.fft.irfft(wg.fft.rfft(x * w) * 2, n=8) + wg.fft.hfft(wg.fft.ihfft(x * w))
        loss = (y ** 2).sum() + wg.view_as_real(wg.fft.fft2(x.reshape(2, 4) * w[:4])).abs().sum()
        loss.backward()
        return loss

    x = wg.arange(8.0)
    eager = step(x).item(), w.grad.tolist()
    compiled = wg.compile(step)
    for _ in range(3):   # (the trace, then replays)
        w.grad = None
        got = compiled(x).item(), w.grad.tolist()
        np.testing.assert_allclose(got[0], eager[0], rtol=1e-6)
        np.testing.assert_allclose(got[1], eager[1], rtol=1e-6, atol=1e-5)
