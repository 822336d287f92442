"""Probability distributions (PyTorch's ``torch.distributions``), composed from webgrad's ops:
they run on every backend, and ``log_prob``, ``entropy``, ``rsample`` and ``kl_divergence`` are
differentiable in the parameters. Sampling draws from webgrad's generators (``wg.manual_seed``),
so seeded samples repeat within webgrad but differ from PyTorch's draws.

Here: ``Distribution``, ``Bernoulli``, ``Categorical``, ``OneHotCategorical``, ``Normal``,
``Uniform``, ``kl_divergence``/``register_kl``, ``constraints``. Not yet: the others PyTorch has
(``Beta``, ``Gamma``, ``MultivariateNormal``, transforms, ...).

>>> import webgrad as wg
>>> from webgrad.distributions import Categorical
>>> m = Categorical(logits=wg.zeros(4))
>>> action = m.sample()
>>> round(m.log_prob(action).item(), 4)
-1.3863
"""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "OneHotCategorical", "Uniform", "constraints",
           "kl_divergence", "register_kl"]

from ..porting_table import module_getattr as _module_getattr  # noqa: E402  (PyTorch's names not here: say so)
__getattr__ = _module_getattr("webgrad.distributions")
