"""Probability distributions (PyTorch's ``torch.distributions``), composed from webgrad's ops:
they run on every backend, and ``log_prob``, ``entropy``, ``rsample`` and ``kl_divergence`` are
differentiable in the parameters. Sampling draws from webgrad's generators, which give PyTorch's
numbers: after ``wg.manual_seed(s)`` a distribution's samples are PyTorch's for the same seed
(normal, uniform, exponential, Cauchy draws and PyTorch's own Gamma, Poisson, Binomial and
Dirichlet samplers alike), except where a docstring says otherwise.

Here: every distribution PyTorch has, the transforms, ``biject_to``/``transform_to``,
``kl_divergence``/``register_kl`` and ``constraints``.

>>> import webgrad as wg
>>> from webgrad.distributions import Categorical
>>> m = Categorical(logits=wg.zeros(4))
>>> action = m.sample()
>>> round(m.log_prob(action).item(), 4)
-1.3863
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from . import kl_pairs  # noqa: E402,F401  (registers the other pairs)
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "ExponentialFamily", "Exponential", "FisherSnedecor", "Gamma", "GeneralizedPareto",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
           "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
           "constraints", "kl_divergence", "register_kl", "transform_to", *transforms.__all__]

from ..porting_table import module_getattr as _module_getattr  # noqa: E402  (PyTorch's names not here: say so)
__getattr__ = _module_getattr("webgrad.distributions")
