"""``NegativeBinomial(total_count, probs=None, logits=None)`` (PyTorch's
``torch.distributions.negative_binomial``)."""
from __future__ import annotations

from ..engine import no_grad
from ..nn.functional.activation_more import logsigmoid
from ..ops.binary import where
from ..ops.random_samplers import poisson
from ..size import Size
from . import constraints
from .binomial import expand_probability, probability_parameter
from .distribution import Distribution
from .gamma import Gamma
from .utils import binary_parameters, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Successes before ``total_count`` failures, each trial a success with probability ``probs``;
    samples are Poisson draws with Gamma rates (PyTorch's composition and numbers for a seed).

    >>> import webgrad as wg
    >>> from webgrad.distributions import NegativeBinomial
    >>> NegativeBinomial(wg.tensor(2.0), wg.tensor(0.5)).mean.item()
    2.0
    """
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    logits, probs, param_shape = binary_parameters()
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        param = probability_parameter(self, total_count, probs, logits)
        super().__init__(Size(param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_probability(self, NegativeBinomial, batch_shape, _instance)

    def _new(self, *args, **kwargs):
        return self._param.new_empty(*args, **kwargs)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized_prob = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        return log_unnormalized_prob - where(n + value == 0.0, 0.0, log_normalization)
