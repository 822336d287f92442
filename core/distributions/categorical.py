"""``Categorical(probs=None, logits=None)``: one of K categories (PyTorch's
``torch.distributions.categorical``)."""
from __future__ import annotations

import math

from ..dtype_info import finfo
from ..dtypes import int64
from ..ops.creation import arange, full
from ..ops.joining import broadcast_tensors
from ..ops.random import multinomial
from ..size import Size
from . import constraints
from .bernoulli import parameter
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


def _normalised(name, value):
    if value.ndim < 1:
        raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
    return value / value.sum(-1, keepdim=True) if name == "probs" else value - value.logsumexp(-1, keepdim=True)


class Categorical(Distribution):
    """Categories ``0 .. K-1`` with probabilities ``probs`` (normalised over the last dimension)
    or ``softmax(logits)``; the leading dimensions are the batch.

    >>> import webgrad as wg
    >>> from webgrad.distributions import Categorical
    >>> m = Categorical(wg.tensor([0.25, 0.25, 0.5]))
    >>> m.sample().shape, m.probs.tolist()
    (webgrad.Size([]), [0.25, 0.25, 0.5])
    >>> round(m.log_prob(wg.tensor(2)).exp().item(), 6)
    0.5
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = parameter("Categorical", probs, logits)
        self._param = _normalised(name, value)
        setattr(self, name, self._param)
        self._num_events = self._param.shape[-1]
        batch_shape = Size(self._param.shape[:-1]) if self._param.ndim > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(param_shape))
                new._param = getattr(new, name)
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_empty(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return Size(self._param.shape)

    @property
    def mean(self):
        return self._undefined()

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self._undefined()

    def _undefined(self):
        return full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype, backend=self.probs._backend)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.to(int64).unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, dtype=int64, backend=self._param._backend)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
