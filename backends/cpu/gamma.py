"""The gamma family over numpy arrays, vectorised: lgamma, digamma, the Hurwitz zeta function and
polygamma. Everything works in float64 and rounds once to the input's dtype (special.in_float64).

* lgamma(x), x > 0: shifted up past 10 (lgamma(x) = lgamma(x + n) - log(x (x+1) ... (x+n-1))),
  then Stirling's series to x^-13 (error below 1e-17 there); below 0 the reflection
  log(pi / |sin(pi x)|) - lgamma(1 - x), with sin(pi x) taken at x - round(x) (exact);
* digamma the same way: a shift past 10, the asymptotic series, the reflection pi / tan(pi x);
* zeta(x, q): Cephes' method (PyTorch's): the direct sum until its terms stop mattering or pass
  q + 9, then the Euler-Maclaurin tail with up to 12 Bernoulli terms;
* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2, PyTorch's trigamma for n = 1 (a
  shorter series: its numbers), digamma for n = 0.
Their accuracy is a few ulp of float64, less near lgamma's zeros at 1 and 2 (absolute 2e-15 there),
ample for float32 (``tests/test_special.py`` compares with PyTorch and mpmath).
"""
import math

import numpy as np

from webgrad import kernel_names as K

from .elementwise import _quiet, _typed
from .erf import horner
from .registry import register_table
from .special import in_float64

_SHIFT = 10.0
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)
_STIRLING = (1 / 156, -691 / 360360, 1 / 1188, -1 / 1680, 1 / 1260, -1 / 360, 1 / 12)   # B2k/(2k(2k-1)), in 1/x^2
_ASYMPTOTIC = (1 / 12, -691 / 32760, 1 / 132, -1 / 240, 1 / 252, -1 / 120, 1 / 12)      # B2k/(2k), in 1/x^2
_MACHEP = 1.11022302462515654042e-16
_BERNOULLI = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
              -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
              1.8152105401943546773e17, -7.1661652561756670113e18)   # (2k)! / B2k, Euler-Maclaurin's


def _shifted(x):
    """(y, n) with y = x + n >= 10 and n the steps, for x >= 1 (at most 9 steps), and the product
    x (x+1) ... (x+n-1) of the steps (below 1e10)."""
    product = np.ones_like(x)
    for _ in range(int(_SHIFT) - 1):
        small = x < _SHIFT
        product = np.where(small, product * x, product)
        x = np.where(small, x + 1, x)
    return x, product


def _sin_pi(x):
    """|sin(pi x)| from x - round(x), exact."""
    return np.abs(np.sin(np.pi * (x - np.round(x))))


def _lgamma_positive(x):
    lead = np.where(x < 1, x, 1.0)                 # log(x) apart: x (x+1)... would lose a tiny x's digits
    y, product = _shifted(np.where(x < 1, x + 1, x))
    z = 1 / (y * y)
    stirling = (y - 0.5) * np.log(y) - y + _HALF_LOG_TWO_PI + horner(_STIRLING, z) * z * y
    return stirling - np.log(product) - np.log(lead)


def lgamma64(x):
    """log|Gamma(x)| over float64 ``x``: inf at the non-positive integers and at +-inf, 0 at 1 and 2."""
    positive = np.where(x > 0, x, 0.5)
    value = _lgamma_positive(positive)
    reflected = np.log(np.pi / _sin_pi(x)) - _lgamma_positive(np.where(x > 0, 0.5, 1 - x))
    out = np.where(x > 0, value, reflected)
    out = np.where((x == 1) | (x == 2), 0.0, out)
    return np.where(np.isinf(x) | ((x <= 0) & (x == np.round(x))), np.inf, out)


def _digamma_positive(x):
    y = x.copy()
    total = np.zeros_like(x)
    for _ in range(int(_SHIFT)):
        small = y < _SHIFT
        total = np.where(small, total - 1 / y, total)
        y = np.where(small, y + 1, y)
    z = 1 / (y * y)
    return total + np.log(y) - 0.5 / y - horner(_ASYMPTOTIC, z) * z


