"""RMSprop, with momentum and the centered variant."""
from __future__ import annotations

from ..ops.creation import zeros_like
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """PyTorch's ``torch.optim.RMSprop``: ``s = a*s + (1-a)*g²``; divide the step by ``sqrt(s) + eps``
    (``sqrt(s - mean(g)²)`` when ``centered``); optional momentum buffer.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = RMSprop([w], lr=0.01)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 3)
    0.9
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 *, maximize=False):
        if lr < 0 or eps < 0 or weight_decay < 0 or momentum < 0 or alpha < 0:
            raise ValueError(f"RMSprop: lr, alpha, eps, weight_decay and momentum must be >= 0, got lr={lr}, "
                             f"alpha={alpha}, eps={eps}, weight_decay={weight_decay}, momentum={momentum}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize))

    def _update(self, p, grad, group, state):
        alpha, wd, m = group["alpha"], group["weight_decay"], group["momentum"]
        if wd:
            grad = grad + wd * p
        if not state:
            state.update(step=0, square_avg=zeros_like(grad))
            if m:
                state["momentum_buffer"] = zeros_like(grad)
            if group["centered"]:
                state["grad_avg"] = zeros_like(grad)
        state["step"] += 1
        state["square_avg"] = sq = state["square_avg"] * alpha + grad * grad * (1 - alpha)
        if group["centered"]:
            state["grad_avg"] = ga = state["grad_avg"] * alpha + grad * (1 - alpha)
            avg = (sq - ga * ga).sqrt() + group["eps"]
        else:
            avg = sq.sqrt() + group["eps"]
        if m:
            state["momentum_buffer"] = buf = state["momentum_buffer"] * m + grad / avg
            return group["lr"] * buf
        return group["lr"] * grad / avg


__all__ = ["RMSprop"]
