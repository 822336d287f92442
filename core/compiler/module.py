"""``OptimizedModule``: what ``webgrad.compile(module)`` returns, as PyTorch's: a module holding the
original as ``_orig_mod`` (so its ``state_dict`` keys start with ``_orig_mod.``) whose calls go
through a ``CompiledFunction`` of it; other attributes are the original's."""
from __future__ import annotations

from ..nn.module import Module
from .compiled import CompiledFunction


class OptimizedModule(Module):
    """``module`` compiled (see ``webgrad.compile``).

    >>> import webgrad as wg
    >>> m = OptimizedModule(wg.nn.Linear(3, 1))
    >>> m.in_features, m(wg.ones(2, 3)).shape
    (3, webgrad.Size([2, 1]))
    """

    def __init__(self, module: Module, *, fullgraph: bool = False, debug: bool = False):
        super().__init__()
        self._orig_mod = module
        self.__dict__["_compiled"] = CompiledFunction(module, fullgraph=fullgraph, debug=debug)

    def __call__(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def explain(self) -> str:
        """The compiled plans (see ``CompiledFunction.explain``)."""
        return self.__dict__["_compiled"].explain()


__all__ = ["OptimizedModule"]
