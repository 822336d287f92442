"""The exponentially scaled modified Bessel functions exp(-|x|) I0(x), exp(-|x|) I1(x), exp(x) K0(x)
and exp(x) K1(x) over numpy arrays, vectorised, in float64 (rounded once to the input's dtype): Clenshaw sums of Cephes'
Chebyshev expansions (PyTorch's), one on [0, 8] in x / 2 - 2 and one on (8, inf) in 32 / x - 2
divided by sqrt(x). I0 and I1 themselves are these times exp(|x|) (core/special.py)."""
import numpy as np

from webgrad import kernel_names as K

from ..bessel_tables import I0E_FAR, I0E_NEAR, I1E_FAR, I1E_NEAR, K0_FAR, K0_NEAR, K1_FAR, K1_NEAR
from .elementwise import _typed
from .registry import register_table
from .special import in_float64


def clenshaw(coefficients, y):
    """sum'_k c_k T_k(y / 2), Cephes' ``chbevl`` (coefficients highest order first, the last halved).

    >>> float(clenshaw((0.0, 2.0), np.array(5.0)))
    1.0
    """
    b0, b1, b2 = np.full_like(y, coefficients[0]), np.zeros_like(y), np.zeros_like(y)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = y * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _scaled(x, near, far, odd):
    a = np.abs(x)
    small = clenshaw(near, a / 2 - 2) * (a if odd else 1.0)
    large = clenshaw(far, 32 / np.maximum(a, 8.0) - 2) / np.sqrt(np.maximum(a, 8.0))
    out = np.where(a <= 8, small, large)
    return np.where(x < 0, -out, out) if odd else out


def i0e64(x):
    """exp(-|x|) I0(x) over float64 ``x``."""
    return _scaled(x, I0E_NEAR, I0E_FAR, False)


def i1e64(x):
    """exp(-|x|) I1(x) over float64 ``x`` (odd)."""
    return _scaled(x, I1E_NEAR, I1E_FAR, True)


def _k_scaled(x, near, far):
    """exp(x) K(x) for x >= 0 from the two expansions: ``near(t)`` on [0, 2] (t = max(x, tiny)), the
    far one in 8 / x - 2 over sqrt(x) beyond; inf at 0, NaN below."""
    t = np.clip(x, 1e-300, 2.0)
    u = np.maximum(x, 2.0)
    out = np.where(x <= 2, near(t), clenshaw(far, 8 / u - 2) / np.sqrt(u))
    return np.where(x == 0, np.inf, np.where(x < 0, np.nan, out))


def k0e64(x):
    """exp(x) K0(x) over float64 ``x`` (K0 = the modified Bessel function of the second kind)."""
    return _k_scaled(x, lambda t: (clenshaw(K0_NEAR, t * t - 2) - np.log(0.5 * t) * i0e64(t) * np.exp(t)) * np.exp(t),
                     K0_FAR)


def k1e64(x):
    """exp(x) K1(x) over float64 ``x``."""
    return _k_scaled(x, lambda t: (np.log(0.5 * t) * i1e64(t) * np.exp(t) + clenshaw(K1_NEAR, t * t - 2) / t)
                     * np.exp(t), K1_FAR)


register_table({K.BESSEL_K0E: _typed(in_float64(k0e64), arrays=1), K.BESSEL_K1E: _typed(in_float64(k1e64), arrays=1)})
register_table({K.BESSEL_I0E: _typed(in_float64(i0e64), arrays=1), K.BESSEL_I1E: _typed(in_float64(i1e64), arrays=1)})
