"""``webgrad.special``: PyTorch's ``torch.special``. Each name is webgrad's op of that meaning
(``expit`` is ``sigmoid``, ``psi`` is ``digamma``, ``gammainc`` is ``igamma`` ...), a composition of
ops that is exact (``ndtr``, ``log_ndtr``, ``sinc``, ``entr``, ``xlog1py``, ``i1``, the polynomials of
``special_polynomials``), or a kernel of its own on every backend (the erf family, ``ndtri``, the gamma
family, ``zeta``, the scaled Bessel functions: ``backends/cpu/{special,gamma,bessel}.py`` and
``backends/gpu/kernels/special.wgsl``). The Bessel functions of the second kind and the polynomials
are not differentiable, as in PyTorch; ``bessel_j0/j1/y0/y1`` and ``airy_ai`` are not here yet.

>>> import webgrad as wg
>>> print(f"{wg.special.ndtr(wg.tensor(1.0)).item():.6f}")
0.841345
"""
from __future__ import annotations

import math

from . import kernel_names as K
from .ops import binary, elementary, reduce, unary
from .ops.opmath import opmath
from .ops.aliases import log_softmax as _log_softmax, softmax as _softmax
from .ops.special import digamma, erfc, erfinv, i0, igamma as gammainc, sinc, igammac as gammaincc, lgamma, mvlgamma, \
    polygamma
from .ops.unary import _unary
from .engine import no_grad, run_kernel
from .porting_table import module_getattr as _module_getattr
from .special_polynomials import *  # noqa: F401,F403  (the polynomials, spherical_bessel_j0)
from .special_polynomials import __all__ as _POLYNOMIALS
from .tensor import Tensor

expit = unary.sigmoid
exp2, expm1, log1p, erf, round = elementary.exp2, unary.expm1, unary.log1p, unary.erf, unary.round
logit, xlogy, logsumexp = elementary.logit, elementary.xlogy, reduce.logsumexp
psi, gammaln = digamma, lgamma
ndtri = _unary("ndtri", K.NDTRI, True, "The inverse of the standard normal CDF (-inf at 0, inf at 1, NaN outside), "
               "accurate for tiny probabilities.", "[0.5, 0.0]", "[0.0, -inf]")
erfcx = _unary("erfcx", K.ERFCX, True, "The scaled complementary error function ``exp(input ** 2) * erfc(input)``.",
               "[0.0]", "[1.0]")
_SQRT1_2 = math.sqrt(0.5)


def softmax(input, dim, dtype=None) -> Tensor:
    """``torch.special.softmax``: ``softmax(input, dim)`` (in ``dtype`` when given).

    >>> import webgrad as wg
    >>> wg.special.softmax(wg.tensor([0.0, 0.0]), 0).tolist()
    [0.5, 0.5]
    """
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None) -> Tensor:
    """``torch.special.log_softmax``: ``log_softmax(input, dim)`` (in ``dtype`` when given).

    >>> import webgrad as wg
    >>> print(f"{wg.special.log_softmax(wg.tensor([0.0, 0.0]), 0)[0].item():.6f}")
    -0.693147
    """
    return _log_softmax(input, dim, dtype=dtype)


def ndtr(input) -> Tensor:
    """The standard normal CDF, ``(1 + erf(input / sqrt(2))) / 2`` as PyTorch computes it (so, as
    PyTorch's, 0 once erf rounds to -1: below about -5.9 in float32, -8.3 in float64).

    >>> import webgrad as wg
    >>> wg.special.ndtr(wg.tensor([0.0])).tolist()
    [0.5]
    """
    x = elementary._float("ndtr", input)
    return binary.mul(binary.add(unary.erf(binary.mul(x, _SQRT1_2)), 1.0), 0.5)


@opmath
def log_ndtr(input) -> Tensor:
    """The log of the standard normal CDF: ``log(erfcx(-x / sqrt 2) / 2) - x ** 2 / 2`` below -1 (no
    underflow far left), ``log1p(-erfc(x / sqrt 2) / 2)`` above, as PyTorch computes it.

    >>> import webgrad as wg
    >>> print(f"{wg.special.log_ndtr(wg.tensor(-20.0)).item():.3f}")
    -203.917
    """
    x = elementary._float("log_ndtr", input)
    below = binary.lt(x, -1.0)
    t = binary.mul(x, _SQRT1_2)
    tl, tr = binary.where(below, t, -_SQRT1_2), binary.where(below, 0.0, t)   # each branch on its own side only
    left = binary.sub(unary.log(binary.mul(erfcx(unary.neg(tl)), 0.5)), binary.mul(tl, tl))
    right = unary.log1p(binary.mul(erfc(tr), -0.5))
    return binary.where(below, left, right)


