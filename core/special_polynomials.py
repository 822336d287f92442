"""``torch.special``'s orthogonal polynomials (Chebyshev T, U, V, W and their shifted forms, Hermite H
and He, Laguerre L, Legendre P) and ``spherical_bessel_j0``, composed from ops. Like PyTorch's they
are not differentiable (their results never require grad). A polynomial of degree ``n`` (a number
or an integer tensor, per element; 0 where n < 0) runs its three-term recurrence up to the largest
``n`` asked for, which is read back from the device (Hermite's are NaN beyond degree 512, as PyTorch's).

>>> import webgrad as wg
>>> wg.special.chebyshev_polynomial_t(wg.tensor([0.5, 2.0]), 3).tolist()
[-1.0, 26.0]
"""
from __future__ import annotations

from .engine import no_grad
from .ops import binary, creation, elementary, reduce, unary
from .tensor import Tensor

# name: (p1(x), step(k, x, p_k, p_k-1) -> p_k+1, shifted: evaluated at 2x - 1)
_RECURRENCES = {
    "chebyshev_polynomial_t": (lambda x: x, lambda k, x, p, q: 2 * x * p - q),
    "chebyshev_polynomial_u": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - q),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, lambda k, x, p, q: 2 * x * p - q),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, lambda k, x, p, q: 2 * x * p - q),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda k, x, p, q: 2 * x * p - 2 * k * q),
    "hermite_polynomial_he": (lambda x: x, lambda k, x, p, q: x * p - k * q),
    "laguerre_polynomial_l": (lambda x: 1 - x, lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1)),
    "legendre_polynomial_p": (lambda x: x, lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1)),
}


_LIMITS = {"hermite_polynomial_h": 512, "hermite_polynomial_he": 512}   # PyTorch's: NaN beyond this degree


def _evaluate(name, input, n, shifted=False):
    first, step = _RECURRENCES[name.replace("shifted_", "")]
    with no_grad():
        x, degree = binary._operands(name, input, n, floating=True)
        degree = elementary.trunc(degree)
        x = binary.sub(binary.mul(x, 2), 1) if shifted else x
        x, degree = (binary.add(t, creation.zeros_like(binary.add(x, degree))) for t in (x, degree))
        top = int(reduce.max(degree).item()) if degree.numel() else 0
        limit = _LIMITS.get(name)
        top = top if limit is None else min(top, limit)
        previous, current = creation.ones_like(x), first(x)
        out = binary.where(binary.eq(degree, 1), current, previous)
        for k in range(1, top):
            previous, current = current, step(k, x, current, previous)
            out = binary.where(binary.eq(degree, k + 1), current, out)
        out = binary.where(binary.lt(degree, 0), 0.0, out)
        return out if limit is None else binary.where(binary.gt(degree, limit), float("nan"), out)


def _polynomial(name):
    shifted = name.startswith("shifted_")
    symbol = name.split("_")[-1].upper() if name.split("_")[-1] != "he" else "He"

    def fn(input, n) -> Tensor:
        return _evaluate(name, input, n, shifted)
    fn.__name__ = fn.__qualname__ = name
    star = "*" if shifted else ""
    fn.__doc__ = f"""The polynomial {symbol}_n{star}(input) of ``torch.special.{name}`` (not differentiable).

    >>> import webgrad as wg
    >>> wg.special.{name}(wg.tensor([0.5]), 0).tolist()
    [1.0]
    """
    return fn


NAMES = list(_RECURRENCES) + [f"shifted_{n}" for n in _RECURRENCES if n.startswith("chebyshev")]
globals().update({name: _polynomial(name) for name in NAMES})

_J0_SERIES = (-1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800, 1 / 6227020800)   # sin(x)/x in x^2, from x^2


def spherical_bessel_j0(input) -> Tensor:
    """The spherical Bessel function of the first kind of order 0, ``sin(x) / x``: its Taylor series below
    |x| = 1/2, 0 at +-inf (not differentiable, as PyTorch's).

    >>> import webgrad as wg
    >>> wg.special.spherical_bessel_j0(wg.tensor([0.0])).tolist()
    [1.0]
    """
    with no_grad():
        x = elementary._float("spherical_bessel_j0", input)
        square = binary.mul(x, x)
        series = creation.full_like(x, _J0_SERIES[-1])
        for c in reversed(_J0_SERIES[:-1]):
            series = binary.add(binary.mul(series, square), c)
        near = binary.add(binary.mul(series, square), 1.0)
        far = binary.div(unary.sin(x), x)
        value = binary.where(binary.lt(unary.abs(x), 0.5), near, far)
        return binary.where(binary.eq(unary.abs(x), float("inf")), 0.0, value)


__all__ = NAMES + ["spherical_bessel_j0"]
