"""``Weibull(scale, concentration)`` (PyTorch's ``torch.distributions.weibull``)."""
from __future__ import annotations

from ..ops.creation import ones_like
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import EULER_CONSTANT, broadcast_all

__all__ = ["Weibull"]


def _transforms(scale, concentration_reciprocal):
    return [PowerTransform(exponent=concentration_reciprocal), AffineTransform(loc=0, scale=scale)]


class Weibull(TransformedDistribution):
    """scale * E ** (1 / concentration), E ~ Exponential(1).

    >>> import webgrad as wg
    >>> from webgrad.distributions import Weibull
    >>> Weibull(wg.tensor(1.0), wg.tensor(1.0)).mean.item()
    1.0
    """
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        super().__init__(Exponential(ones_like(self.scale), validate_args=validate_args),
                         _transforms(self.scale, self.concentration_reciprocal), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.concentration_reciprocal = new.concentration.reciprocal()
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape),
                                         _transforms(new.scale, new.concentration_reciprocal), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * ((1 + 2 * self.concentration_reciprocal).lgamma().exp()
                                    - (2 * (1 + self.concentration_reciprocal).lgamma()).exp())

    def entropy(self):
        k_inv = self.concentration_reciprocal
        return EULER_CONSTANT * (1 - k_inv) + (self.scale * k_inv).log() + 1
