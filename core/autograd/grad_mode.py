"""``torch.autograd.grad_mode``: the context managers that turn recording off and on.

>>> from webgrad.autograd.grad_mode import no_grad
>>> import webgrad as wg
>>> with no_grad():
...     (wg.ones(1, requires_grad=True) * 2).requires_grad
False
"""
from __future__ import annotations

from ..engine import enable_grad, inference_mode, no_grad, set_grad_enabled

_threads = [True]


def set_multithreading_enabled(mode: bool) -> None:
    """Accepted without effect: webgrad's backward pass runs on the calling thread (PyTorch's
    setting only chooses whether its device threads run backward; the numbers are the same).

    >>> set_multithreading_enabled(False); set_multithreading_enabled(True)
    """
    _threads[0] = bool(mode)


def is_multithreading_enabled() -> bool:
    """The last ``set_multithreading_enabled`` setting (True at start, as PyTorch's).

    >>> is_multithreading_enabled()
    True
    """
    return _threads[0]


__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "set_multithreading_enabled",
           "is_multithreading_enabled"]
