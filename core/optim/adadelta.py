"""Adadelta: step sizes from the ratio of running RMS of updates to running RMS of gradients."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ._checks import check_flags, check_ranges, to_scalar
from ._updates import square_average, with_weight_decay, write_state
from .optimizer import Optimizer


class Adadelta(Optimizer):
    """PyTorch's ``torch.optim.Adadelta``: ``v = rho*v + (1-rho)*g²``;
    ``d = sqrt(u + eps) / sqrt(v + eps) * g``; ``u = rho*u + (1-rho)*d²``; ``p -= lr*d``.
    ``foreach`` and ``capturable`` have no effect here; ``differentiable=True`` is refused.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = Adadelta([w])
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9968
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_ranges("Adadelta", lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        check_flags("Adadelta", differentiable=differentiable, foreach=foreach)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _update(self, p, grad, group, state):
        rho, eps = group["rho"], group["eps"]
        if not state:
            state.update(step=0.0, square_avg=zeros_like(p), acc_delta=zeros_like(p))
        state["step"] += 1
        grad = with_weight_decay(grad, p, group["weight_decay"])
        v = write_state(state, "square_avg", square_average(state["square_avg"], grad, rho))
        delta = (state["acc_delta"] + eps).sqrt() / (v + eps).sqrt() * grad
        write_state(state, "acc_delta", square_average(state["acc_delta"], delta, rho))
        return delta * to_scalar(group["lr"])


__all__ = ["Adadelta"]
