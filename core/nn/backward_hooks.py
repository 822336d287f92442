"""Module backward hooks, PyTorch's ``register_full_backward_hook`` and ``_pre_hook``: a module's
inputs (those that require grad) and its outputs pass through one identity node each, so the
backward pass meets the gradients with respect to the outputs (``grad_output``, given to the
pre-hooks, which may replace it) and then those with respect to the inputs (``grad_input``, given
with ``grad_output`` to the hooks, which may replace it), as PyTorch's ``BackwardHook`` does.

>>> import webgrad as wg
>>> lin, seen = wg.nn.Linear(2, 1), []
>>> h = lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0].shape, go[0].shape)))
>>> lin(wg.ones(3, 2, requires_grad=True)).sum().backward()
>>> seen
[(webgrad.Size([3, 2]), webgrad.Size([3, 1]))]
"""
from __future__ import annotations

import warnings

from ..autograd import Function
from ..ops.creation import zeros_like
from ..tensor import Tensor


class _Identity(Function):
    """The tensors themselves; in backward, ``on_backward(grads)`` sees (and may replace) their gradients."""

    @staticmethod
    def forward(ctx, on_backward, *tensors):
        ctx.on_backward = on_backward
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.on_backward(grads))


def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class BackwardHooks:
    """One forward call's hook points: ``wrap_inputs`` before forward, ``wrap_outputs`` after."""

    def __init__(self, module, pre_hooks, hooks):
        self.module, self.pre_hooks, self.hooks = module, list(pre_hooks), list(hooks)
        self.grad_outputs, self.input_slots, self.inputs_hooked = None, [], False

    def wrap_inputs(self, args: tuple) -> tuple:
        """``args`` with each tensor that requires grad replaced by its identity node's output."""
        self.input_slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        wanted = [i for i in self.input_slots if args[i].requires_grad]
        if not wanted:
            return args
        self.inputs_hooked, self.wanted = True, wanted
        self.others = {i: args[i] for i in self.input_slots if i not in wanted}   # zeros in grad_input, as PyTorch's
        new = list(args)
        for i, t in zip(wanted, _Identity.apply(self._on_input_grads, *[args[i] for i in wanted])):
            new[i] = t
        return tuple(new)

    def wrap_outputs(self, out):
        """``out`` (a tensor or a tuple of them) through an identity node, when one requires grad."""
        outs = _as_tuple(out)
        if not all(isinstance(o, Tensor) for o in outs) or not any(o.requires_grad for o in outs):
            return out
        new = _Identity.apply(self._on_output_grads, *outs)
        return new[0] if isinstance(out, Tensor) else type(out)(new)

    def _on_output_grads(self, grads):
        for hook in self.pre_hooks:
            result = hook(self.module, grads)
            if result is not None:
                grads = _as_tuple(result)
        self.grad_outputs = grads
        if not self.inputs_hooked and self.hooks:   # no input needs a gradient: the hooks run now, grad_input None
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients.", UserWarning, stacklevel=2)
            for hook in self.hooks:
                hook(self.module, (None,) * len(self.input_slots), grads)
        return grads

    def _on_input_grads(self, grads):
        by_slot = {**{i: zeros_like(t) for i, t in self.others.items()}, **dict(zip(self.wanted, grads))}
        grad_input = tuple(by_slot[i] for i in self.input_slots)
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_outputs)
            if result is not None:
                grad_input = _as_tuple(result)
        return tuple(grad_input[self.input_slots.index(i)] for i in self.wanted)