def digamma64(x):
    """The digamma function over float64 ``x``: -+inf at +-0, NaN at the negative integers and -inf."""
    reflected = _digamma_positive(np.where(x < 0, 1 - x, 1.0)) - np.pi / np.tan(np.pi * (x - np.round(x)))
    out = np.where(x < 0, reflected, _digamma_positive(np.where(x > 0, x, 1.0)))
    out = np.where(x == 0, np.copysign(np.inf, -x), out)
    out = np.where(x == np.inf, np.inf, out)
    return np.where(((x < 0) & (x == np.round(x))) | (x != x), np.nan, out)


def trigamma64(x):
    """digamma's derivative as PyTorch computes it (its ``trigamma``): the reflection below 1/2, six
    steps up, then a short asymptotic series (about 1e-9 relative; its numbers, edge values included)."""
    below = x < 0.5
    result = np.where(below, -(np.pi * np.pi) / np.sin(np.pi * x) ** 2, 0.0)
    x = np.where(below, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return np.where(below, -result, result)


def zeta64(x, q):
    """The Hurwitz zeta function sum_k (k + q)^-x over float64 arrays (broadcast): inf at x = 1 and for
    q a non-positive integer, NaN for x < 1 or q < 0 with x not an integer, as PyTorch's."""
    x, q = (np.array(a, np.float64).reshape(-1) for a in np.broadcast_arrays(x, q))
    out = np.full(x.shape, np.nan)
    pole = (x == 1) | ((x > 1) & (q <= 0) & (q == np.floor(q)))
    regular = (x > 1) & ~pole & ~((q <= 0) & (x != np.floor(x))) & (q == q)
    out[pole] = np.inf
    pos = np.flatnonzero(regular)
    xs, a = x[pos], q[pos]
    s = a ** -xs
    b = np.zeros_like(s)
    i = 0
    tail = []
    while pos.size:
        i += 1
        a = a + 1
        b = a ** -xs
        s = s + b
        done = (-_MACHEP * s < b) & (b < _MACHEP * s)
        out[pos[done]] = s[done]
        more = ~done & ((i < 9) | (a <= 9.0))
        rest = ~done & ~more
        tail.append((pos[rest], xs[rest], a[rest], b[rest], s[rest]))
        pos, xs, a, b, s = pos[more], xs[more], a[more], b[more], s[more]
    for part in tail:
        _euler_maclaurin(out, *part)
    return out


def _euler_maclaurin(out, pos, x, w, b, s):
    """Cephes' tail of the Hurwitz sum past w = q + n, term by term until one stops mattering."""
    s = s + b * w / (x - 1) - 0.5 * b
    a = np.ones_like(x)
    k = 0.0
    for coefficient in _BERNOULLI:
        if not pos.size:
            return
        a = a * (x + k)
        b = b / w
        t = a * b / coefficient
        s = s + t
        done = np.abs(t / s) < _MACHEP
        out[pos[done]] = s[done]
        keep = ~done
        pos, x, a, b, s, w = pos[keep], x[keep], a[keep], b[keep], s[keep], w[keep]
        k += 1
        a = a * (x + k)
        b = b / w
        k += 1
    out[pos] = s


def polygamma64(x, n):
    """The n-th derivative of digamma over float64 ``x``."""
    if n <= 1:
        return trigamma64(x) if n else digamma64(x)
    scale = (-1.0) ** (n + 1) * math.exp(math.lgamma(n + 1))
    return scale * zeta64(n + 1.0, x).reshape(x.shape)


def _binary(fn):
    def run(a, b):
        return fn(np.asarray(a, np.float64), np.asarray(b, np.float64)).reshape(np.broadcast_shapes(a.shape, b.shape)) \
            .astype(a.dtype, copy=False)
    return run


def _polygamma(x, *, n):
    return in_float64(lambda v: polygamma64(v, n))(x)


register_table({K.LGAMMA: _typed(in_float64(lgamma64), arrays=1), K.DIGAMMA: _typed(in_float64(digamma64), arrays=1),
                K.POLYGAMMA: _typed(_polygamma), K.ZETA: _quiet(_binary(zeta64))})


_ITERATIONS = 10000   # series and continued-fraction terms at most (a of 1e6 needs a few thousand)


def _until_converged(state, step):
    """Run ``step(state, i) -> (state, converged)`` on the elements not yet converged (compressed),
    and return every element's final state."""
    finished = [np.empty_like(s) for s in state]
    pos = np.arange(state[0].size)
    for i in range(1, _ITERATIONS + 1):
        if not pos.size:
            break
        state, done = step(state, i)
        for f, s in zip(finished, state):
            f[pos[done]] = s[done]
        pos, state = pos[~done], [s[~done] for s in state]
    for f, s in zip(finished, state):
        f[pos] = s
    return finished


def _lower_series(a, x):
    """sum_n x^n / ((a+1)...(a+n)) / a: P(a, x) over the prefactor x^a e^-x / Gamma(a) (for x < a + 1)."""
    def step(state, i):
        a_, x_, term, total = state
        term = term * x_ / (a_ + i)
        total = total + term
        return [a_, x_, term, total], np.abs(term) <= np.abs(total) * _MACHEP
    return _until_converged([a, x, 1 / a, 1 / a], step)[3]


def _upper_fraction(a, x):
    """Lentz's evaluation of Q(a, x)'s continued fraction over the prefactor (for x >= a + 1)."""
    tiny = 1e-300
    b = x + 1 - a
    d = 1 / b

    def step(state, i):
        a_, b_, c, d_, h = state
        an = -i * (i - a_)
        b_ = b_ + 2
        d_ = an * d_ + b_
        d_ = np.where(np.abs(d_) < tiny, tiny, d_)
        c = b_ + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d_ = 1 / d_
        delta = d_ * c
        return [a_, b_, c, d_, h * delta], np.abs(delta - 1) <= _MACHEP
    return _until_converged([a, b, np.full_like(a, 1 / tiny), d, d.copy()], step)[4]


def igamma64(a, x, upper=False):
    """The regularized lower incomplete gamma function P(a, x) (Q = 1 - P when ``upper``) over float64
    arrays (broadcast), with PyTorch's edge values: NaN for a or x negative and for a = x = 0, or both
    infinite; P(0, x > 0) = 1, P(a, 0) = 0, P(a, inf) = 1, P(inf, x) = 0."""
    a, x = (np.array(v, np.float64).reshape(-1) for v in np.broadcast_arrays(a, x))
    regular = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    p = np.where(x == 0, 0.0, np.where((a == 0) | (x == np.inf), 1.0, 0.0))
    p = np.where((a < 0) | (x < 0) | ((a == 0) & (x == 0)) | ((a == np.inf) & (x == np.inf)) | (a != a) | (x != x),
                 np.nan, p)
    q = 1 - p
    ar, xr = a[regular], x[regular]
    log_prefactor = ar * np.log(xr) - xr - lgamma64(ar)
    series = xr < ar + 1
    lower = np.exp(log_prefactor[series]) * _lower_series(ar[series], xr[series])
    upper_ = np.exp(log_prefactor[~series]) * _upper_fraction(ar[~series], xr[~series])
    pr, qr = np.empty_like(ar), np.empty_like(ar)
    pr[series], qr[series] = lower, 1 - lower
    pr[~series], qr[~series] = 1 - upper_, upper_
    p[regular], q[regular] = pr, qr
    return q if upper else p


def _igamma(upper):
    def run(a, x):
        out = igamma64(np.asarray(a, np.float64), np.asarray(x, np.float64), upper)
        return out.reshape(np.broadcast_shapes(a.shape, x.shape)).astype(a.dtype, copy=False)
    return _quiet(run)


register_table({K.IGAMMA: _igamma(False), K.IGAMMAC: _igamma(True)})
