"""``webgrad.compile``: PyTorch's ``torch.compile``. The first call of a compiled function runs it
eagerly while tracing every kernel it runs (forward, ``backward()``, the optimizer's ``step()`` and
``zero_grad()`` when they are inside); later calls whose guards match (shapes, dtypes, backend, grad
mode, the tensors and optimizer state the step touches, plain Python arguments) replay that plan of
kernel calls without webgrad's per-op Python. A graph break (a readback, a data-dependent shape)
splits the plan into pieces: a replay reads the value back there and goes on where a trace saw that
value, else traces that path (``paths.py``). Outputs still to be differentiated (a compiled model,
its loss and ``backward()`` outside) get one node replaying their traced backward (``boundary.py``).
See ``compiled.py`` (calls and guards; ``quick.py``: a call whose reach has not moved since the last
walk over it takes its places without walking), ``tracer.py``, ``plan.py`` and ``replay.py``.

>>> import webgrad as wg
>>> model = wg.nn.Linear(2, 2)
>>> fast = wg.compile(model)
>>> fast(wg.ones(1, 2)).shape
webgrad.Size([1, 2])
"""
from __future__ import annotations

import functools

from ..nn.module import Module
from .compiled import RECOMPILE_LIMIT, CompiledFunction
from .module import OptimizedModule
from ..per_step import per_step
from .tracer import GraphBreak

_MODES = (None, "default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None, options=None,
            disable: bool = False, debug: bool = False):
    """``model`` (a module or a function) compiled: PyTorch's signature. ``fullgraph=True`` raises
    ``GraphBreak`` where the function does what a plan cannot hold (``.item()``, ``.tolist()``,
    ``bool(t)``, printing a tensor, a data-dependent shape); otherwise the plan splits there into
    pieces, and each value read there (each shape) gets its own path, traced at its first call.
    ``dynamic``, ``mode`` and ``options`` have no effect (plans are specialised to shapes; results do
    not depend on them); ``backend="eager"`` (or ``disable=True``) runs the model
    as it is. ``debug=True`` (webgrad's) prints each plan when traced; ``explain()`` returns it.
    Without ``model``, a decorator.

    >>> import webgrad as wg
    >>> @wg.compile
    ... def f(x):
    ...     return x.sin() * 2
    >>> f(wg.zeros(2)).tolist()
    [0.0, 0.0]
    """
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be specified, but both can't be specified at the "
                           "same time.")
    if mode not in _MODES:
        raise RuntimeError(f"compile: unrecognized mode={mode}, should be one of: {', '.join(map(str, _MODES[1:]))}")
    if not (callable(backend) or backend in _BACKENDS):
        raise RuntimeError(f"compile: unknown backend {backend!r}; webgrad accepts {', '.join(_BACKENDS)}")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable, debug=debug)
    if not callable(model):
        raise RuntimeError(f"compile: expected a module or a function, got {type(model).__name__}")
    if disable or backend == "eager":
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph=fullgraph, debug=debug)
    compiled = CompiledFunction(model, fullgraph=fullgraph, debug=debug)
    try:
        return functools.wraps(model)(compiled)
    except (AttributeError, TypeError):
        return compiled


__all__ = ["compile", "CompiledFunction", "OptimizedModule", "GraphBreak", "per_step", "RECOMPILE_LIMIT"]
