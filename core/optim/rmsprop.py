"""RMSprop, with momentum and the centered variant."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ..per_step import per_step
from ._checks import check_flags, check_ranges, to_scalar
from ._updates import addcmul, lerp, square_average, with_weight_decay, write_state
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """PyTorch's ``torch.optim.RMSprop``: ``s = a*s + (1-a)*g²``; divide the step by ``sqrt(s) + eps``
    (``sqrt(s - mean(g)²)`` when ``centered``); optional momentum buffer. ``capturable`` and
    ``foreach`` have no effect here; ``differentiable=True`` is refused.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = RMSprop([w], lr=0.01)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 3)
    0.9
    """

    per_step_numbers = True   # its step's Python numbers come from per_step (a compiled step replays them)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_ranges("RMSprop", lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        check_flags("RMSprop", differentiable=differentiable, foreach=foreach)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _update(self, p, grad, group, state):
        alpha, m = group["alpha"], group["momentum"]
        if not state:
            state.update(step=0.0, square_avg=zeros_like(p))
            if m > 0:
                state["momentum_buffer"] = zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = zeros_like(p)
        lr = per_step(_count_step, group, state)
        grad = with_weight_decay(grad, p, group["weight_decay"])
        sq = write_state(state, "square_avg", square_average(state["square_avg"], grad, alpha))
        if group["centered"]:
            ga = write_state(state, "grad_avg", lerp(state["grad_avg"], grad, 1 - alpha))
            sq = addcmul(sq, ga, ga, -1)
        avg = sq.sqrt() + group["eps"]
        if m > 0:
            buf = write_state(state, "momentum_buffer", state["momentum_buffer"] * m + grad / avg)
            return buf * lr
        return grad / avg * lr


def _count_step(group, state):
    """One more step; the learning rate (Python, re-run by a compiled step: see ``webgrad.per_step``)."""
    state["step"] += 1
    return to_scalar(group["lr"])


__all__ = ["RMSprop"]
