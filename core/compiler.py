"""``webgrad.compile``: PyTorch's ``torch.compile`` name and signature. Until webgrad's compiler
lands (capturing a step once and replaying it without Python per op), it returns the model or the
function unchanged, so scripts that compile run as they are, eagerly, with the same results.

>>> import webgrad as wg
>>> model = wg.nn.Linear(2, 2)
>>> wg.compile(model) is model
True
"""
from __future__ import annotations

_MODES = (None, "default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None, options=None,
            disable: bool = False):
    """``model`` (a module or a function) as it is, or a decorator when called without it."""
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be specified, but both can't be specified at the "
                           "same time.")
    if mode not in _MODES:
        raise RuntimeError(f"compile: unrecognized mode={mode}, should be one of: {', '.join(map(str, _MODES[1:]))}")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable)
    if not callable(model):
        raise RuntimeError(f"compile: expected a module or a function, got {type(model).__name__}")
    return model


__all__ = ["compile"]
