"""``Chi2(df)``: Gamma(df / 2, 1 / 2) (PyTorch's ``torch.distributions.chi2``)."""
from __future__ import annotations

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom.

    >>> import webgrad as wg
    >>> from webgrad.distributions import Chi2
    >>> Chi2(wg.tensor([3.0])).mean.tolist()
    [3.0]
    """
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        return self.concentration * 2
