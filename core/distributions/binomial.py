"""``Binomial(total_count=1, probs=None, logits=None)`` (PyTorch's ``torch.distributions.binomial``)."""
from __future__ import annotations

from ..engine import no_grad
from ..ops.creation import arange
from ..ops.random_samplers import binomial
from ..size import Size
from . import constraints
from .bernoulli import parameter
from .distribution import Distribution
from .utils import binary_parameters, broadcast_all

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0) with gradient 1/2 at 0 (PyTorch's)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def probability_parameter(owner, total_count, probs, logits):
    """Set ``owner.total_count`` and its ``probs`` or ``logits`` (exactly one), broadcast, the count
    in the parameter's dtype; returns the parameter (Binomial and NegativeBinomial)."""
    name, value = parameter(type(owner).__name__, probs, logits)
    total_count, param = broadcast_all(total_count, value)
    owner.total_count = total_count.type_as(param)
    setattr(owner, name, param)
    owner._param = param
    return param


def expand_probability(self, cls, batch_shape, _instance):
    new = self._expanded(batch_shape, _instance, cls, ("total_count", "probs", "logits"))
    new._param = new.probs if "probs" in self.__dict__ else new.logits
    return new


class Binomial(Distribution):
    """Successes in ``total_count`` trials of probability ``probs`` (or ``sigmoid(logits)``);
    samples are ``binomial``'s (PyTorch's numbers for a seed).

    >>> import webgrad as wg
    >>> from webgrad.distributions import Binomial
    >>> d = Binomial(4, wg.tensor([0.5]))
    >>> d.mean.tolist(), round(d.log_prob(wg.tensor([2.0])).exp().item(), 4)
    ([2.0], 0.375)
    """
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    logits, probs, param_shape = binary_parameters()
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        param = probability_parameter(self, total_count, probs, logits)
        super().__init__(Size(param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_probability(self, Binomial, batch_shape, _instance)

    def _new(self, *args, **kwargs):
        return self._param.new_empty(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        normalize_term = n * _clamp_by_zero(self.logits) + n * (-self.logits.abs()).exp().log1p() - (n + 1).lgamma()
        return value * self.logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normalize_term

    def _homogeneous_count(self, what):
        total_count = int(self.total_count.max().item())
        if not self.total_count.min().item() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total_count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = self._homogeneous_count("enumerate_support")
        values = arange(1 + total_count, dtype=self._param.dtype, backend=self._param._backend)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
