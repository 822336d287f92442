"""PyTorch's ``torch.nn.utils.stateless``: its ``functional_call`` is ``webgrad.func.functional_call``
behind PyTorch's deprecation warning.

>>> import warnings, webgrad as wg
>>> lin = wg.nn.Linear(1, 1)
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     functional_call(lin, {"weight": wg.tensor([[2.0]]), "bias": wg.tensor([1.0])}, wg.ones(1, 1)).tolist()
[[3.0]]
"""
from __future__ import annotations

import warnings

from ...func.modules import functional_call as _func_functional_call


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """``webgrad.func.functional_call`` under PyTorch's deprecated name (a FutureWarning says so)."""
    warnings.warn("`webgrad.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `webgrad.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _func_functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                                 strict=strict)


__all__ = ["functional_call"]
