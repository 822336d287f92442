"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from ..per_step import per_step
from ._checks import check_flags, check_ranges, to_scalar
from ._updates import with_weight_decay, write_state
from .optimizer import Optimizer


class SGD(Optimizer):
    """PyTorch's ``torch.optim.SGD``: ``d = g + wd*p``; with momentum ``b = m*b + (1-dampening)*d``
    (``b = d`` on the first step) and ``d = b`` (or ``d + m*b`` with Nesterov); ``p -= lr*d``.
    ``maximize`` ascends. ``foreach`` and ``fused`` choose PyTorch's CUDA kernels and have no
    effect here; ``differentiable=True`` is refused (the step is never taped).

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad(); (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.42
    """

    per_step_numbers = True   # its step's Python numbers come from per_step (a compiled step replays them)

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_ranges("SGD", lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(f"SGD: Nesterov momentum requires a momentum and zero dampening, got "
                             f"momentum={momentum}, dampening={dampening}")
        check_flags("SGD", differentiable=differentiable, fused=fused, foreach=foreach)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _update(self, p, grad, group, state):
        d = with_weight_decay(grad, p, group["weight_decay"])
        m = group["momentum"]
        if m != 0:
            buf = state.get("momentum_buffer")
            buf = write_state(state, "momentum_buffer",
                              d.clone() if buf is None else buf * m + d * (1 - group["dampening"]))
            d = d + buf * m if group["nesterov"] else buf
        return d * per_step(_lr, group)


def _lr(group):
    """The learning rate (a compiled step reads it again at each replay: a scheduler may change it)."""
    return to_scalar(group["lr"])


__all__ = ["SGD"]
