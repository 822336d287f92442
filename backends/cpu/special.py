"""Special functions over numpy arrays, vectorised (numpy has none of them): erfc, erfcx, erfinv, ndtri.

Every function works in float64 and rounds once to the input's dtype: PyTorch's float32 results lie
within an ulp of that (``tests/test_special.py`` measures it), and its float64 ones within an ulp
or two of the true value, as these are.

* erfcx(t) = exp(t^2) erfc(t) for t >= 1: erf.py's Chebyshev piece G1_64 below 2.5, the Laplace
  continued fraction 1 / (sqrt(pi) (t + (1/2) / (t + 1 / (t + (3/2) / ...)))) from 2.5 on, evaluated
  bottom-up (40 levels: within 2.2e-16 relative from 2.5 on; erf.py's G2_64 is accurate relative to
  erf's 1, not to erfcx's own size);
* erfc(x) = 1 - erf(x) for 0 <= x < 1 (a few ulp where erf nears 0.84), exp(-x^2) erfcx(x) above,
  with exp(-x^2) split so that x^2's rounding does not cost ~x^2 ulp; 2 - erfc(-x) below 0;
* erfinv: Pavlis' rational first guess (the one PyTorch's ``calc_erfinv`` starts from), then three
  Newton steps on erf(x) = y in the centre and on erfc(|x|) = 1 - |y| (exact) beyond |y| = 1/2,
  so that the result keeps its relative accuracy as |y| nears 1.
"""
import math

import numpy as np

from webgrad import kernel_names as K

from .elementwise import _typed
from .erf import G1_64, erf, horner
from .registry import register_table

_SQRT_PI = math.sqrt(math.pi)
_CF_FROM, _CF_LEVELS = 2.5, 40
_PIECES = ((2.5, 1.75, G1_64),)   # (upper bound, center, G) on [1, 2.5)


def _continued_fraction(t):
    """erfcx(t) for t >= 2.5 by the Laplace continued fraction."""
    d = t.copy()
    for k in range(_CF_LEVELS, 0, -1):
        d = t + (k / 2) / d
    return 1 / (_SQRT_PI * d)


def erfcx_far(t):
    """erfcx(t) = exp(t^2) erfc(t) for t >= 1 (float64); +inf gives 0."""
    out = _continued_fraction(np.maximum(t, _CF_FROM))
    lower = 1.0
    for upper, center, coefficients in _PIECES:
        inside = (t >= lower) & (t < upper)
        if inside.any():
            out[inside] = horner(coefficients, t[inside] - center)
        lower = upper
    return out


def exp_minus_square(x):
    """exp(-x^2) for float64 ``x`` (|x| beyond 28 taken as 28: 0 either way), with x = hi + lo (hi of
    21 bits past the point, so hi^2 is exact): exp(-hi^2) exp(-lo (2 hi + lo)), the rounding of x^2
    kept out of the exponent."""
    x = np.minimum(np.abs(x), 28.0)
    hi = np.floor(x * 2.0 ** 21) * 2.0 ** -21
    lo = x - hi
    return np.exp(-hi * hi) * np.exp(-lo * (2 * hi + lo))


def _erfc_nonnegative(a):
    """erfc(a) for float64 a >= 0 (NaN stays NaN): 1 - erf(a) below 1, exp(-a^2) erfcx(a) from 1 on."""
    out = 1 - erf(a)
    far = a >= 1
    if far.any():
        t = a[far]
        out[far] = exp_minus_square(t) * erfcx_far(t)
    return out


def erfc64(x):
    """erfc over float64 ``x``."""
    e = _erfc_nonnegative(np.abs(x))
    return np.where(x < 0, 2 - e, e)


def erfcx64(x):
    """erfcx over float64 ``x``: exp(x^2) erfc(x) (inf where that overflows, far left)."""
    a = np.abs(x)
    far = np.maximum(a, 1.0)
    positive = np.where(a >= 1, erfcx_far(far), np.exp(x * x) * (1 - erf(a)))
    return np.where(x < 0, 2 * np.exp(x * x) - positive, positive)


