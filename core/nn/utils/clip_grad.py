"""Gradient clipping (PyTorch's ``torch.nn.utils.clip_grad``)."""
from __future__ import annotations

import math
import warnings

from ...engine import no_grad
from ...tensor import Tensor


def _params(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None):
    """The ``norm_type`` norm of the norms of ``tensors`` (as if they were one vector), a 0-d
    tensor; 0 for no tensors. ``error_if_nonfinite``: a nan or infinite norm raises RuntimeError.
    ``foreach``: no effect (it picks PyTorch's implementation, not its result).

    >>> import webgrad as wg
    >>> get_total_norm([wg.tensor([3.0]), wg.tensor([4.0])]).item()
    5.0
    """
    import webgrad as wg
    tensors = [t for t in _params(tensors) if t is not None]
    if not tensors:
        return wg.tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        if norm_type == math.inf:
            total = wg.stack([t.abs().amax() for t in tensors]).amax()
        else:
            total = wg.stack([t.norm(norm_type) for t in tensors]).norm(norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"get_total_norm: the total norm of order {norm_type} for gradients from `parameters` "
                           f"is non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                           f"by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scale every gradient by ``min(1, max_norm / (total_norm + 1e-6))``, in place (the second half
    of ``clip_grad_norm_``, for a ``total_norm`` computed elsewhere, e.g. across processes).
    ``foreach``: no effect.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.ones(4)); (w * 2).sum().backward()
    >>> clip_grads_with_norm_([w], 1.0, wg.tensor(4.0)); [round(g, 4) for g in w.grad.tolist()]
    [0.5, 0.5, 0.5, 0.5]
    """
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g._assign(g * coef.to(g.dtype), "clip_grads_with_norm_")


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None):
    """Scale all gradients together so that their joint ``norm_type`` norm is at most ``max_norm``;
    returns the norm before clipping (a 0-d tensor): ``get_total_norm`` of the gradients, then
    ``clip_grads_with_norm_``. The scaling stays on the backend; only ``error_if_nonfinite`` reads
    the norm back. ``foreach`` is accepted without effect (it picks PyTorch's implementation, not its result).

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.ones(4)); (w * 2).sum().backward()
    >>> clip_grad_norm_([w], 1.0).item(), [round(g, 4) for g in w.grad.tolist()]
    (4.0, [0.5, 0.5, 0.5, 0.5])
    """
    parameters = _params(parameters)
    total = get_total_norm([p.grad for p in parameters if p.grad is not None], norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None):
    """Deprecated alias of ``clip_grad_norm_`` (a FutureWarning says so, as PyTorch's).

    >>> import warnings, webgrad as wg
    >>> w = wg.nn.Parameter(wg.ones(4)); (w * 2).sum().backward()
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always"); n = clip_grad_norm([w], 1.0)
    >>> n.item(), caught[0].category.__name__
    (4.0, 'FutureWarning')
    """
    warnings.warn("`webgrad.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`webgrad.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


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


__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]
