"""``Geometric(probs=None, logits=None)``: failures before the first success (PyTorch's
``torch.distributions.geometric``)."""
from __future__ import annotations

from ..dtype_info import finfo
from ..engine import no_grad
from ..nn.functional.loss import binary_cross_entropy_with_logits
from ..ops.binary import where
from ..ops.creation import zeros_like
from ..size import Size
from . import constraints
from .bernoulli import parameter
from .distribution import Distribution
from .utils import batch_shape_of, binary_parameters, broadcast_all

__all__ = ["Geometric"]


class Geometric(Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, ...; samples floor(log U / log1p(-p)), U uniform in
    (tiny, 1) as PyTorch draws it (its numbers for a seed).

    >>> import webgrad as wg
    >>> from webgrad.distributions import Geometric
    >>> Geometric(wg.tensor([0.5])).log_prob(wg.tensor([1.0])).exp().tolist()
    [0.25]
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    logits, probs = binary_parameters()[:2]
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = parameter("Geometric", probs, logits)
        (param,) = broadcast_all(value)
        setattr(self, name, param)
        super().__init__(batch_shape_of((value,), param), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all().item()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found invalid "
                             f"values:\n{self.probs}")

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, _instance, Geometric, ("probs", "logits"))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            u = self.probs.new_empty(tuple(shape)).uniform_(finfo(self.probs.dtype).tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
