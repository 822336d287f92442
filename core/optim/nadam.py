"""NAdam: Adam with Nesterov momentum and a momentum-decay schedule."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ._checks import check_betas, check_flags, check_ranges, to_scalar
from ._updates import f32_mul, lerp, square_average, with_weight_decay, write_state
from .optimizer import Optimizer


class NAdam(Optimizer):
    """PyTorch's ``torch.optim.NAdam``: with ``mu_t = b1 * (1 - 0.5 * 0.96^(t*momentum_decay))``,
    ``P_t = mu_1...mu_t`` and ``denom = sqrt(v / (1-b2^t)) + eps``,
    ``p -= lr * ((1-mu_t)/(1-P_t) * g + mu_{t+1}/(1-P_t*mu_{t+1}) * m) / denom``.
    ``decoupled_weight_decay`` scales the parameter by ``1 - lr*wd`` instead of adding ``wd*p`` to
    the gradient (NAdamW). ``mu_product`` is rounded to float32 after each product, as PyTorch
    keeps it in a float32 tensor. ``foreach`` and ``capturable`` have no effect here;
    ``differentiable=True`` is refused.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = NAdam([w], lr=0.1)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.8944
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_ranges("NAdam", lr=lr, eps=eps)
        betas = check_betas("NAdam", betas)
        check_ranges("NAdam", weight_decay=weight_decay, momentum_decay=momentum_decay)
        check_flags("NAdam", differentiable=differentiable, foreach=foreach)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, p, grad, group, state):
        lr, (beta1, beta2), wd = to_scalar(group["lr"]), group["betas"], group["weight_decay"]
        if not state:
            state.update(step=0.0, mu_product=1.0, exp_avg=zeros_like(p), exp_avg_sq=zeros_like(p))
        state["step"] = step = state["step"] + 1
        if wd != 0 and group["decoupled_weight_decay"]:
            p.mul_(1 - lr * wd)
        else:
            grad = with_weight_decay(grad, p, wd)
        mu, mu_next = (beta1 * (1.0 - 0.5 * 0.96 ** (t * group["momentum_decay"])) for t in (step, step + 1))
        state["mu_product"] = mu_product = f32_mul(state["mu_product"], mu)
        m = write_state(state, "exp_avg", lerp(state["exp_avg"], grad, 1 - beta1))
        v = write_state(state, "exp_avg_sq", square_average(state["exp_avg_sq"], grad, beta2))
        denom = (v / (1 - beta2 ** step)).sqrt() + group["eps"]
        return (grad / denom * (lr * (1.0 - mu) / (1.0 - mu_product))
                + m / denom * (lr * mu_next / (1.0 - mu_product * mu_next)))


__all__ = ["NAdam"]
