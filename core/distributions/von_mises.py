"""``VonMises(loc, concentration)``: the circular normal distribution (PyTorch's
``torch.distributions.von_mises``)."""
from __future__ import annotations

import math

from ..dtypes import float64, to_dtype
from ..engine import no_grad
from ..ops.binary import where
from ..ops.creation import zeros
from ..ops.random import rand
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

_I0_SMALL = (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2)
_I0_LARGE = (0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
             -0.1647633e-1, 0.392377e-2)
_I1_SMALL = (0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3)
_I1_LARGE = (0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
             0.1787654e-1, -0.420059e-2)
_COEF = {0: (_I0_SMALL, _I0_LARGE), 1: (_I1_SMALL, _I1_LARGE)}


def _eval_poly(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def log_modified_bessel_fn(x, order=0):
    """log I_order(x) for order 0 or 1, x > 0 (Abramowitz and Stegun's polynomials, as PyTorch's)."""
    if order not in (0, 1):
        raise ValueError(f"log_modified_bessel_fn: order must be 0 or 1, got {order}")
    small_coef, large_coef = _COEF[order]
    small = _eval_poly((x / 3.75) ** 2, small_coef)
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, large_coef).log()
    return where(x < 3.75, small.log(), large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's rejection sampler, as PyTorch runs it: rounds of three uniforms per element
    until every element has accepted (``rand``'s draws, so PyTorch's numbers for a seed)."""
    done = zeros(tuple(x.shape), dtype=to_dtype("bool"), backend=x._backend)
    while not bool(done.all().item()):
        u1, u2, u3 = rand((3,) + tuple(x.shape), dtype=loc.dtype, backend=loc._backend).unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = where(accept, (u3 - 0.5).sign() * f.acos(), x)      # PyTorch redraws the accepted too
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Density exp(concentration cos(x - loc)) / (2 pi I0(concentration)) on the circle; samples by
    rejection in float64 where the backend holds it (PyTorch's draws for a seed), not reparameterised.

    >>> import webgrad as wg
    >>> from webgrad.distributions import VonMises
    >>> round(VonMises(wg.tensor(0.0), wg.tensor(1.0)).log_prob(wg.tensor(0.0)).item(), 4)
    -1.0738
    """
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(Size(self.loc.shape), Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(batch_shape, _instance, VonMises, ("loc", "concentration"))
        return new

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - log_modified_bessel_fn(self.concentration, order=0))

    def _wide(self, t):
        return t.to(float64) if float64 in getattr(t._backend, "dtypes", ()) else t

    @lazy_property
    def _loc(self):
        return self._wide(self.loc)

    @lazy_property
    def _concentration(self):
        return self._wide(self.concentration)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=Size()):
        with no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            x = zeros(shape, dtype=self._loc.dtype, backend=self.loc._backend)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (log_modified_bessel_fn(self.concentration, order=1)
                    - log_modified_bessel_fn(self.concentration, order=0)).exp()
