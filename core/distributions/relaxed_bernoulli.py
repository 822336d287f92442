"""``RelaxedBernoulli(temperature, probs=None, logits=None)`` and ``LogitRelaxedBernoulli``: the
Concrete / Gumbel-sigmoid relaxation of a coin (PyTorch's ``torch.distributions.relaxed_bernoulli``)."""
from __future__ import annotations

from ..ops.random import rand
from ..size import Size
from . import constraints
from .bernoulli import parameter
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import batch_shape_of, binary_parameters, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli: (logit(U) + logits) / temperature, U uniform (``rand``'s
    draws, PyTorch's numbers for a seed).

    >>> import webgrad as wg
    >>> LogitRelaxedBernoulli(wg.tensor(0.5), wg.tensor([0.3])).rsample().shape
    webgrad.Size([1])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    logits, probs, param_shape = binary_parameters()
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        name, value = parameter("LogitRelaxedBernoulli", probs, logits)
        (param,) = broadcast_all(value)
        setattr(self, name, param)
        self._param = param
        super().__init__(batch_shape_of((value,), param), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(batch_shape, _instance, LogitRelaxedBernoulli, ("probs", "logits"))
        new.temperature = self.temperature
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_empty(*args, **kwargs)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(rand(shape, dtype=probs.dtype, backend=probs._backend))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """A coin relaxed onto (0, 1): sigmoid of a LogitRelaxedBernoulli; lower ``temperature`` is
    closer to Bernoulli. Reparameterised (``rsample``).

    >>> import webgrad as wg
    >>> from webgrad.distributions import RelaxedBernoulli
    >>> x = RelaxedBernoulli(wg.tensor(0.1), wg.tensor([0.3])).rsample((4,))
    >>> x.shape, bool(((x > 0) & (x < 1)).all().item())
    (webgrad.Size([4, 1]), True)
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(RelaxedBernoulli, _instance))

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
