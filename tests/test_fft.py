"""``webgrad.fft``: torch.fft's real-valued names against PyTorch on every backend (the transforms:
test_fft_transforms.py)."""
import numpy as np
import pytest

import webgrad as wg

torch = pytest.importorskip("torch")

SIZES = [(0, 1.0), (1, 1.0), (5, 1.0), (6, 0.1), (7, 3.3), (8, -2.0)]


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n,d", SIZES)
def test_frequencies_are_torchs(backend, name, n, d):
    got = getattr(wg.fft, name)(n, d)
    want = getattr(torch.fft, name)(n, d).numpy()
    assert got.dtype is wg.float32 and got.device == backend
    np.testing.assert_array_equal(got.numpy(), want)
    if wg.float64 in wg.registry.backend(backend).dtypes:
        wide = getattr(torch.fft, name)(n, d, dtype=torch.float64).numpy()
        np.testing.assert_array_equal(getattr(wg.fft, name)(n, d, dtype=wg.float64).numpy(), wide)


def test_frequency_arguments():
    assert wg.fft.fftfreq(4, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="fftfreq"):
        wg.fft.fftfreq(3, dtype=wg.int64)   # PyTorch: "fftfreq requires a floating point or complex dtype"
    with pytest.raises(TypeError, match="bogus"):
        wg.fft.rfftfreq(3, bogus=1)


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1), [1]])
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts_are_torchs(backend, name, dim):
    x = np.arange(30.0, dtype=np.float32).reshape(5, 6)
    got = getattr(wg.fft, name)(wg.tensor(x), dim)
    np.testing.assert_array_equal(got.numpy(), getattr(torch.fft, name)(torch.tensor(x), dim).numpy())


def test_shift_gradient_and_round_trip(backend):
    x = wg.arange(7.0).reshape(1, 7).requires_grad_()
    y = wg.fft.ifftshift(wg.fft.fftshift(x))
    assert y.tolist() == x.tolist()
    (wg.fft.fftshift(x) * wg.arange(7.0)).sum().backward()
    want = torch.arange(7.0).reshape(1, 7).requires_grad_()
    (torch.fft.fftshift(want) * torch.arange(7.0)).sum().backward()
    assert x.grad.tolist() == want.grad.tolist()
