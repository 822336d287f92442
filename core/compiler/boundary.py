"""Autograd across a compiled function's boundary (PyTorch's AOTAutograd, in small).

A compiled function called with grad enabled may return tensors whose graph is still to be
differentiated: ``model = wg.compile(model); loss = lossfn(model(x), y); loss.backward()``. Then,
while the call is traced, after the function returned, the tracer also runs the backward of those
outputs with respect to what they depend on from outside the call (the parameters, the arguments
and named tensors that require grad: the *boundary*), with placeholder output gradients (*seeds*):
``autograd.grad(outputs, boundary, seeds, retain_graph=True)``. The plan then holds forward and
backward kernels; ``split`` parts them: the backward steps are those that depend on a seed, the
*saved* slots are what they read of the forward's. A replay runs the forward steps and gives the
outputs one grad_fn node (``attach``), ``CompiledBackward``, which keeps the saved values and whose
backward runs the backward steps on the output gradients it gets; the engine then delivers its
input gradients as eagerly (leaves' ``.grad``, their hooks; a non-leaf argument's graph goes on).

What makes such a call run eagerly instead (``Backward.reason``): a hook or ``retain_grad()`` on a
tensor made inside the function (the traced backward would run it; a replay could not), a leaf
reached that is not a place (a tensor the walk in ``places`` does not find), a graph break inside
the backward (a custom ``Function``'s backward reading a value). A graph already
freed by the function's own ``backward()`` keeps nothing (a replay's outputs have no grad_fn: no
backward through them could run eagerly either). A double backward (``create_graph=True``) through a
replayed call's outputs raises.

>>> import webgrad as wg
>>> lin = wg.nn.Linear(2, 1)
>>> fast = wg.compile(lin)
>>> for _ in range(3):
...     lin.zero_grad()
...     fast(wg.ones(1, 2)).sum().backward()
>>> lin.weight.grad.tolist(), fast._compiled.replays
([[1.0, 1.0]], 2)
"""
from __future__ import annotations

from contextlib import contextmanager

from .. import engine
from ..tensor import Tensor
from .tracer import Check

_NAME = "Compiled"   # the node's name: repr <CompiledBackward>


class Backward:
    """What the tracer made of a call's differentiable outputs: ``outs`` (their positions among the
    result's tensors), ``seeds`` (placeholder gradients, one per output), ``grads`` (the traced
    gradients, per boundary tensor; None where none reaches it), ``wrt`` (the boundary's place
    indices); ``reason``: why the call runs eagerly instead (None if it need not)."""

    def __init__(self, outs=(), seeds=(), grads=(), wrt=(), reason=None):
        self.outs, self.seeds, self.grads, self.wrt, self.reason = outs, seeds, grads, wrt, reason


def tensors_in(result) -> list:
    """The tensors of a function's result (a tensor, or lists, tuples and dicts of them), in order."""
    if isinstance(result, Tensor):
        return [result]
    if type(result) in (list, tuple):
        return [t for r in result for t in tensors_in(r)]
    if type(result) is dict:
        return [t for r in result.values() for t in tensors_in(r)]
    return []


def differentiable(t) -> bool:
    """Whether ``t``'s graph can still be differentiated (a backward pass frees what nodes saved)."""
    return t.grad_fn is not None and t.grad_fn.saved is not None


def _boundary(found, outs):
    """(place indices the outputs' graph reaches, or a reason it cannot be compiled): leaves that
    are places, and non-leaf arguments (whose graph lies outside, where the walk stops)."""
    leaves, stops = {}, {}
    for i, (place, t) in enumerate(zip(found.places, found.tensors)):
        if t is None or not t.requires_grad or place.kind == "grad":
            continue
        if t.grad_fn is None:
            leaves.setdefault(id(t), i)
        else:
            stops.setdefault((t.grad_fn, t._out_index), i)
    used, seen = set(), set()
    stack = [t.grad_fn for t in outs]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.hooks or node.retained:
            return None, "a hook or retain_grad() on a tensor made inside the compiled function"
        for edge in node.next:
            if edge is None:
                continue
            target, index = edge
            if index < 0:
                i = leaves.get(id(target))
                if i is None:
                    return None, ("its graph reaches a tensor requiring grad that is not an argument, a parameter "
                                  "or a tensor the function names")
                used.add(i)
            elif (target, index) in stops:
                used.add(stops[(target, index)])
            else:
                stack.append(target)
    return sorted(used), None


