"""PyTorch's ``torch.nn.utils.skip_init``."""
from __future__ import annotations

import inspect


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` whose parameter values are unspecified (PyTorch builds it on
    the meta device and allocates empty storage; webgrad has no meta device, so it builds the module
    as usual: its initial values are one possible "uninitialized" content). The class must take a
    ``device`` argument, as PyTorch requires.

    >>> import webgrad as wg
    >>> skip_init(wg.nn.Linear, 6, 1).weight.shape
    webgrad.Size([1, 6])
    """
    from ..module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"skip_init: Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError(f"skip_init: Module must support a 'device' arg to skip initialization "
                           f"({module_cls.__name__} takes none)")
    return module_cls(*args, **kwargs)


__all__ = ["skip_init"]
