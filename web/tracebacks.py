"""Tracebacks of code run in the page (``wg.run``), as a script's would read: the frames of
Pyodide's runner before the user's code are dropped, the user's frames and everything they
called are kept, and so is the error line. webgrad's worker formats every error this way.

>>> def run(code):                        # a stand-in for Pyodide's runner
...     exec(compile(code, "playground.py", "exec"), {})
>>> try:
...     run("x = 1\\n1 / 0")
... except ZeroDivisionError as e:
...     print(user_traceback(e, "playground.py"))
Traceback (most recent call last):
  File "playground.py", line 2, in <module>
ZeroDivisionError: division by zero
<BLANKLINE>
"""
from __future__ import annotations

import sys
import traceback
from pathlib import PurePosixPath

RUNNER = ("_pyodide", "pyodide")        # the folders of Pyodide's code runner (in its stdlib zip)


def user_traceback(exc: BaseException, filename: str) -> str:
    """``exc``'s traceback (and those of its causes and contexts) without the frames before the
    first one in ``filename``, the file name the user's code was compiled with; where no frame is
    the user's (a SyntaxError in it), without the runner's leading frames."""
    report = traceback.TracebackException.from_exception(exc)
    for part in _chain(report, set()):
        part.stack = traceback.StackSummary.from_list(_from_user_code(list(part.stack), filename))
    return "".join(report.format())


def last_traceback(filename: str, type_name: str) -> str | None:
    """The user's traceback of the error Pyodide just handed to JavaScript (``sys.last_exc``),
    or None when that is not an exception of type ``type_name`` (the worker then shows Pyodide's)."""
    exc = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    if exc is None or type(exc).__name__ != type_name:
        return None
    return user_traceback(exc, filename)


def _chain(report, seen: set):
    """``report`` and every exception report reachable from it (causes, contexts, groups), once."""
    if report is None or id(report) in seen:
        return
    seen.add(id(report))
    yield report
    for linked in (report.__cause__, report.__context__, *(getattr(report, "exceptions", None) or ())):
        yield from _chain(linked, seen)


def _from_user_code(frames: list, filename: str) -> list:
    first = next((i for i, f in enumerate(frames) if f.filename == filename), None)
    if first is None:
        first = next((i for i, f in enumerate(frames) if not _is_runner(f.filename)), len(frames))
    return frames[first:]


def _is_runner(path: str) -> bool:
    return any(part in RUNNER for part in PurePosixPath(path).parts[:-1])


__all__ = ["user_traceback", "last_traceback"]
