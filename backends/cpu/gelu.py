"""cpu Gelu and GeluGrad, both forms: exact (x Phi(x), Phi the normal distribution function) and tanh.

Phi(x) = (1 + erf(x / sqrt 2)) / 2 takes, in float64, erf.py's erf (within 1 ulp). In float32 (and
half precision, computed in float32 as PyTorch does) it is one formula over the whole line:
erf(z) ~ tanh(z p(z^2)) with p of degree 6 (``tests/erf_fit.py``'s ``tanh_form``), so
Phi(x) = 1 / (1 + exp(x r(x^2))) with r(s) = -sqrt(2) p(s / 2): ~17 passes, no branch and no clipping
(p > 1 on s >= 0, so the exponent runs to +inf on the left: gelu(-inf) is NaN and gelu(-1e38) -0.0,
as PyTorch's), and Phi keeps its relative accuracy far left, where 1 + erf cancels. Its error is
below 1e-7 absolute, as PyTorch's own (its float32 1 + erf rounds to 6e-8). GeluGrad reads Phi(x) off
the forward's result as y / x (10 passes where recomputing it takes 23; the tanh form's backward
recomputes from x, where y / x would round the 1 - sigma it needs). Each kernel runs chunk
by chunk (``erf.by_chunks``), so the passes over a chunk stay in the cache."""
import math

import numpy as np

from webgrad import kernel_names as K

from .elementwise import _quiet
from .erf import by_chunks, erf_into
from .registry import cpu_kernel

_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_BETA, _KAPPA = math.sqrt(2 / math.pi), 0.044715      # the tanh form: tanh(beta * (x + kappa * x^3))
# erf(z) ~ tanh(z p(z^2)), p highest power first, fitted on |z| <= 4 (erf is +-1 in float32 beyond 3.92)
_ERF_BY_TANH = (
    1.5899531930290456e-07,
    -5.986267910861655e-06,
    8.971587973600421e-05,
    -0.0006257276404065315,
    -0.00018437517655608068,
    0.1027654780846265,
    1.128379705798004,
)
# r(s) = -sqrt(2) p(s / 2), highest power first: 0.5 (1 + tanh(a)) = 1 / (1 + exp(-2a)), a = (x / sqrt 2) p(x^2 / 2)
_PHI_EXPONENT = tuple(-math.sqrt(2) * c / 2 ** (len(_ERF_BY_TANH) - 1 - k) for k, c in enumerate(_ERF_BY_TANH))


def _exponent_into(x, out):
    """out = 1 + exp(x r(x^2)), so that Phi(x) = 1 / out (float32), by Horner's rule from the first product."""
    s = x * x
    c = _PHI_EXPONENT
    np.multiply(s, c[0], out=out)
    out += c[1]
    for ck in c[2:]:
        out *= s
        out += ck
    out *= x
    np.exp(out, out=out)
    out += 1
    return s


def _exact(x, out):
    """out = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2 (erf.py's erf in float64)."""
    if x.dtype == np.float64:
        erf_into(x * _SQRT1_2, out)
        out += 1
        out *= 0.5
        out *= x
    else:
        _exponent_into(x, out)
        np.divide(x, out, out=out)


def _ratio_into(y, x, s, out):
    """out = y / x = Phi(x) from the forward's result y = x Phi(x), 1/2 where
    x * x underflows to 0 (|x| below ~1e-23 in float32: there Phi is 1/2 to the last bit, while y / x
    loses digits in subnormals and is 0 / 0 at x = 0)."""
    np.divide(y, x, out=out)
    np.copyto(out, 0.5, where=s == 0)


def _exact_grad(x, dy, y, out):
    """dy * (Phi(x) + x phi(x)), Phi(x) as y / x: 10 passes where recomputing Phi takes 23."""
    s = x * x
    _ratio_into(y, x, s, out)
    s *= -0.5
    np.exp(s, out=s)
    s *= x
    s *= _INV_SQRT_2PI
    out += s
    out *= dy


def _tanh_denominator(x, out):
    """out = 1 + exp(-2 beta (x + kappa x^3)), so that 0.5 (1 + tanh(beta (x + kappa x^3))) = 1 / out
    (numpy's exp is vectorised where its tanh is not); returns x^2."""
    s = x * x
    np.multiply(s, -2 * _BETA * _KAPPA, out=out)
    out += -2 * _BETA
    out *= x
    np.exp(out, out=out)
    out += 1
    return s


def _tanh(x, out):
    _tanh_denominator(x, out)
    np.divide(x, out, out=out)


def _tanh_grad(x, dy, y, out):
    """dy * (0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2)) (PyTorch's formula) with t the tanh
    above, written with sigma = 0.5 (1 + t): dy * sigma (1 + 2 x (1 - sigma) beta (1 + 3 kappa x^2)).
    sigma is recomputed from x, not read off y: y / x rounds sigma near 1, where 1 - sigma is used."""
    slope = _tanh_denominator(x, out)
    np.reciprocal(out, out=out)              # sigma
    slope *= 6 * _BETA * _KAPPA
    slope += 2 * _BETA
    slope *= x
    slope *= 1 - out                         # (a new array: 1 - sigma)
    slope += 1
    out *= slope
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
def gelu_grad(dy, x, y, *, approximate):
    """dy * gelu'(x), with y = gelu(x) (the forward's result). The exact form in float32 and float64
    reads Phi(x) off y as y / x; half precision recomputes y from x in float32 first (y, rounded to
    11 or 8 bits, would carry that rounding into the gradient, where PyTorch computes from x)."""
    grad = _form(approximate, 1)
    if x.dtype.itemsize < 4 and approximate == "none":
        y = by_chunks(_form(approximate, 0), x, dtype=np.float32)
    return by_chunks(grad, x, dy, y)
