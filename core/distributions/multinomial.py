"""``Multinomial(total_count=1, probs=None, logits=None)`` (PyTorch's ``torch.distributions.multinomial``)."""
from __future__ import annotations

import math

from ..ops.binary import where
from ..ops.creation import ones_like, zeros
from ..size import Size
from ..tensor import tensor
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of ``total_count`` draws among K categories: events of shape (K,). Samples count
    ``Categorical`` draws (PyTorch's numbers for a seed).

    >>> import webgrad as wg
    >>> from webgrad.distributions import Multinomial
    >>> d = Multinomial(4, wg.tensor([0.25, 0.75]))
    >>> d.mean.tolist(), d.sample().sum().item()
    ([1.0, 3.0], 4.0)
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, Size(self._categorical.param_shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, Size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()):
        samples = self._categorical.sample(Size((self.total_count,) + tuple(sample_shape)))
        order = list(range(1, samples.ndim)) + [0]
        samples = samples.permute(*order)
        counts = zeros(tuple(self._extended_shape(sample_shape)), dtype=samples.dtype, backend=samples._backend)
        return counts.scatter_add(-1, samples, ones_like(samples)).type_as(self.probs)

    def entropy(self):
        n = tensor(self.total_count, backend=self.probs._backend)     # an integer tensor, as PyTorch's (its lgamma
        #                                                               is in the default dtype)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        term2 = (binomial_probs * (support + 1).lgamma()).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
