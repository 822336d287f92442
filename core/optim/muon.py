"""Muon (PyTorch 2.9's ``torch.optim.Muon``): momentum SGD whose step for a matrix is replaced by
its nearest semi-orthogonal matrix, from a quintic Newton-Schulz iteration in bfloat16."""
from __future__ import annotations

import math

from ..dtypes import bfloat16, float32
from ..ops.creation import zeros_like
from ._checks import to_scalar
from ._updates import lerp, write_state
from .optimizer import Optimizer

_ADJUSTMENTS = (None, "original", "match_rms_adamw")


def _bf16_addmm(c, a, b, beta, alpha=1.0):
    """``beta * c + alpha * (a @ b)`` of bfloat16 matrices, rounded to bfloat16 once (as PyTorch's CPU
    addmm, which accumulates in float32)."""
    product = a.to(float32) @ b.to(float32)
    return (c.to(float32) * beta + (product if alpha == 1.0 else product * alpha)).to(bfloat16)


def zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps: int, eps: float):
    """The semi-orthogonal matrix nearest ``grad`` (its ``U V^T``), approximately, in bfloat16."""
    if ns_steps >= 100:
        raise ValueError("Muon: Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError(f"Muon: Input tensor gradient must be a 2D matrix, got shape {tuple(grad.shape)}")
    if len(ns_coefficients) != 3:
        raise ValueError("Muon: Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = grad.to(bfloat16)
    x = x.T if tall else x
    x = x / x.to(float32).norm().to(bfloat16).clamp(min=eps)   # PyTorch accumulates the norm in float32
    for _ in range(ns_steps):
        gram = (x.to(float32) @ x.T.to(float32)).to(bfloat16)
        x = _bf16_addmm(x, _bf16_addmm(gram, gram, gram, b, c), x, a)
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn, shape) -> float:
    rows, cols = shape[:2]
    ratio = {None: math.sqrt(max(1, rows / cols)), "original": math.sqrt(max(1, rows / cols)),
             "match_rms_adamw": 0.2 * math.sqrt(max(rows, cols))}[adjust_lr_fn]
    return lr * ratio


class Muon(Optimizer):
    """PyTorch's ``torch.optim.Muon`` for 2-D parameters: ``buf = lerp(buf, g, 1 - momentum)``; the
    update (``lerp(g, buf, momentum)`` with ``nesterov``, else ``buf``) is orthogonalized by
    ``ns_steps`` Newton-Schulz steps in bfloat16; ``p *= 1 - lr * weight_decay``; ``p -= lr' *
    update`` with ``lr'`` from ``adjust_lr_fn``. The bfloat16 steps run where bfloat16 is (the cpu
    backend; the GPU backends raise TypeError, as for any bfloat16 tensor there).

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.eye(2))
    >>> opt = Muon([w], lr=0.1, weight_decay=0.0); (w * w).sum().backward(); opt.step()
    >>> [round(v, 2) for v in w.flatten().tolist()]
    [0.89, 0.0, 0.0, 0.89]
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        for what, value in (("Learning rate", lr), ("momentum", momentum), ("weight decay", weight_decay)):
            if not 0.0 <= value:
                raise ValueError(f"Muon: {what} should be >= 0 but is: {value}")
        if adjust_lr_fn not in _ADJUSTMENTS:
            raise ValueError(f"Muon: Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{tuple(p.shape)}")

    def _step_param(self, p, group):
        grad, state = p.grad, self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = zeros_like(grad)
        momentum, lr = group["momentum"], to_scalar(group["lr"])
        buf = write_state(state, "momentum_buffer", lerp(state["momentum_buffer"], grad, 1 - momentum))
        update = lerp(grad, buf, momentum) if group["nesterov"] else buf
        update = zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        decayed = p * (1 - lr * group["weight_decay"])
        step = update.to(p.dtype) * -_adjusted_lr(lr, group["adjust_lr_fn"], p.shape)   # add_(bf16, alpha=) upcasts first
        p._assign(decayed + step, "Muon.step")


__all__ = ["Muon"]
