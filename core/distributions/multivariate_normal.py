"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``
(PyTorch's ``torch.distributions.multivariate_normal``)."""
from __future__ import annotations

import math

from ..linalg import cholesky, solve_triangular
from ..ops.creation import eye
from ..ops.joining import broadcast_shapes
from ..linalg.cholesky_ops import cholesky_inverse
from ..ops.random import randn
from ..size import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batches."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def batch_mahalanobis(bL, bx):
    """|L^-1 x|² for lower-triangular L, over broadcast batches: one triangular solve."""
    shape = broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    n = bx.shape[-1]
    solved = solve_triangular(bL.expand(tuple(shape) + (n, n)), bx.expand(tuple(shape) + (n,)).unsqueeze(-1),
                              upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1, from the Cholesky factor of P flipped (PyTorch's way)."""
    lf = cholesky(P.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).transpose(-2, -1)
    return solve_triangular(l_inv, eye(P.shape[-1], dtype=P.dtype, backend=P._backend), upper=False)


_MATRICES = ("covariance_matrix", "precision_matrix", "scale_tril")


class MultivariateNormal(Distribution):
    """A Gaussian over vectors, given by exactly one of ``covariance_matrix``, ``precision_matrix``
    or ``scale_tril`` (its lower Cholesky factor); ``rsample`` is loc + L eps (PyTorch's numbers for
    a seed), differentiable in every parameter.

    >>> import webgrad as wg
    >>> from webgrad.distributions import MultivariateNormal
    >>> d = MultivariateNormal(wg.zeros(2), covariance_matrix=wg.eye(2))
    >>> round(d.log_prob(wg.zeros(2)).item(), 4), d.event_shape
    (-1.8379, webgrad.Size([2]))
    """
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {k: v for k, v in zip(_MATRICES, (covariance_matrix, precision_matrix, scale_tril)) if v is not None}
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        ((name, matrix),) = given.items()
        if matrix.ndim < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = Size(broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, Size(self.loc.shape[-1:]), validate_args=validate_args)
        make_tril = {"scale_tril": lambda m: m, "covariance_matrix": cholesky,
                     "precision_matrix": precision_to_scale_tril}[name]
        self._unbroadcasted_scale_tril = make_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in _MATRICES:
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(loc_shape + tuple(self.event_shape)))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape) +
                                                                    tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = randn(shape, dtype=self.loc.dtype, backend=self.loc._backend)
        return self.loc + batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(tuple(self._batch_shape))
