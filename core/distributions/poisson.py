"""``Poisson(rate)`` (PyTorch's ``torch.distributions.poisson``)."""
from __future__ import annotations

from ..engine import no_grad
from ..ops.random_samplers import poisson
from ..size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import batch_shape_of, broadcast_all, xlogy

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Counts with P(k) = rate^k exp(-rate) / k!; samples are ``poisson``'s (PyTorch's numbers for a seed).

    >>> import webgrad as wg
    >>> from webgrad.distributions import Poisson
    >>> round(Poisson(wg.tensor([2.0])).log_prob(wg.tensor([1.0])).exp().item(), 4)
    0.2707
    """
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(batch_shape_of((rate,), self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, _instance, Poisson, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        with no_grad():
            return poisson(self.rate.expand(tuple(self._extended_shape(sample_shape))))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
