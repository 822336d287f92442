"""Adamax: Adam with the infinity norm in place of the second moment."""
from __future__ import annotations

from ..ops.binary import maximum
from ..ops.creation import zeros_like
from ..per_step import per_step
from ._checks import check_betas, check_flags, check_ranges, to_scalar
from ._updates import lerp, with_weight_decay, write_state
from .optimizer import Optimizer


class Adamax(Optimizer):
    """PyTorch's ``torch.optim.Adamax``: ``m = lerp(m, g, 1-b1)``; ``u = max(b2*u, |g| + eps)``;
    ``p -= lr / (1 - b1^t) * m / u``. ``foreach`` and ``capturable`` have no effect here;
    ``differentiable=True`` is refused.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = Adamax([w], lr=0.1)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9
    """

    per_step_numbers = True   # its step's Python numbers come from per_step (a compiled step replays them)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_ranges("Adamax", lr=lr, eps=eps, weight_decay=weight_decay)
        betas = check_betas("Adamax", betas)
        check_flags("Adamax", differentiable=differentiable, foreach=foreach)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _update(self, p, grad, group, state):
        beta1, beta2 = group["betas"]
        if not state:
            state.update(step=0.0, exp_avg=zeros_like(p), exp_inf=zeros_like(p))
        step_size = per_step(_step_size, group, state)
        grad = with_weight_decay(grad, p, group["weight_decay"])
        m = write_state(state, "exp_avg", lerp(state["exp_avg"], grad, 1 - beta1))
        u = write_state(state, "exp_inf", maximum(state["exp_inf"] * beta2, grad.abs() + group["eps"]))
        return m / u * step_size


def _step_size(group, state):
    """One more step; lr over the first moment's bias correction (re-run by a compiled step: see
    ``webgrad.per_step``)."""
    state["step"] = step = state["step"] + 1
    return to_scalar(group["lr"]) / (1 - group["betas"][0] ** step)


__all__ = ["Adamax"]
