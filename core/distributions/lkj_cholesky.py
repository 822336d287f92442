"""``LKJCholesky(dim, concentration=1.0)``: Cholesky factors of LKJ-distributed correlation matrices
(PyTorch's ``torch.distributions.lkj_cholesky``), sampled by the onion method."""
from __future__ import annotations

import math

from ..dtype_info import finfo
from ..ops.binary import where
from ..ops.creation import arange
from ..ops.movement import cat
from ..ops.random import randn
from ..ops.special import mvlgamma
from ..size import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Lower Cholesky factors L of correlation matrices with density proportional to
    det(L L^T)^(concentration - 1); samples draw Beta then normal values as PyTorch's (its numbers
    for a seed).

    >>> import webgrad as wg
    >>> d = LKJCholesky(3, wg.tensor(2.0))
    >>> L = d.sample()
    >>> L.shape, [round(v, 5) for v in (L @ L.mT).diagonal().tolist()]
    (webgrad.Size([3, 3]), [1.0, 1.0, 1.0])
    """
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype, backend=self.concentration._backend)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(Size(self.concentration.shape), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype, backend=y._backend).tril(-1)
        first_row = arange(self.dim, backend=y._backend).unsqueeze(-1) == 0
        u_hypersphere = where(first_row, 0.0, u_normal / (u_normal ** 2).sum(-1, keepdim=True).sqrt())
        w = y.sqrt() * u_hypersphere
        diag_elems = (1 - (w ** 2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
        return w + diag_elems.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, backend=self.concentration._backend)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize_term = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - alpha.lgamma() * dm1
        return unnormalized_log_pdf - normalize_term