def entr(input) -> Tensor:
    """Elementwise entropy ``-x * log(x)``: 0 at 0, -inf for negative x.

    >>> import webgrad as wg
    >>> wg.special.entr(wg.tensor([0.0, 1.0, -1.0])).tolist()
    [0.0, -0.0, -inf]
    """
    x = elementary._float("entr", input)
    positive = binary.gt(x, 0.0)
    safe = binary.where(positive, x, 1.0)
    value = binary.mul(unary.neg(safe), unary.log(safe))
    outside = binary.where(binary.eq(x, 0.0), 0.0, binary.where(binary.lt(x, 0.0), -math.inf, x))   # NaN stays
    return binary.where(positive, value, outside)


def multigammaln(input, p) -> Tensor:
    """``torch.special.multigammaln``: ``mvlgamma(input, p)``.

    >>> import webgrad as wg
    >>> print(f"{wg.special.multigammaln(wg.tensor(2.5), 2).item():.5f}")
    0.85705
    """
    return mvlgamma(input, p)


def zeta(input, other) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other) ** -input`` (inf at input 1, NaN below; either may be
    a number). Its gradient exists in ``other`` only, as PyTorch's.

    >>> import webgrad as wg
    >>> print(f"{wg.special.zeta(wg.tensor(2.0), 1.0).item():.6f}")   # pi ** 2 / 6
    1.644934
    """
    return run_kernel(K.ZETA, *binary._operands("zeta", input, other, floating=True))


i0e = _unary("i0e", K.BESSEL_I0E, True, "The exponentially scaled modified Bessel function of the first kind, "
             "order 0: ``exp(-|x|) I0(x)``.", "[0.0]", "[1.0]")
i1e = _unary("i1e", K.BESSEL_I1E, True, "The exponentially scaled modified Bessel function of the first kind, "
             "order 1: ``exp(-|x|) I1(x)``.", "[0.0]", "[0.0]")


@opmath
def i1(input) -> Tensor:
    """The modified Bessel function of the first kind, order 1: ``i1e(x) * exp(|x|)``.

    >>> import webgrad as wg
    >>> print(f"{wg.special.i1(wg.tensor(1.0)).item():.6f}")
    0.565159
    """
    x = elementary._float("i1", input)
    return binary.mul(i1e(x), unary.exp(unary.abs(x)))


def xlog1py(input, other) -> Tensor:
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN).

    >>> import webgrad as wg
    >>> wg.special.xlog1py(wg.tensor([0.0, 2.0]), wg.tensor([-1.0, 0.0])).tolist()
    [0.0, 0.0]
    """
    a, b = binary._operands("xlog1py", input, other, floating=True)
    product = binary.where(binary.eq(a, 0), 0.0, binary.mul(a, unary.log1p(b)))
    return binary.where(binary.eq(b, b), product, b)


def _not_differentiable(name, fn, summary):
    def op(input) -> Tensor:
        with no_grad():
            return fn(elementary._float(name, input))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{summary} (not differentiable, as PyTorch's).

    >>> import webgrad as wg
    >>> wg.special.{name}(wg.tensor([1.0])).shape
    webgrad.Size([1])
    """
    return op


def _k(kernel, scaled):
    def fn(x):
        y = run_kernel(kernel, x)
        return y if scaled else binary.mul(y, unary.exp(unary.neg(x)))
    return fn


_SECOND_KIND = "The modified Bessel function of the second kind, order {}{}"
modified_bessel_i0 = _not_differentiable("modified_bessel_i0", i0, "The modified Bessel function of the first kind, "
                                         "order 0, ``I0(x)``")
modified_bessel_i1 = _not_differentiable("modified_bessel_i1", i1, "The modified Bessel function of the first kind, "
                                         "order 1, ``I1(x)``")
modified_bessel_k0 = _not_differentiable("modified_bessel_k0", _k(K.BESSEL_K0E, False), _SECOND_KIND.format(0, ""))
modified_bessel_k1 = _not_differentiable("modified_bessel_k1", _k(K.BESSEL_K1E, False), _SECOND_KIND.format(1, ""))
scaled_modified_bessel_k0 = _not_differentiable("scaled_modified_bessel_k0", _k(K.BESSEL_K0E, True),
                                                _SECOND_KIND.format(0, ", scaled: ``exp(x) K0(x)``"))
scaled_modified_bessel_k1 = _not_differentiable("scaled_modified_bessel_k1", _k(K.BESSEL_K1E, True),
                                                _SECOND_KIND.format(1, ", scaled: ``exp(x) K1(x)``"))

__all__ = ["erf", "erfc", "erfcx", "erfinv", "expit", "exp2", "expm1", "log1p", "logit", "xlogy", "xlog1py",
           "logsumexp", "softmax", "log_softmax", "round", "ndtr", "log_ndtr", "ndtri", "sinc", "entr", "digamma",
           "psi", "gammaln", "polygamma", "multigammaln", "zeta", "gammainc", "gammaincc", "i0", "i0e", "i1", "i1e",
           "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", *_POLYNOMIALS]

__getattr__ = _module_getattr("webgrad.special")
