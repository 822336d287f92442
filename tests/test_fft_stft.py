"""torch.stft/istft (and the Tensor methods) against PyTorch: values, shapes and gradients for real and
complex signals, batched or not, across windows, hops, centring and pad modes, one- and two-sided,
normalized; PyTorch's errors and warnings; finite differences through real pairs; the GPU's TypeError."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import gradcheck

RNG = np.random.default_rng(0)
SIGNAL = RNG.standard_normal((2, 40))
SIGNALS = {"batch": SIGNAL, "one": SIGNAL[0], "complex": SIGNAL + 1j * SIGNAL[::-1]}
CASES = [
    {"n_fft": 8},
    {"n_fft": 8, "hop_length": 3, "win_length": 6, "window": 6},
    {"n_fft": 16, "center": False, "window": 16, "hop_length": 4},
    {"n_fft": 8, "pad_mode": "constant", "normalized": True, "window": 8},
    {"n_fft": 8, "onesided": False, "window": 8},
    {"n_fft": 9, "hop_length": 2, "window": 9, "pad_mode": "replicate"},
    {"n_fft": 8, "win_length": 5, "hop_length": 2, "center": False, "align_to_window": True, "window": 5},
    {"n_fft": 8, "pad_mode": "circular", "hop_length": 8},
]


def _call(lib, fn, x, case, **extra):
    case = dict(case, **extra)
    size = case.pop("window", None)
    window = None if size is None else lib.hann_window(size, dtype=lib.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (the missing window's warning: test_warnings_are_torchs)
        return getattr(lib, fn)(x, window=window, **case)


def _numpy(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _same(w, t, tol=1e-10):
    assert w.dtype.name == str(t.dtype).split(".")[1] and tuple(w.shape) == tuple(t.shape)
    np.testing.assert_allclose(_numpy(w), _numpy(t), rtol=tol, atol=tol)


def _real_loss(y, power=2):
    return ((y.real ** power).sum() + (y.imag ** power).sum()) if y.is_complex() else (y ** power).sum()


@pytest.mark.parametrize("signal", list(SIGNALS))
@pytest.mark.parametrize("case", range(len(CASES)))
def test_stft_values_and_gradients_are_torchs(signal, case):
    case_ = CASES[case]
    data = SIGNALS[signal]
    w, t = wg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    yw, yt = _call(wg, "stft", w, case_, return_complex=True), _call(torch, "stft", t, case_, return_complex=True)
    _same(yw, yt)
    _real_loss(yw).backward()
    _real_loss(yt).backward()
    _same(w.grad, t.grad)


ISTFT = [dict(c, length=length) for c in CASES[:6] for length in (None, 40, 45)
         if c.get("center", True)] + [{"n_fft": 8, "center": False, "hop_length": 2, "length": None}]


@pytest.mark.parametrize("signal", list(SIGNALS))
@pytest.mark.parametrize("case", range(len(ISTFT)))
def test_istft_values_and_gradients_are_torchs(signal, case):
    spec = {k: v for k, v in ISTFT[case].items() if k not in ("pad_mode", "length")}
    data = SIGNALS[signal]
    s = _call(torch, "stft", torch.tensor(data), spec, return_complex=True)
    w, t = wg.tensor(s.numpy(), requires_grad=True), s.clone().requires_grad_()
    extra = {"length": ISTFT[case]["length"], "return_complex": signal == "complex"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (a length past the signal's: test_warnings_are_torchs)
        try:
            yt = _call(torch, "istft", t, spec, **extra)
        except RuntimeError as e:   # (a window whose overlap-add is 0 somewhere: PyTorch refuses)
            assert "overlap add min" in str(e)
            with pytest.raises(RuntimeError, match="istft: window overlap add min"):
                _call(wg, "istft", w, spec, **extra)
            return
        yw = _call(wg, "istft", w, spec, **extra)
    _same(yw, yt)
    if ISTFT[case]["length"] is None and signal != "complex":
        kept = yw.shape[-1]   # (without length=, the frames may stop short of the end)
        np.testing.assert_allclose(yw.detach().numpy(), data[..., :kept], atol=1e-10)   # the round trip
    _real_loss(yw, 3).backward()
    _real_loss(yt, 3).backward()
    _same(w.grad, t.grad)


def test_methods_float32_and_return_complex_false():
    x = wg.tensor(SIGNAL, dtype=wg.float32)
    t = torch.tensor(SIGNAL, dtype=torch.float32)
    window_w, window_t = wg.hann_window(8), torch.hann_window(8)
    sw, st = x.stft(8, window=window_w, return_complex=True), t.stft(8, window=window_t, return_complex=True)
    _same(sw, st, 1e-5)
    _same(sw.istft(8, window=window_w), st.istft(8, window=window_t), 1e-5)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        old = wg.stft(x, 8, window=window_w, return_complex=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(old, torch.stft(t, 8, window=window_t, return_complex=False), 1e-5)


def test_warnings_are_torchs():
    with pytest.warns(UserWarning, match="window was not provided"):
        wg.stft(wg.ones(16), 8, return_complex=True)
    s = wg.stft(wg.arange(16.0), 8, window=wg.ones(8), return_complex=True)
    with pytest.warns(UserWarning, match="padded with zeros"):   # (PyTorch's warns once a process)
        y = wg.istft(s, 8, window=wg.ones(8), length=40)
    st = torch.stft(torch.arange(16.0), 8, window=torch.ones(8), return_complex=True)
    _same(y, torch.istft(st, 8, window=torch.ones(8), length=40), 1e-5)
    np.testing.assert_allclose(y[:16].numpy(), np.arange(16.0), atol=1e-5)   # the signal, then its reflection,
    assert y[20:].abs().max().item() == 0                                       # then zeros: 24 samples less 4


def _stft_error(lib, spec):
    spec = dict(spec)
    x = {"int": lib.ones(16, dtype=lib.int64), "half": lib.ones(16).half(), "3d": lib.ones(1, 1, 16),
         "short": lib.ones(4)}.get(spec.pop("input", None), lib.ones(16))
    if "window" in spec:
        spec["window"] = lib.ones(spec["window"])
    with pytest.raises(Exception) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.stft(x, **spec)
    return info


STFT_ERRORS = [{"n_fft": 8}, {"n_fft": 8, "return_complex": True, "input": "int"},
               {"n_fft": 8, "return_complex": True, "input": "3d", "center": False},
               {"n_fft": 32, "return_complex": True, "center": False},
               {"n_fft": 8, "return_complex": True, "hop_length": 0},
               {"n_fft": 8, "return_complex": True, "win_length": 9}, {"n_fft": 8, "return_complex": True, "window": 7},
               {"n_fft": 8, "return_complex": True, "align_to_window": True},
               {"n_fft": 8, "return_complex": True, "input": "short"},
               {"n_fft": 8, "return_complex": True, "input": "half", "center": False}]


@pytest.mark.parametrize("spec", STFT_ERRORS, ids=[str(i) for i in range(len(STFT_ERRORS))])
def test_stft_errors_are_torchs(spec):
    w, t = _stft_error(wg, spec), _stft_error(torch, spec)
    assert w.type is t.type, (w.value, t.value)
    assert "stft" in str(w.value)


def _istft_error(lib, spec):
    spec = dict(spec)
    z = lib.stft(lib.ones(2, 16), 8, window=lib.ones(8), return_complex=True)
    x = {"real": lib.ones(5, 3), "empty": lib.ones(5, 0, dtype=lib.complex64), "4d": z[None, None],
         "complex": z[0] * 1j}.get(spec.pop("input", None), z)
    spec["window"] = lib.ones(spec.pop("window", 8))
    with pytest.raises(Exception) as info:
        lib.istft(x, **spec)
    return info


ISTFT_ERRORS = [{"n_fft": 8, "input": "real"}, {"n_fft": 8, "input": "empty"}, {"n_fft": 8, "input": "4d"},
                {"n_fft": 10}, {"n_fft": 8, "onesided": False}, {"n_fft": 8, "hop_length": 9},
                {"n_fft": 8, "win_length": 9, "window": 9}, {"n_fft": 8, "window": 7},
                {"n_fft": 8, "return_complex": True}, {"n_fft": 8, "window": 8, "hop_length": 8, "win_length": 4}]


@pytest.mark.parametrize("spec", ISTFT_ERRORS, ids=[str(i) for i in range(len(ISTFT_ERRORS))])
def test_istft_errors_are_torchs(spec):
    w, t = _istft_error(wg, spec), _istft_error(torch, spec)
    assert w.type is t.type, (w.value, t.value)
    assert "istft" in str(w.value)


def test_gradients_by_finite_differences():
    window = RNG.random(6) + 0.5
    gradcheck(lambda x, win: wg.view_as_real(wg.stft(x, 8, 3, 6, window=win, return_complex=True)),
              RNG.standard_normal((2, 20)), window, what="stft")

    def round_trip(pairs):
        s = wg.view_as_complex(pairs)
        return wg.istft(s, 8, hop_length=2, window=wg.hann_window(8, dtype=wg.float64), length=14)
    spec = torch.view_as_real(torch.stft(torch.tensor(RNG.standard_normal(14)), 8, hop_length=2,
                                         window=torch.hann_window(8, dtype=torch.float64), return_complex=True))
    gradcheck(round_trip, spec.numpy(), what="istft")


def test_gpu_backends_refuse_with_typeerror(backend):
    x = wg.tensor(SIGNAL, dtype=wg.float32)
    window = wg.hann_window(8)
    if backend == "cpu":
        want = torch.stft(torch.tensor(SIGNAL, dtype=torch.float32), 8, window=torch.hann_window(8),
                          return_complex=True)
        _same(wg.stft(x, 8, window=window, return_complex=True), want, 1e-5)
        return
    with pytest.raises(TypeError, match="no complex dtypes"):
        wg.stft(x, 8, window=window, return_complex=True)
    with pytest.raises(RuntimeError, match="complex-valued input"):   # (no complex tensor can be on the GPU)
        wg.istft(x, 8, window=window)
