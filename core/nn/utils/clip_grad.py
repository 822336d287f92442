"""Gradient clipping (PyTorch's ``torch.nn.utils.clip_grad``)."""
from __future__ import annotations

import math

from ...engine import no_grad
from ...tensor import Tensor


def _params(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None):
    """Scale all gradients together so that their joint ``norm_type`` norm is at most ``max_norm``;
    returns the norm before clipping (a 0-d tensor). The scaling stays on the backend; only
    ``error_if_nonfinite`` reads the norm back. ``foreach`` is accepted without effect (it picks
    PyTorch's implementation, not its result).

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.ones(4)); (w * 2).sum().backward()
    >>> clip_grad_norm_([w], 1.0).item(), [round(g, 4) for g in w.grad.tolist()]
    (4.0, [0.5, 0.5, 0.5, 0.5])
    """
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    import webgrad as wg
    if not grads:
        return wg.tensor(0.0)
    with no_grad():
        if norm_type == math.inf:
            total = wg.stack([g.abs().amax() for g in grads]).amax()
        else:
            total = wg.stack([g.norm(norm_type) for g in grads]).norm(norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} for gradients from "
                               f"`parameters` is non-finite, so it cannot be clipped. To disable this error and "
                               f"scale the gradients by the non-finite norm anyway, set "
                               f"`error_if_nonfinite=False`")
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g._assign(g * coef.to(g.dtype), "clip_grad_norm_")
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient elementwise into [-clip_value, clip_value] (``foreach``: no effect).

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.ones(2)); (w * 5).sum().backward(); clip_grad_value_([w], 1.0)
    >>> w.grad.tolist()
    [1.0, 1.0]
    """
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad._assign(p.grad.clamp(-clip_value, clip_value), "clip_grad_value_")


__all__ = ["clip_grad_norm_", "clip_grad_value_"]
