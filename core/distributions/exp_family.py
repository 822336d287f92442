"""``ExponentialFamily``: distributions of the form exp(<t(x), theta> - F(theta) + k(x)) (PyTorch's
``torch.distributions.exp_family``); their entropy follows from the log-normaliser F by autograd."""
from __future__ import annotations

from ..autograd import grad
from ..engine import enable_grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base of exponential-family distributions: a subclass gives ``_natural_params``,
    ``_log_normalizer`` and ``_mean_carrier_measure``, and ``entropy`` is the Bregman divergence form
    F(theta) - <theta, grad F(theta)> - E[k(x)] (differentiable again).

    >>> import webgrad as wg
    >>> from webgrad.distributions import Exponential
    >>> round(ExponentialFamily.entropy(Exponential(wg.tensor([2.0]))).item(), 4)
    0.3069
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with enable_grad():
            log_normalizer = self._log_normalizer(*params)
            gradients = grad(log_normalizer.sum(), params, create_graph=True)
        result = result + log_normalizer
        for param, g in zip(params, gradients):
            result = result - (param * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
