"""``HalfCauchy(scale)``: |X| for X ~ Cauchy(0, scale) (PyTorch's ``torch.distributions.half_cauchy``)."""
from __future__ import annotations

import math

from ..ops.creation import full, zeros_like
from . import constraints
from .folded import folded_cdf, folded_entropy, folded_icdf, folded_log_prob
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """The absolute value of a centred Cauchy (a common prior for scales).

    >>> import webgrad as wg
    >>> from webgrad.distributions import HalfCauchy
    >>> HalfCauchy(1.0).cdf(wg.tensor(1.0)).item()
    0.5
    """
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfCauchy, _instance))

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype, backend=self.scale._backend)

    @property
    def mode(self):
        return zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    log_prob, cdf, icdf, entropy = folded_log_prob, folded_cdf, folded_icdf, folded_entropy
