"""``torch.utils.checkpoint``: activation checkpointing, here a plain call with PyTorch's semantics.

PyTorch's checkpoint saves memory by dropping a segment's activations and recomputing them in the
backward pass; the values and gradients are those of calling the segment directly. webgrad runs the
segment directly (activations kept: the numbers are PyTorch's, the memory saving is not made), with
PyTorch's rules around it: ``use_reentrant`` should be passed (a warning when it is not, which then
means True), the reentrant form takes no keyword arguments for the function, and its result needs
grad only when one of the tensor arguments does (a warning says gradients will be None otherwise).

>>> import webgrad as wg
>>> from webgrad.utils.checkpoint import checkpoint
>>> lin = wg.nn.Linear(2, 2)
>>> x = wg.ones(1, 2, requires_grad=True)
>>> checkpoint(lin, x, use_reentrant=False).sum().backward(); lin.weight.grad.shape == (2, 2)
True
"""
from __future__ import annotations

import contextlib
import warnings

from ..engine import no_grad
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn", "CheckpointError"]


class CheckpointError(RuntimeError):
    """PyTorch's error type for checkpoint misuse (raised here for a bad ``determinism_check``)."""


def noop_context_fn():
    """The default ``context_fn``: two contexts that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def _reentrant(use_reentrant, stacklevel: int) -> bool:
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True.", stacklevel=stacklevel + 1)
        return True
    return bool(use_reentrant)


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True, **kwargs):
    """``function(*args, **kwargs)``, as ``torch.utils.checkpoint.checkpoint`` computes it (without the
    memory saving: activations are kept). ``preserve_rng_state`` is accepted (the segment runs once,
    so the random stream is the one PyTorch's replay reproduces).

    >>> import webgrad as wg
    >>> checkpoint(lambda t: t * 2, wg.ones(2, requires_grad=True), use_reentrant=True).requires_grad
    True
    """
    reentrant = _reentrant(use_reentrant, 2)
    kwargs.pop("preserve_rng_state", True)
    if determinism_check not in ("default", "none"):
        raise ValueError(f"checkpoint: determinism_check should be 'default' or 'none', got {determinism_check!r}")
    if reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
            with no_grad():
                return function(*args)
        return function(*args)
    forward_context, _ = context_fn()
    with forward_context:
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """The modules (or functions) of ``functions`` applied in turn to ``input``, in ``segments``
    checkpointed runs, as ``torch.utils.checkpoint.checkpoint_sequential``.

    >>> import webgrad as wg
    >>> net = wg.nn.Sequential(wg.nn.Linear(2, 3), wg.nn.ReLU(), wg.nn.Linear(3, 1))
    >>> checkpoint_sequential(net, 2, wg.ones(4, 2), use_reentrant=False).shape == (4, 1)
    True
    """
    reentrant = _reentrant(use_reentrant, 2)
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential
    functions = list(functions.children()) if isinstance(functions, Sequential) else functions
    size = len(functions) // segments
    end = -1

    def run(start, stop):
        def forward(x):
            for fn in functions[start:stop + 1]:
                x = fn(x)
            return x
        return forward

    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
