"""cpu Gelu and GeluGrad, both forms: exact (x Phi(x), Phi the normal distribution function) and tanh.

Phi(x) = (1 + erf(x / sqrt 2)) / 2 takes, in float64, erf.py's erf (within 1 ulp); in float32 (and
half precision, computed in float32 as PyTorch does) one formula over the whole line,
erf(z) ~ tanh(z p(z^2)) with p of degree 6 (``tests/erf_fit.py``'s ``tanh_form``): ~20 passes and no
branches, where erf.py's pieces take ~30 and gather the elements of each. Its error as Phi's is
below 1e-7 absolute, as PyTorch's own (its float32 1 + erf rounds to 6e-8). Each kernel runs chunk
by chunk (``erf.by_chunks``), so the passes over a chunk stay in the cache."""
import math

import numpy as np

from webgrad import kernel_names as K

from .elementwise import _quiet
from .erf import by_chunks, erf_into, horner
from .registry import cpu_kernel

_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_BETA, _KAPPA = math.sqrt(2 / math.pi), 0.044715      # the tanh form: tanh(beta * (x + kappa * x^3))
# erf(z) ~ tanh(z p(z^2)), p highest power first, fitted on |z| <= 4 (erf is +-1 in float32 beyond 3.92);
# z is clipped at 4.5, where z p(z^2) has risen monotonically to 16 and tanh gives +-1 exactly (so
# Phi is 0 far left: gelu(-inf) is NaN and gelu(-1e38) -0.0, as PyTorch's)
_ERF_BY_TANH = (
    1.5899531930290456e-07,
    -5.986267910861655e-06,
    8.971587973600421e-05,
    -0.0006257276404065315,
    -0.00018437517655608068,
    0.1027654780846265,
    1.128379705798004,
)
_ERF_BY_TANH_BOUND = 4.5


def _cdf_into(x, out):
    """out = Phi(x) = (1 + erf(x / sqrt 2)) / 2."""
    z = x * _SQRT1_2
    if x.dtype == np.float64:
        erf_into(z, out)
    else:
        np.clip(z, -_ERF_BY_TANH_BOUND, _ERF_BY_TANH_BOUND, out=z)
        horner(_ERF_BY_TANH, z * z, out)
        out *= z
        np.tanh(out, out=out)
    out += 1
    out *= 0.5
    return out


def _exact(x, out):
    _cdf_into(x, out)
    out *= x


def _exact_grad(x, dy, out):
    """dy * (Phi(x) + x phi(x))."""
    _cdf_into(x, out)
    pdf = x * x
    pdf *= -0.5
    np.exp(pdf, out=pdf)
    pdf *= x
    pdf *= _INV_SQRT_2PI
    out += pdf
    out *= dy


def _tanh_inner(x):
    """tanh(beta * (x + kappa x^3))."""
    t = x * x
    t *= _KAPPA
    t += 1
    t *= x
    t *= _BETA
    return np.tanh(t, out=t)


def _tanh(x, out):
    np.add(_tanh_inner(x), 1, out=out)
    out *= 0.5                        # before x: 2 x would overflow near the largest float
    out *= x


def _tanh_grad(x, dy, out):
    """dy * (0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2)), t the tanh above (PyTorch's formula)."""
    t = _tanh_inner(x)
    slope = x * x
    slope *= 3 * _KAPPA
    slope += 1
    slope *= _BETA * 0.5
    slope *= x
    np.multiply(t, t, out=out)
    np.subtract(1, out, out=out)
    out *= slope
    t += 1
    t *= 0.5
    out += t
    out *= dy


_FORMS = {"none": (_exact, _exact_grad), "tanh": (_tanh, _tanh_grad)}


def _form(approximate, which):
    try:
        return _FORMS[approximate][which]
    except KeyError:
        kernel = (K.GELU, K.GELU_GRAD)[which]
        raise ValueError(f"{kernel}: approximate must be 'none' or 'tanh', got {approximate!r}") from None


@cpu_kernel(K.GELU)
@_quiet
def gelu(x, *, approximate):
    """x Phi(x), or its tanh approximation."""
    return by_chunks(_form(approximate, 0), x)


@cpu_kernel(K.GELU_GRAD)
@_quiet
def gelu_grad(dy, x, *, approximate):
    """dy * gelu'(x)."""
    return by_chunks(_form(approximate, 1), x, dy)
