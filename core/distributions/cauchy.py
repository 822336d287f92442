"""``Cauchy(loc, scale)``: the Lorentz distribution (PyTorch's ``torch.distributions.cauchy``)."""
from __future__ import annotations

import math

from ..ops.creation import full
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import batch_shape_of, broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)²)); no mean (nan) or variance (inf);
    ``rsample`` is loc + ``cauchy_()`` draws * scale (PyTorch's numbers for a seed).

    >>> import webgrad as wg
    >>> from webgrad.distributions import Cauchy
    >>> Cauchy(0.0, 1.0).cdf(wg.tensor(1.0)).item()
    0.75
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, _instance, Cauchy, ("loc", "scale"))

    def _filled(self, value):
        return full(tuple(self._extended_shape()), value, dtype=self.loc.dtype, backend=self.loc._backend)

    @property
    def mean(self):
        return self._filled(math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._filled(math.inf)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.loc + self.loc.new_empty(tuple(shape)).cauchy_() * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
