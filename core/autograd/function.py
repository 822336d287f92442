"""``torch.autograd.function``: ``Function`` and its ``ctx``, ``once_differentiable`` and
``InplaceFunction``.

>>> import webgrad as wg
>>> class Double(Function):
...     @staticmethod
...     def forward(ctx, x):
...         return x * 2
...     @staticmethod
...     @once_differentiable
...     def backward(ctx, dy):
...         return dy * 2
>>> x = wg.ones(2, requires_grad=True)
>>> Double.apply(x).sum().backward(); x.grad.tolist()
[2.0, 2.0]
"""
from __future__ import annotations

import functools

from ..engine import is_grad_enabled, no_grad
from ..tensor import Tensor
from . import Function, FunctionCtx

_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Function):
    """Passes its input through; differentiating it raises (what ``once_differentiable`` hangs
    on the gradients it returns while recording)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, dy):
        raise RuntimeError(_TWICE)


def once_differentiable(backward):
    """Decorate a ``Function``'s ``backward`` that is not itself differentiable: it runs under
    ``no_grad``, and where the pass is recorded (``create_graph=True``) differentiating its
    gradients raises, as in PyTorch.

    >>> import webgrad as wg
    >>> class Square(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, dy):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * dy
    >>> x, v = wg.tensor([3.0], requires_grad=True), wg.ones(1, requires_grad=True)
    >>> (g,) = wg.autograd.grad(Square.apply(x), x, v, create_graph=True)   # a v-Jacobian product
    >>> g.backward()
    Traceback (most recent call last):
      ...
    RuntimeError: trying to differentiate twice a function that was marked with @once_differentiable
    """
    @functools.wraps(backward)
    def run(ctx, *grad_outputs):
        with no_grad():
            grads = backward(ctx, *grad_outputs)
        if not is_grad_enabled() or not any(isinstance(g, Tensor) and g.requires_grad for g in grad_outputs):
            return grads
        single = not isinstance(grads, tuple)
        marked = tuple(_DelayedError.apply(g.detach().requires_grad_()) if isinstance(g, Tensor) else g
                       for g in ((grads,) if single else grads))
        return marked[0] if single else marked
    return run


class InplaceFunction(Function):
    """A ``Function`` that records whether it was asked to work in place (``self.inplace``).

    >>> InplaceFunction(inplace=True).inplace
    True
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction"]
