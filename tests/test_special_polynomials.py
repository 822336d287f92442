"""torch.special's orthogonal polynomials and spherical_bessel_j0 (webgrad.special_polynomials):
values against PyTorch on every backend (per-element degrees, negative degrees, edge inputs), scalar
degrees, and no gradient (as PyTorch's)."""
import numpy as np
import pytest

import webgrad as wg
from webgrad.special_polynomials import NAMES

torch = pytest.importorskip("torch")

rng = np.random.default_rng(41)
X = np.concatenate([rng.uniform(-1.2, 1.2, 120), [1.0, -1.0, 0.0, 2.0, -3.0, np.nan]]).astype(np.float32)
N = rng.integers(-2, 12, len(X))


@pytest.mark.parametrize("name", NAMES)
def test_polynomials_as_torch(backend, name):
    x = np.abs(X) * 3 if name.startswith("laguerre") else X
    got = getattr(wg.special, name)(wg.tensor(x), wg.tensor(N)).numpy()
    want = getattr(torch.special, name)(torch.from_numpy(x), torch.from_numpy(N)).numpy()
    # PyTorch takes some degrees by cos(n acos x) rather than the recurrence: a few float32 roundings apart
    scale = np.where(np.isnan(want), 1.0, np.maximum(np.abs(want), 1.0))
    np.testing.assert_allclose(got / scale, want / scale, rtol=1e-5, atol=1e-5, equal_nan=True)
    scalar = getattr(wg.special, name)(wg.tensor(x[:5]), 3).numpy()
    np.testing.assert_allclose(scalar, getattr(torch.special, name)(torch.from_numpy(x[:5]), 3).numpy(), rtol=1e-5,
                               atol=1e-5)


def test_hermite_beyond_its_limit_is_nan():
    for name in ("hermite_polynomial_h", "hermite_polynomial_he"):
        got = getattr(wg.special, name)(wg.tensor([0.1, 0.1], dtype=wg.float64, backend="cpu"), wg.tensor([513, 3]))
        want = getattr(torch.special, name)(torch.tensor([0.1, 0.1], dtype=torch.float64), torch.tensor([513, 3]))
        np.testing.assert_allclose(got.numpy(), want.numpy(), equal_nan=True)


def test_spherical_bessel_j0_as_torch(backend):
    x = np.concatenate([rng.uniform(-30, 30, 100), [0.0, 1e-3, -0.49, 0.5, np.inf, -np.inf, np.nan]]).astype(np.float32)
    got = wg.special.spherical_bessel_j0(wg.tensor(x)).numpy()
    want = torch.special.spherical_bessel_j0(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "legendre_polynomial_p", "spherical_bessel_j0"])
def test_not_differentiable_as_torch(name):
    x = wg.tensor([0.3, 0.6], requires_grad=True)
    args = (x,) if name == "spherical_bessel_j0" else (x, 2)
    assert not getattr(wg.special, name)(*args).requires_grad
    assert not getattr(torch.special, name)(*[torch.tensor([0.3, 0.6], requires_grad=True), *args[1:]]).requires_grad


BESSEL = ["modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
          "modified_bessel_i0", "modified_bessel_i1"]


@pytest.mark.parametrize("name", BESSEL)
def test_modified_bessel_as_torch(backend, name):
    x = np.concatenate([rng.uniform(0, 30, 200), [0.0, -1.0, 2.0, 1e-30, 0.5, np.inf, np.nan]]).astype(np.float32)
    got = getattr(wg.special, name)(wg.tensor(x)).numpy()
    want = getattr(torch.special, name)(torch.from_numpy(x)).numpy()
    # float32 roundings apart (PyTorch's near parts in float32 arithmetic, WGSL's exp and log a few ulp off)
    normal = np.abs(want) > 1e-37
    np.testing.assert_allclose(got[normal], want[normal], rtol=2e-6 if backend == "cpu" else 2e-5, equal_nan=True)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert not getattr(wg.special, name)(wg.tensor([1.0], requires_grad=True)).requires_grad
