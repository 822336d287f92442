"""``Bernoulli(probs=None, logits=None)``: 1 with probability ``probs``, else 0 (PyTorch's
``torch.distributions.bernoulli``)."""
from __future__ import annotations

import math
from numbers import Number

from ..engine import no_grad
from ..nn.functional.loss import binary_cross_entropy_with_logits
from ..ops.binary import where
from ..ops.creation import arange
from ..ops.random import bernoulli
from ..size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import binary_parameters, broadcast_all

__all__ = ["Bernoulli"]


def parameter(name, probs, logits) -> tuple:
    """(which was given, its value): exactly one of ``probs`` and ``logits``, as PyTorch insists."""
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


class Bernoulli(ExponentialFamily):
    """A coin: 1 with probability ``probs`` (or ``sigmoid(logits)``), else 0.

    >>> import webgrad as wg
    >>> from webgrad.distributions import Bernoulli
    >>> m = Bernoulli(wg.tensor([0.3]))
    >>> m.sample().shape, round(m.log_prob(wg.tensor([1.0])).exp().item(), 6)
    (webgrad.Size([1]), 0.3)
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    logits, probs, param_shape = binary_parameters()
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = parameter("Bernoulli", probs, logits)
        (param,) = broadcast_all(value)
        setattr(self, name, param)
        self._param = param
        batch_shape = Size() if isinstance(value, Number) else Size(param.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(batch_shape, _instance, Bernoulli, ("probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_empty(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(tuple(shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype, backend=self._param._backend)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return x.exp().log1p()
