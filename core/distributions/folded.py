"""What HalfNormal and HalfCauchy share: |X| for X symmetric about 0 (their base distribution),
so its density is twice the base's on [0, inf), its cdf 2 F(x) - 1.

>>> import webgrad as wg
>>> from webgrad.distributions import HalfNormal
>>> HalfNormal.cdf is folded_cdf
True
"""
from __future__ import annotations

import math

from ..ops.binary import where

__all__ = ["folded_log_prob", "folded_cdf", "folded_icdf", "folded_entropy"]


def folded_log_prob(self, value):
    if self._validate_args:
        self._validate_sample(value)
    return where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)


def folded_cdf(self, value):
    if self._validate_args:
        self._validate_sample(value)
    return 2 * self.base_dist.cdf(value) - 1


def folded_icdf(self, prob):
    return self.base_dist.icdf((prob + 1) / 2)


def folded_entropy(self):
    return self.base_dist.entropy() - math.log(2)
