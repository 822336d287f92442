"""``Laplace(loc, scale)``: the double exponential (PyTorch's ``torch.distributions.laplace``)."""
from __future__ import annotations

from ..dtype_info import finfo
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import batch_shape_of, broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Density exp(-|x - loc| / scale) / (2 scale); ``rsample`` draws U uniform in (eps - 1, 1) as
    PyTorch does (its numbers for a seed): loc - scale * sign(U) * log1p(-|U|).

    >>> import webgrad as wg
    >>> from webgrad.distributions import Laplace
    >>> round(Laplace(0.0, 1.0).log_prob(wg.tensor(1.0)).item(), 4)
    -1.6931
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(batch_shape, _instance, Laplace, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = self.loc.new_empty(tuple(shape)).uniform_(finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
