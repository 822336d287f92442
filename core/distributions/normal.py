"""``Normal(loc, scale)``: the Gaussian distribution (PyTorch's ``torch.distributions.normal``)."""
from __future__ import annotations

import math
from numbers import Real

from ..engine import no_grad
from ..ops.random import normal, randn
from ..size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .special import erfinv
from .utils import HALF_LOG_2PI, SQRT_2, broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """The normal distribution N(loc, scale²); ``rsample`` is ``loc + eps * scale``, differentiable
    in both parameters.

    >>> import webgrad as wg
    >>> from webgrad.distributions import Normal
    >>> m = Normal(wg.tensor([0.0]), wg.tensor([1.0]))
    >>> round(m.log_prob(wg.tensor([0.0])).item(), 4)
    -0.9189
    >>> m.sample((5,)).shape
    webgrad.Size([5, 1])
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if isinstance(loc, Real) and isinstance(scale, Real) else Size(self.loc.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, _instance, Normal, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = randn(tuple(shape), dtype=self.loc.dtype, backend=self.loc._backend)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - HALF_LOG_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / SQRT_2).erf())

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * SQRT_2

    def entropy(self):
        return 0.5 + HALF_LOG_2PI + self.scale.log()

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
