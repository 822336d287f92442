"""``torch.jit`` as model code meets it: TorchScript's decorators and queries, with Python's meaning.

Model code written to be scriptable asks ``torch.jit.is_scripting()``, marks methods with
``@torch.jit.ignore``/``@torch.jit.unused``/``@torch.jit.export``, annotates with ``torch.jit.annotate``
and ``Final``, and wraps functions in ``torch.jit.script``. A scripted function computes what the Python
function computes, and webgrad runs Python: ``script`` returns its argument, the decorators return what
they decorate, ``is_scripting``/``is_tracing`` answer False, and ``fork``/``wait`` run the call at once.
What TorchScript alone gives raises with what to do instead: ``trace`` (a recording that ignores
Python control flow: use ``webgrad.compile``), ``save``/``load`` (use ``webgrad.save``/``webgrad.load``),
``freeze`` and ``optimize_for_inference``.

>>> import webgrad as wg
>>> @wg.jit.script
... def double(x):
...     return x * 2
>>> double(wg.ones(2)).tolist(), wg.jit.is_scripting()
([2.0, 2.0], False)
"""
from __future__ import annotations

from .porting_table import module_getattr as _module_getattr

import typing
import warnings

__all__ = ["script", "ignore", "unused", "export", "is_scripting", "is_tracing", "annotate", "Final", "interface",
           "fork", "wait", "Future", "trace", "trace_module", "save", "load", "freeze", "optimize_for_inference",
           "script_if_tracing"]

Final = typing.Final


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """``obj`` itself: a scripted function or module computes what its Python does, which webgrad runs.

    >>> script(len)([1, 2])
    2
    """
    return obj


def script_if_tracing(fn):
    """``fn`` itself (nothing is ever traced here)."""
    return fn


def ignore(drop: bool = False, **kwargs):
    """A method left to Python by the TorchScript compiler: here every method is, so ``@ignore`` and
    ``@ignore(drop=True)`` return the method.

    >>> ignore(len)([1])
    1
    """
    if callable(drop):
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    unknown = set(kwargs) - {"drop_on_export"}
    if unknown:
        raise TypeError(f"ignore() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if kwargs.get("drop_on_export") or drop:
        which = "drop_on_export=True" if kwargs.get("drop_on_export") else "True"
        warnings.warn(f"ignore({which}) has been deprecated. TorchScript will now drop the function call on "
                      "compilation. Use torch.jit.unused now. {}", FutureWarning, stacklevel=2)
    return lambda fn: fn


def unused(fn):
    """``fn`` itself (TorchScript would replace it by an exception; Python calls it)."""
    return fn


def export(fn):
    """``fn`` itself (TorchScript compiles it as an entry point; Python needs nothing)."""
    return fn


def interface(obj):
    """``obj`` itself (a TorchScript interface type is a Python class here)."""
    return obj


def is_scripting() -> bool:
    """False: code never runs under the TorchScript compiler here.

    >>> is_scripting()
    False
    """
    return False


def is_tracing() -> bool:
    """False: code never runs under ``torch.jit.trace`` here."""
    return False


def annotate(the_type, the_value):
    """``the_value`` (a type hint for TorchScript only)."""
    return the_value


class Future:
    """The result of ``fork``: the call has already run; ``wait()`` returns its value or raises its error."""

    def __init__(self, fn, args, kwargs):
        try:
            self._value, self._error = fn(*args, **kwargs), None
        except Exception as e:   # noqa: BLE001  (kept and raised by wait, as PyTorch's future does)
            self._value, self._error = None, e

    def wait(self):
        if self._error is not None:
            raise self._error
        return self._value


def fork(func, *args, **kwargs) -> Future:
    """``func(*args, **kwargs)`` run now, its result held for ``wait`` (PyTorch runs it asynchronously only
    under TorchScript; in eager Python it also runs at once)."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return Future(func, args, kwargs)


def wait(future: Future):
    """The value of a ``fork``."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return future.wait()


def _refuse(name: str, instead: str):
    def refused(*args, **kwargs):
        raise NotImplementedError(f"torch.jit.{name}: webgrad has no TorchScript; {instead}")
    refused.__name__ = refused.__qualname__ = name
    refused.__doc__ = f"Raises NotImplementedError: webgrad has no TorchScript; {instead}."
    return refused


trace = _refuse("trace", "call the module or function directly, or capture it with webgrad.compile")
trace_module = _refuse("trace_module", "call the module directly, or capture it with webgrad.compile")
save = _refuse("save", "save the state_dict with webgrad.save (or safetensors)")
load = _refuse("load", "load a state_dict saved with webgrad.save into the model's Python class")
freeze = _refuse("freeze", "use model.eval() and webgrad.compile")
optimize_for_inference = _refuse("optimize_for_inference", "use model.eval() and webgrad.compile")

__getattr__ = _module_getattr("webgrad.jit")   # a PyTorch name webgrad lacks says why
