"""``HalfNormal(scale)``: |X| for X ~ Normal(0, scale) (PyTorch's ``torch.distributions.half_normal``)."""
from __future__ import annotations

import math

from ..ops.creation import zeros_like
from . import constraints
from .folded import folded_cdf, folded_entropy, folded_icdf, folded_log_prob
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(TransformedDistribution):
    """The absolute value of a centred normal.

    >>> import webgrad as wg
    >>> from webgrad.distributions import HalfNormal
    >>> round(HalfNormal(1.0).log_prob(wg.tensor(0.0)).item(), 4)
    -0.2258
    """
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfNormal, _instance))

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    log_prob, cdf, icdf, entropy = folded_log_prob, folded_cdf, folded_icdf, folded_entropy
