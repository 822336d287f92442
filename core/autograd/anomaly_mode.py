"""Anomaly detection (PyTorch's ``torch.autograd.detect_anomaly`` and ``set_detect_anomaly``): while
it is on, ``backward()`` checks every gradient a node returns and raises, naming the node, where one
holds NaN (``check_nan``). PyTorch also records each forward op's traceback to show with the error;
webgrad does not (the message names the backward node).

>>> import webgrad as wg
>>> x = wg.zeros(2, requires_grad=True)
>>> with wg.autograd.set_detect_anomaly(True):
...     (x / x).sum().backward()
Traceback (most recent call last):
  ...
RuntimeError: Function 'DivBackward0' returned nan values in its 1th output.
"""
from __future__ import annotations

import functools
import warnings


class _State:
    enabled = False
    check_nan = True


state = _State()

_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled "
            "for debugging.")


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``).

    >>> is_anomaly_enabled()
    False
    """
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks gradients for NaN (``torch.is_anomaly_check_nan_enabled``).

    >>> is_anomaly_check_nan_enabled()
    True
    """
    return state.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``).

    >>> set_anomaly_enabled(True); is_anomaly_enabled(); set_anomaly_enabled(False)
    True
    """
    state.enabled, state.check_nan = bool(enabled), bool(check_nan)


class _Switch:
    """Sets the mode on ``__enter__`` and puts the previous one back on ``__exit__``; also a decorator."""

    def __enter__(self):
        self.prev = (state.enabled, state.check_nan)
        set_anomaly_enabled(self.mode, self.check_nan)
        return self

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self.__class__(*self.args):
                return fn(*args, **kwargs)
        return run


class detect_anomaly(_Switch):
    """A context manager (and decorator) that turns anomaly detection on inside it; warns, as
    PyTorch does, that it slows training down.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with detect_anomaly():
    ...         is_anomaly_enabled()
    True
    """

    def __init__(self, check_nan: bool = True):
        self.mode, self.check_nan, self.args = True, bool(check_nan), (check_nan,)
        warnings.warn(_WARNING, UserWarning, stacklevel=2)


class set_detect_anomaly(_Switch):
    """Turn anomaly detection on or off (``mode``), as a call or a context manager (as
    ``set_grad_enabled``: the call itself sets it; leaving the ``with`` puts the old mode back).

    >>> with set_detect_anomaly(True):
    ...     is_anomaly_enabled()
    True
    >>> is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        self.mode, self.check_nan, self.args = bool(mode), bool(check_nan), (mode, check_nan)
        self.prev = (state.enabled, state.check_nan)
        set_anomaly_enabled(self.mode, self.check_nan)

    def __enter__(self):
        return self


def checked(form):
    """``form`` (one of ``backprop``'s gradient forms) whose ``input_grads`` raise where a node's
    gradient holds NaN."""
    class Checked(form):
        @staticmethod
        def input_grads(node, dy) -> tuple:
            grads = form.input_grads(node, dy)
            for i, g in enumerate(grads):
                if g is not None and form.tensor(g, node.backend).isnan().any().item():
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
            return grads
    return Checked


__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]
