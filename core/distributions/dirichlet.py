"""``Dirichlet(concentration)``: distributions on the simplex (PyTorch's ``torch.distributions.dirichlet``)."""
from __future__ import annotations

from ..nn.functional.sparse import one_hot
from ..ops.binary import where
from ..ops.random_samplers import _sample_dirichlet
from ..size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import xlogy

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Density prod x_i^(a_i - 1) / B(a) on the simplex of the last dimension. Samples are
    PyTorch's for a seed (``_sample_dirichlet``), and so is ``rsample``'s gradient (its
    ``_dirichlet_grad``).

    >>> import webgrad as wg
    >>> from webgrad.distributions import Dirichlet
    >>> d = Dirichlet(wg.tensor([1.0, 1.0, 2.0]))
    >>> d.mean.tolist(), d.event_shape
    ([0.25, 0.25, 0.5], webgrad.Size([3]))
    """
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(Size(concentration.shape[:-1]), Size(concentration.shape[-1:]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        return _sample_dirichlet(self.concentration.expand(tuple(self._extended_shape(sample_shape))))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration - 1.0, value).sum(-1) + self.concentration.sum(-1).lgamma()
                - self.concentration.lgamma().sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        corner = one_hot(mode.argmax(-1), concentrationm1.shape[-1]).to(mode.dtype)
        return where((self.concentration < 1).all(-1, keepdim=True), corner, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        return (self.concentration.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
