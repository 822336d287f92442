"""Adafactor (PyTorch 2.5's ``torch.optim.Adafactor``): Adam-like steps whose second moment of a
matrix gradient is kept factored, as a row and a column vector."""
from __future__ import annotations

from ..dtype_info import finfo
from ..ops.creation import zeros, zeros_like
from ._checks import check_flags, check_ranges, to_scalar
from ._updates import lerp, write_state
from .optimizer import Optimizer


class Adafactor(Optimizer):
    """PyTorch's ``torch.optim.Adafactor``: with ``rho = min(lr, 1/sqrt(t))`` and
    ``beta2_t = t ** beta2_decay``, a matrix gradient updates row and column means of its squares
    (lerp by ``beta2_t``), whose outer product (over the row mean's mean) estimates the variance; a
    vector's is kept whole. The step ``g / sqrt(var)`` is clipped to RMS ``d`` and scaled by
    ``max(eps2, RMS(p)) * rho``; ``weight_decay`` scales ``p`` by ``1 - lr * weight_decay`` first.
    ``eps=(None, ...)`` takes the dtype's machine epsilon, as PyTorch. ``foreach``: no effect.
    Each step reads two norms back per parameter, as PyTorch's ``.item()`` calls do.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0, 2.0]))
    >>> opt = Adafactor([w]); (w * w).sum().backward(); opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.9842, 1.9842]
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        check_ranges("Adafactor", lr=lr, weight_decay=weight_decay)
        checks = (("beta2_decay should be <= 0", beta2_decay <= 0.0, beta2_decay),
                  ("epsilon1 should be >= 0", eps[0] is None or eps[0] >= 0.0, eps[0]),
                  ("epsilon2 should be >= 0", eps[1] >= 0.0, eps[1]),
                  ("Clipping threshold d should be >= 1", d >= 1.0, d))
        for what, ok, value in checks:
            if not ok:
                raise ValueError(f"Adafactor: {what} but is: {value}")
        check_flags("Adafactor", foreach=foreach)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def _init_state(self, p, grad, state):
        if grad.ndim > 1:
            row, col = list(grad.shape), list(grad.shape)
            row[-1], col[-2] = 1, 1
            state.update(step=0.0, row_var=zeros(*row, dtype=grad.dtype, device=grad.device),
                         col_var=zeros(*col, dtype=grad.dtype, device=grad.device))
        else:
            state.update(step=0.0, variance=zeros_like(grad))

    def _step_param(self, p, group):
        grad = -p.grad if group["maximize"] else p.grad
        state = self.state[p]
        if not state:
            self._init_state(p, grad, state)
        lr, (eps1, eps2), d = to_scalar(group["lr"]), group["eps"], group["d"]
        eps1 = finfo(p.dtype).eps if eps1 is None else eps1
        state["step"] = step = state["step"] + 1
        beta2_t = step ** group["beta2_decay"]
        rho = min(lr, 1 / step ** 0.5)
        alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho
        new = p * (1 - lr * group["weight_decay"]) if group["weight_decay"] != 0 else p
        update = self._variance(grad, state, beta2_t, eps1).clamp(min=eps1 * eps1).rsqrt() * grad
        denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
        p._assign(new + update * (-alpha / denom), "Adafactor.step")

    @staticmethod
    def _variance(grad, state, beta2_t, eps1):
        if grad.ndim <= 1:
            return write_state(state, "variance", lerp(state["variance"], grad * grad, beta2_t)).clone()
        row_mean = grad.norm(dim=-1, keepdim=True).square() / grad.shape[-1]
        row = write_state(state, "row_var", lerp(state["row_var"], row_mean, beta2_t))
        col_mean = grad.norm(dim=-2, keepdim=True).square() / grad.shape[-2]
        col = write_state(state, "col_var", lerp(state["col_var"], col_mean, beta2_t))
        return (row @ col) / row.mean(dim=-2, keepdim=True).clamp(min=eps1)


__all__ = ["Adafactor"]
