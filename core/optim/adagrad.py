"""Adagrad: per-coordinate step sizes from the running sum of squared gradients."""
from __future__ import annotations

from ..ops.creation import full_like
from ..per_step import per_step
from ._checks import check_flags, check_ranges, to_scalar
from ._updates import addcmul, with_weight_decay, write_state
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """PyTorch's ``torch.optim.Adagrad``: ``s += g²``; ``p -= lr / (1 + (t-1)*lr_decay) * g / (sqrt(s) + eps)``.
    As in PyTorch the state (``step``, ``sum``) exists from construction, and ``sum`` starts at the
    constructor's ``initial_accumulator_value`` in every group. ``foreach`` and ``fused`` have no
    effect here; ``differentiable=True`` is refused.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = Adagrad([w], lr=0.5)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.5
    """

    per_step_numbers = True   # its step's Python numbers come from per_step (a compiled step replays them)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_ranges("Adagrad", lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                     initial_accumulator_value=initial_accumulator_value, eps=eps)
        check_flags("Adagrad", differentiable=differentiable, fused=fused, foreach=foreach)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p])

    def _init_state(self, p, state):
        state.update(step=0.0, sum=full_like(p, self.defaults["initial_accumulator_value"]))

    def _update(self, p, grad, group, state):
        if not state:
            self._init_state(p, state)
        clr = per_step(_step_lr, group, state)
        grad = with_weight_decay(grad, p, group["weight_decay"])
        s = write_state(state, "sum", addcmul(state["sum"], grad, grad, 1))
        return grad / (s.sqrt() + group["eps"]) * clr


def _step_lr(group, state):
    """One more step; its decayed learning rate (re-run by a compiled step: see ``webgrad.per_step``)."""
    state["step"] = step = state["step"] + 1
    return to_scalar(group["lr"]) / (1 + (step - 1) * group["lr_decay"])


__all__ = ["Adagrad"]
