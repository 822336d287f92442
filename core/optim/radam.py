"""RAdam: Adam whose adaptive term is switched on once its variance is tractable, and rectified."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ._checks import check_betas, check_flags, check_ranges, to_scalar
from ._updates import lerp, square_average, with_weight_decay, write_state
from .optimizer import Optimizer


class RAdam(Optimizer):
    """PyTorch's ``torch.optim.RAdam``: with ``rho_inf = 2/(1-b2) - 1`` and
    ``rho_t = rho_inf - 2t*b2^t/(1-b2^t)``, the step is ``lr * m/(1-b1^t)`` times, once
    ``rho_t > 5``, ``r_t * sqrt(1-b2^t) / (sqrt(v) + eps)`` (``r_t`` the variance rectification).
    ``decoupled_weight_decay`` scales the parameter by ``1 - lr*wd`` instead of adding ``wd*p`` to
    the gradient. ``foreach`` and ``capturable`` have no effect here; ``differentiable=True`` is refused.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = RAdam([w], lr=0.1)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.8
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_ranges("RAdam", lr=lr, eps=eps)
        betas = check_betas("RAdam", betas)
        check_ranges("RAdam", weight_decay=weight_decay)
        check_flags("RAdam", differentiable=differentiable, foreach=foreach)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _update(self, p, grad, group, state):
        lr, (beta1, beta2), wd = to_scalar(group["lr"]), group["betas"], group["weight_decay"]
        if not state:
            state.update(step=0.0, exp_avg=zeros_like(p), exp_avg_sq=zeros_like(p))
        state["step"] = step = state["step"] + 1
        if wd != 0 and group["decoupled_weight_decay"]:
            p.mul_(1 - lr * wd)
        else:
            grad = with_weight_decay(grad, p, wd)
        m = write_state(state, "exp_avg", lerp(state["exp_avg"], grad, 1 - beta1))
        v = write_state(state, "exp_avg_sq", square_average(state["exp_avg_sq"], grad, beta2))
        bias_correction2 = 1 - beta2 ** step
        step_ = m / (1 - beta1 ** step) * lr
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2 ** step / bias_correction2
        if rho_t <= 5.0:
            return step_
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        return step_ * (bias_correction2 ** 0.5 / (v.sqrt() + group["eps"])) * rect


__all__ = ["RAdam"]
