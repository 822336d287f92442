"""Adam and AdamW (decoupled weight decay), with AMSGrad."""
from __future__ import annotations

import math

from ..ops.creation import zeros_like
from .optimizer import Optimizer


class Adam(Optimizer):
    """PyTorch's ``torch.optim.Adam``: moment estimates ``m``, ``v`` with bias correction;
    ``weight_decay`` adds ``wd*p`` to the gradient (L2); ``amsgrad`` keeps the running max of ``v``.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = Adam([w], lr=0.1)
    >>> (w * 3).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9
    """

    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 maximize=False):
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"{type(self).__name__}: invalid hyper-parameters lr={lr}, betas={betas}, eps={eps}, "
                             f"weight_decay={weight_decay} (need lr, eps, weight_decay >= 0 and 0 <= beta < 1)")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def _update(self, p, grad, group, state):
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        if wd and self.decoupled:
            p.mul_(1 - lr * wd)       # the decoupled decay scales the parameter itself (in place)
        elif wd:
            grad = grad + wd * p
        if not state:
            state.update(step=0, exp_avg=zeros_like(grad), exp_avg_sq=zeros_like(grad))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_like(grad)
        state["step"] += 1
        step = state["step"]
        state["exp_avg"] = m = state["exp_avg"] * beta1 + grad * (1 - beta1)
        state["exp_avg_sq"] = v = state["exp_avg_sq"] * beta2 + grad * grad * (1 - beta2)
        if group["amsgrad"]:
            from ..ops.binary import maximum
            state["max_exp_avg_sq"] = v = maximum(state["max_exp_avg_sq"], v)
        denom = v.sqrt() / math.sqrt(1 - beta2 ** step) + group["eps"]
        return (lr / (1 - beta1 ** step)) * m / denom


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr*wd`` before the Adam step); default wd 0.01.

    >>> import webgrad as wg
    >>> AdamW([wg.nn.Parameter(wg.ones(1))]).defaults["weight_decay"]
    0.01
    """

    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


__all__ = ["Adam", "AdamW"]