@contextmanager
def _without_leaf_hooks(tensors):
    """The tensors' own hooks set aside (the traced backward must not run them: the replayed one will)."""
    held = [(t, t._hooks) for t in tensors if t.grad_fn is None and t._hooks]
    for t, _ in held:
        t._hooks = None
    try:
        yield
    finally:
        for t, hooks in held:
            t._hooks = hooks


def trace_backward(tracer, result, found) -> Backward | None:
    """Run, under ``tracer``, the backward of ``result``'s differentiable outputs (see the module's
    doc); None where there is none (grad disabled, nothing to differentiate)."""
    from ..autograd import grad
    from ..ops.creation import ones_like
    if not engine._mode.enabled:
        return None
    placed = {id(t) for t in found.tensors if t is not None}
    ts = tensors_in(result)
    outs = [i for i, t in enumerate(ts) if differentiable(t) and id(t) not in placed]
    if not outs:
        return None
    wrt, reason = _boundary(found, [ts[i] for i in outs])
    if reason is not None:
        return Backward(reason=reason)
    if not wrt:
        return None
    with tracer.unrecorded():
        seeds = [ones_like(ts[i]) for i in outs]
    inputs = [found.tensors[i] for i in wrt]
    start = len(tracer.calls)
    try:
        with _without_leaf_hooks(inputs):
            grads = grad([ts[i] for i in outs], inputs, seeds, retain_graph=True, allow_unused=True)
    except RuntimeError as e:
        if "second time" in str(e):   # a backward inside freed their graph (a step returning its logits):
            return None               # no backward of theirs can run, eagerly either: replayed, they have none
        return Backward(reason=f"its backward could not be traced ({e})")
    if any(type(call) is Check for call in tracer.calls[start:]):
        return Backward(reason="its backward reads values back (a graph break inside a backward)")
    return Backward(outs, seeds, list(grads), wrt)


def saved_places(plan, saved) -> list:
    """The place indices (once each) whose data are among the ``saved`` slots."""
    return sorted({plan.inputs[s] for s in saved if s in plan.inputs})


def split(plan, steps) -> tuple:
    """``steps`` (the plan's, fused) parted into (forward steps, backward steps, saved slots): a step
    is backward when it reads a seed or a backward step's output; saved: the slots the backward
    steps and gradients read that the forward makes or reads (constants excepted)."""
    later = set(plan.seeds)
    forward, backward = [], []
    for step in steps:
        if any(s in later for s in step.ins):
            backward.append(step)
            later.update(s for s in step.outs if s is not None)
        else:
            forward.append(step)
    read = {s for step in backward for s in step.ins} | {s for s in plan.grads if s is not None}
    saved = sorted(s for s in read if s not in later and s not in plan.consts)
    return forward, backward, saved


def attach(result, found, plan, backward_steps, saved, scope) -> None:
    """Give the differentiable outputs of a replay's ``result`` one grad_fn node whose backward runs
    ``backward_steps(G, S)`` (``G`` the output gradients, ``S`` the ``saved`` values) under ``scope``.
    The node saves the places among ``saved`` as eager nodes save tensors (an in-place change before
    ``backward()`` raises; ``backward()`` without ``retain_graph`` frees them: a second one raises)."""
    ts = tensors_in(result)
    outs = [ts[i] for i in plan.grad_outputs]
    inputs = [found.tensors[i] for i in plan.wrt]
    backend = plan.backend

    def compiled_backward(dy, _saved, _attrs):
        if engine._mode.enabled:
            raise RuntimeError("compile: a double backward (create_graph=True) through the outputs of a compiled "
                               "function is not supported; call it uncompiled (or with backend='eager') for that")
        dy = tuple([g._data for g in (dy if type(dy) is tuple else (dy,))])
        if scope is None:
            grads = backward_steps(dy, saved)
        else:
            with scope():
                grads = backward_steps(dy, saved)
        return tuple([None if g is None else Tensor._wrap(g, backend) for g in grads])
    kept = [found.tensors[i] for i in plan.saved_places]
    engine.record_function(_NAME, compiled_backward, inputs, outs, saved=kept)


__all__ = ["Backward", "trace_backward", "split", "saved_places", "attach", "tensors_in", "differentiable"]
