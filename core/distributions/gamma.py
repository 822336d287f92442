"""``Gamma(concentration, rate)`` (PyTorch's ``torch.distributions.gamma``)."""
from __future__ import annotations

from ..dtype_info import finfo
from ..ops.random_samplers import _standard_gamma
from ..ops.special import igamma as gammainc
from ..size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import batch_shape_of, broadcast_all, xlogy

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Density rate^a x^(a-1) exp(-rate x) / Gamma(a), a = concentration. ``rsample`` is
    ``_standard_gamma(concentration) / rate``: PyTorch's Marsaglia-Tsang draws for a seed, and its
    reparameterised gradient in the concentration.

    >>> import webgrad as wg
    >>> from webgrad.distributions import Gamma
    >>> d = Gamma(wg.tensor([2.0]), wg.tensor([1.0]))
    >>> d.mean.tolist(), round(d.log_prob(wg.tensor([1.0])).item(), 4)
    ([2.0], -1.0)
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(batch_shape_of((concentration, rate), self.concentration), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, _instance, Gamma, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = finfo(value.dtype).tiny
        return value + (value.detach().clamp(min=tiny) - value.detach())    # PyTorch's clamp_ on the data

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value) - self.rate * value
                - self.concentration.lgamma())

    def entropy(self):
        return (self.concentration - self.rate.log() + self.concentration.lgamma()
                + (1.0 - self.concentration) * self.concentration.digamma())

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)
