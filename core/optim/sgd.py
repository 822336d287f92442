"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from .optimizer import Optimizer


class SGD(Optimizer):
    """PyTorch's ``torch.optim.SGD``: ``d = g + wd*p``; with momentum ``b = m*b + (1-dampening)*d``
    (``b = d`` on the first step) and ``d = b`` (or ``d + m*b`` with Nesterov); ``p -= lr*d``.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad(); (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.42
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, *,
                 maximize=False):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: lr, momentum and weight_decay must be >= 0, got lr={lr}, momentum={momentum}, "
                             f"weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    def _update(self, p, grad, group, state):
        d = grad + group["weight_decay"] * p if group["weight_decay"] else grad
        m = group["momentum"]
        if m:
            buf = state.get("momentum_buffer")
            buf = d if buf is None else buf * m + (1 - group["dampening"]) * d
            state["momentum_buffer"] = buf
            d = d + m * buf if group["nesterov"] else buf
        return group["lr"] * d


__all__ = ["SGD"]
