"""Adagrad: per-coordinate step sizes from the running sum of squared gradients."""
from __future__ import annotations

from ..ops.creation import full_like
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """PyTorch's ``torch.optim.Adagrad``: ``s += g²``; ``p -= lr / (1 + (t-1)*lr_decay) * g / (sqrt(s) + eps)``.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = Adagrad([w], lr=0.5)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.5
    """

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                 *, maximize=False):
        if lr < 0 or lr_decay < 0 or weight_decay < 0 or initial_accumulator_value < 0 or eps < 0:
            raise ValueError(f"Adagrad: lr, lr_decay, weight_decay, initial_accumulator_value and eps must be >= 0, "
                             f"got {lr}, {lr_decay}, {weight_decay}, {initial_accumulator_value}, {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                                      initial_accumulator_value=initial_accumulator_value, maximize=maximize))

    def _update(self, p, grad, group, state):
        if not state:
            state.update(step=0, sum=full_like(p, group["initial_accumulator_value"]))
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] = s = state["sum"] + grad * grad
        return clr * grad / (s.sqrt() + group["eps"])


__all__ = ["Adagrad"]
