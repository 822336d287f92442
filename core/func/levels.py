"""What the function transforms share: the tensors that stand for a transform's inputs, and
the cut between what a transform computed inside and the graph outside it.

A transform differentiates with respect to *level inputs*: a fresh leaf for an input that does not
require grad outside (or when grad mode is off), and a ``clone`` of the input, joined to the outer
graph, for one that does. After the inner differentiation a result that reaches no tensor of the
outer graph is detached (PyTorch's transforms return plain tensors then); one that does keeps its
graph, so transforms compose with ``backward`` and with each other (``grad(grad(f))``, MAML's
second-order step). No ``.grad`` of a user's tensor is touched: the inner passes are
``autograd.grad`` calls.
"""
from __future__ import annotations

from ..engine import _mode
from ..tensor import Tensor


def level_input(x: Tensor, outer: bool, who: str) -> Tensor:
    """The tensor standing for ``x`` inside a transform (``outer``: grad mode was on at the call)."""
    if not isinstance(x, Tensor):
        raise ValueError(f"{who}: thing passed to transform API must be Tensor, got {type(x)}")
    if not x.dtype.is_floating:
        raise RuntimeError(f"{who}: only Tensors of floating point dtype can require gradients; got a "
                           f"{x.dtype.name} input of shape {tuple(x.shape)}")
    if outer and x.requires_grad:
        return x.clone()
    return x.detach().requires_grad_()


def reaches_outside(tensors, inner: set) -> bool:
    """Whether the graph of any of ``tensors`` reaches a tensor requiring grad that is not one of
    the leaves whose ids are in ``inner`` (a tensor of an enclosing level or of the user's)."""
    stack, seen = [], set()
    for t in tensors:
        if not isinstance(t, Tensor) or not t.requires_grad:
            continue
        if t.grad_fn is None:
            if id(t) not in inner:
                return True
        else:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for edge in node.next:
            if edge is None:
                continue
            obj, index = edge
            if index == -1:
                if id(obj) not in inner:
                    return True
            else:
                stack.append(obj)
    return False


def leave(t, inner: set, outer: bool):
    """``t`` as a transform returns it: detached unless grad mode was on at the call (``outer``)
    and its graph reaches outside the level."""
    if not isinstance(t, Tensor) or not t.requires_grad or (outer and reaches_outside([t], inner)):
        return t
    return t.detach()


def grad_enabled() -> bool:
    """Whether grad mode is on (read when a transform is called)."""
    return _mode.enabled
