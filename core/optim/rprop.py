"""Rprop: per-coordinate step sizes grown or shrunk by the sign agreement of successive gradients."""
from __future__ import annotations

from ..ops.binary import where
from ..ops.creation import full_like, zeros_like
from ._checks import check_flags, check_ranges, to_scalar
from ._updates import write_state
from .optimizer import Optimizer


class Rprop(Optimizer):
    """PyTorch's ``torch.optim.Rprop``: where ``g * g_prev`` is positive the step size grows by
    ``etas[1]``, where negative it shrinks by ``etas[0]`` (and that coordinate's gradient counts as
    0, so it does not move), within ``step_sizes``; ``p -= sign(g) * step_size``. ``foreach`` and
    ``capturable`` have no effect here; ``differentiable=True`` is refused.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = Rprop([w], lr=0.1)
    >>> (w * 2).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_ranges("Rprop", lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Rprop: Invalid eta values: {etas[0]}, {etas[1]} (wanted 0 < etas[0] < 1 < etas[1])")
        check_flags("Rprop", differentiable=differentiable, foreach=foreach)
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, p, grad, group, state):
        (eta_minus, eta_plus), (smallest, largest) = group["etas"], group["step_sizes"]
        if not state:
            state.update(step=0.0, prev=zeros_like(p), step_size=full_like(p, to_scalar(group["lr"])))
        state["step"] += 1
        agree = grad * state["prev"]
        factor = where(agree > 0, eta_plus, where(agree < 0, eta_minus, full_like(agree, 1.0)))
        size = write_state(state, "step_size", (state["step_size"] * factor).clamp(smallest, largest))
        grad = write_state(state, "prev", where(agree < 0, 0.0, grad))
        return grad.sign() * size


__all__ = ["Rprop"]
