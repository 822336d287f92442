"""``Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None)`` (PyTorch's
``torch.distributions.wishart``): positive-definite matrices, sampled by Bartlett's decomposition."""
from __future__ import annotations

import math
import warnings
from numbers import Number

from ..dtype_info import finfo
from ..linalg import cholesky, slogdet
from ..linalg.cholesky_ops import cholesky_solve
from ..ops.binary import where
from ..ops.creation import arange, eye
from ..ops.joining import broadcast_shapes
from ..ops.random import randn
from ..ops.special import mvlgamma
from ..size import Size
from ..tensor import tensor
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import precision_to_scale_tril
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)
_MATRICES = ("covariance_matrix", "precision_matrix", "scale_tril")


def _mvdigamma(x, p):
    """The multivariate digamma function: sum of digamma(x - i/2), i < p."""
    if not bool((x > (p - 1) / 2).all().item()):
        raise ValueError("Wrong domain for multivariate digamma function.")
    return (x.unsqueeze(-1) - arange(p, dtype=x.dtype, backend=x._backend) / 2).digamma().sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom and one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril``; ``rsample`` is Bartlett's (chi-squared diagonal, normal
    below: PyTorch's draws for a seed), differentiable in the parameters.

    >>> import webgrad as wg
    >>> d = Wishart(wg.tensor(4.0), covariance_matrix=wg.eye(2))
    >>> d.mean.tolist(), d.sample().shape
    ([[4.0, 0.0], [0.0, 4.0]], webgrad.Size([2, 2]))
    """
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = {k: v for k, v in zip(_MATRICES, (covariance_matrix, precision_matrix, scale_tril)) if v is not None}
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        ((name, param),) = given.items()
        if param.ndim < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype, backend=param._backend)
        else:
            batch_shape = Size(broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(tuple(batch_shape))
        event_shape = Size(param.shape[-2:])
        if bool((self.df <= event_shape[-1] - 1).any().item()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if bool((self.df < event_shape[-1]).any().item()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        make_tril = {"scale_tril": lambda m: m, "covariance_matrix": cholesky,
                     "precision_matrix": precision_to_scale_tril}[name]
        self._unbroadcasted_scale_tril = make_tril(param)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        p = self._event_shape[-1]
        steps = arange(p, dtype=self._unbroadcasted_scale_tril.dtype, backend=self._unbroadcasted_scale_tril._backend)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in _MATRICES:
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        tril = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], dtype=tril.dtype, backend=tril._backend)
        return cholesky_solve(identity, tril).expand(self._matrix_shape())

    def _df_matrix(self, df):
        return df.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        return self._df_matrix(where(factor <= 0, math.nan, factor)) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag_v = v.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (v.pow(2) + diag_v.unsqueeze(-1) * diag_v.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=Size()):
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = chi.clamp(min=finfo(chi.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        below = randn(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,), dtype=noise.dtype,
                      backend=noise._backend)
        chol = self._unbroadcasted_scale_tril @ (noise + vec_to_tril_matrix(below, diag=-1))
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett draws, then PyTorch's correction loop, as PyTorch runs it: its first test flags the
        draws that *pass* the positive-definite check (PyTorch's code reads ``is_singular =
        support.check(sample)``), so every draw is made twice, with its "Singular sample detected"
        warning; the numbers are PyTorch's for a seed and the law is the same."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        flagged = self.support.check(sample)
        if self._batch_shape:
            flagged = flagged.amax(self._batch_dims)
        if bool(flagged.any().item()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(Size((int(flagged.sum().item()),)))
                sample[flagged] = sample_new
                again = ~self.support.check(sample_new)
                if self._batch_shape:
                    again = again.amax(self._batch_dims)
                flagged[flagged.clone()] = again
                if not bool(flagged.any().item()):
                    break
        return sample

    def _log_scale_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        return (-nu * (p * _LOG_2 / 2 + self._log_scale_det()) - mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet
                - cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(-1) / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._log_scale_det()) + mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu, p = self.df, self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p) + mvlgamma(y + (p + 1) / 2, p=p)
