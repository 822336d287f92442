"""PyTorch's ``torch.optim.SparseAdam``: Adam for sparse gradients. webgrad's gradients are always
dense, so, as PyTorch's SparseAdam does for a dense gradient, its ``step`` raises."""
from __future__ import annotations

from ._checks import check_betas, check_ranges
from .optimizer import Optimizer


class SparseAdam(Optimizer):
    """Takes PyTorch's arguments (with its checks); ``step`` raises RuntimeError for any gradient,
    as PyTorch's does for a dense one: webgrad has no sparse gradients (``nn.Embedding(sparse=True)``
    gives dense ones). Use ``Adam`` (the same update for the rows a sparse gradient would touch,
    plus moment decay elsewhere).

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.ones(2)); opt = SparseAdam([w]); w.sum().backward()
    >>> opt.step()
    Traceback (most recent call last):
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead (webgrad's gradients are always dense)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        check_ranges("SparseAdam", lr=lr, eps=eps)
        betas = check_betas("SparseAdam", betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def _update(self, p, grad, group, state):
        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead (webgrad's "
                           "gradients are always dense)")


__all__ = ["SparseAdam"]