_A = (-0.140543331, 0.914624893, -1.645349621, 0.886226899)     # Pavlis' coefficients, highest power first
_B = (0.012229801, -0.329097515, 1.442710462, -2.118377725, 1.0)
_C = (1.641345311, 3.429567803, -1.624906493, -1.970840454)
_D = (1.637067800, 3.543889200, 1.0)
_TWO_OVER_SQRT_PI = 2 / _SQRT_PI


def _first_guess(y, a):
    """Pavlis' rational approximation of erfinv(y) (|y| < 1), a = |y|: about 1e-7 relative."""
    z = y * y
    centre = y * horner(_A, z) / horner(_B, z)
    w = np.sqrt(-np.log((1 - a) / 2))
    tail = np.copysign(horner(_C, w) / horner(_D, w), y)
    return np.where(a <= 0.7, centre, tail)


def erfinv64(y):
    """erfinv over float64 ``y``: NaN beyond [-1, 1] (and for NaN), +-inf at +-1."""
    a = np.abs(y)
    x = _first_guess(y, a)
    far = a > 0.5
    rest = 1 - a                    # exact for a > 1/2 (Sterbenz)
    sign = np.sign(y)
    for _ in range(3):
        slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)
        residual = np.where(far, (rest - erfc64(np.abs(x))) * sign, erf(x) - y)   # erf(x) - y either way
        x = x - residual / slope
    x = np.where(a == 1, np.copysign(np.inf, y), x)
    return np.where(a > 1, np.nan, x)


def _erfcinv_positive(r):
    """x >= 0 with erfc(x) = r, for r in (0, 1]: Pavlis' guess for erfinv(1 - r), then four Newton
    steps on log erfc(x) = log r (quadratic convergence and relative accuracy however small r is)."""
    y = 1 - r
    x = _first_guess(y, y)
    w = np.sqrt(-np.log(r / 2))      # the tail guess from r itself: 1 - r rounds to 1 for tiny r
    x = np.where(y > 0.7, horner(_C, w) / horner(_D, w), x)
    log_r = np.log(r)
    for _ in range(4):
        scaled = erfcx64(x)
        log_erfc = np.where(x >= 1, np.log(scaled) - x * x, np.log(erfc64(x)))
        x = x + (log_erfc - log_r) * scaled / _TWO_OVER_SQRT_PI
    return x


def ndtri64(p):
    """The inverse of the standard normal CDF over float64 ``p``: -sqrt(2) erfcinv(2 p) below 1/2,
    sqrt(2) erfcinv(2 (1 - p)) above (-inf at 0, inf at 1, NaN outside [0, 1])."""
    low = p < 0.5
    r = 2 * np.where(low, p, 1 - p)
    x = _erfcinv_positive(np.where((r > 0) & (r <= 1), r, 1.0)) * math.sqrt(2)
    x = np.where(low, -x, x)
    x = np.where(r == 0, np.where(low, -np.inf, np.inf), x)
    return np.where((p < 0) | (p > 1) | (p != p), np.nan, x)


def in_float64(fn):
    """``fn`` over float64, its result rounded to the input's float dtype.

    >>> in_float64(erfinv64)(np.array([0.5], np.float32)).dtype
    dtype('float32')
    """
    def run(x):   # flat: the functions index with masks, which 0-d results would not take
        return fn(np.asarray(x, np.float64).reshape(-1)).reshape(x.shape).astype(x.dtype, copy=False)
    run.__name__ = fn.__name__
    return run


erfc = in_float64(erfc64)
erfcx = in_float64(erfcx64)
erfinv = in_float64(erfinv64)
ndtri = in_float64(ndtri64)


register_table({K.SIGNBIT: _typed(np.signbit, np.dtype(np.bool_), arrays=1), K.FREXP: lambda x: tuple(np.frexp(x))})
register_table({name: _typed(fn, arrays=2) for name, fn in ((K.COPYSIGN, np.copysign), (K.NEXTAFTER, np.nextafter),
                                                            (K.GCD, np.gcd), (K.LCM, np.lcm))})
register_table({K.ERFC: _typed(erfc, arrays=1), K.ERFCX: _typed(erfcx, arrays=1), K.ERFINV: _typed(erfinv, arrays=1),
                K.NDTRI: _typed(ndtri, arrays=1)})
