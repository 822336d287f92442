"""ASGD: averaged stochastic gradient descent (Polyak-Ruppert averaging after ``t0`` steps)."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ._checks import check_flags, check_ranges, to_scalar
from ..dtypes import round_to_float32
from ._updates import with_weight_decay, write_state
from .optimizer import Optimizer


class ASGD(Optimizer):
    """PyTorch's ``torch.optim.ASGD``: ``p = p*(1 - lambd*eta) - eta*g``; the average ``ax``
    follows ``p`` (``ax += mu*(p - ax)``); then ``eta = lr / (1 + lambd*lr*t)^alpha`` and
    ``mu = 1 / max(1, t - t0)``. ``eta`` and ``mu`` are rounded to float32, as PyTorch keeps them
    in float32 tensors. ``foreach`` and ``capturable`` have no effect here; ``differentiable=True``
    is refused.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = ASGD([w], lr=0.1)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4), round(opt.state[w]["ax"].item(), 4)
    (0.8, 0.8)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_ranges("ASGD", lr=lr, weight_decay=weight_decay)
        check_flags("ASGD", differentiable=differentiable, foreach=foreach)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, p, grad, group, state):
        if not state:
            state.update(step=0.0, eta=round_to_float32(to_scalar(group["lr"])), mu=1.0, ax=zeros_like(p))
        state["step"] += 1
        grad = with_weight_decay(grad, p, group["weight_decay"])
        p.mul_(1 - group["lambd"] * state["eta"])
        return grad * state["eta"]

    def _step_param(self, p, group):
        super()._step_param(p, group)
        state, lr, step = self.state[p], to_scalar(group["lr"]), self.state[p]["step"]
        write_state(state, "ax", p.clone() if state["mu"] == 1 else state["ax"] + (p - state["ax"]) * state["mu"])
        state["eta"] = round_to_float32(lr / ((1 + group["lambd"] * lr * step) ** group["alpha"]))
        state["mu"] = round_to_float32(1 / max(1, step - group["t0"]))


__all__ = ["ASGD"]
