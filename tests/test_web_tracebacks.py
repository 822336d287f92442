"""webgrad.web.tracebacks, natively: the traceback of code run in the page drops the frames of
Pyodide's runner before the user's code, and keeps the user's frames, what they called, the
chained exceptions and the error line. (tests/browser/test_playground.py checks it in the page.)"""
import sys

import pytest

from webgrad.web.tracebacks import last_traceback, user_traceback

USER = "playground.py"
# a stand-in for Pyodide's runner, compiled under the name its frames have in the page; as there,
# the traceback starts in the runner (where the error is caught)
RUNNER = compile("def run(code, ns):\n    try:\n        exec(compile(code, FILE, 'exec'), ns)\n"
                 "    except BaseException as e:\n        return e\n",
                 "/lib/python314.zip/_pyodide/_base.py", "exec")
LIBRARY = compile("def divide(a, b):\n    return a / b\n", "/lib/python3.14/site-packages/lib/ops.py", "exec")


def raised(code: str) -> BaseException:
    ns = {"FILE": USER}
    exec(RUNNER, ns)
    exec(LIBRARY, ns)
    exc = ns["run"](code, ns)
    assert exc is not None, "the code raised nothing"
    return exc


def frames(text: str) -> list:
    """The stack lines (a SyntaxError's own `File ..., line N` is not one)."""
    return [line.strip() for line in text.splitlines() if line.startswith("  File ") and ", in " in line]


def test_runner_frames_before_the_users_code_are_dropped():
    text = user_traceback(raised("def f(x):\n    return 1 / x\nf(0)\n"), USER)
    assert frames(text) == [f'File "{USER}", line 3, in <module>', f'File "{USER}", line 2, in f'], text
    assert text.startswith("Traceback (most recent call last):\n")
    assert text.endswith("ZeroDivisionError: division by zero\n")
    assert "_pyodide" not in text and "test_web_tracebacks" not in text


def test_frames_the_users_code_called_are_kept():
    text = user_traceback(raised("divide(1, 0)\n"), USER)
    assert frames(text) == [f'File "{USER}", line 1, in <module>',
                            'File "/lib/python3.14/site-packages/lib/ops.py", line 2, in divide'], text


def test_chained_exceptions_are_trimmed_each():
    text = user_traceback(raised("try:\n    divide(1, 0)\nexcept ZeroDivisionError as e:\n"
                                 "    raise ValueError('no') from e\n"), USER)
    assert "The above exception was the direct cause" in text
    assert "_pyodide" not in text and text.endswith("ValueError: no\n"), text
    assert frames(text)[-1] == f'File "{USER}", line 4, in <module>', text


def test_a_syntax_error_has_no_frames_but_its_line():
    text = user_traceback(raised("x = (\n"), USER)
    assert frames(text) == [] and "Traceback" not in text, text
    assert f'File "{USER}", line 1' in text and "SyntaxError" in text, text


def test_an_error_without_user_frames_keeps_all_but_the_runners():
    ns = {}
    exec(LIBRARY, ns)
    try:
        ns["divide"](1, 0)
    except ZeroDivisionError as e:
        text = user_traceback(e, USER)
    assert frames(text)[-1].startswith('File "/lib/python3.14/site-packages/lib/ops.py"'), text


def test_last_traceback_reads_the_last_error_of_that_type(monkeypatch):
    exc = raised("1 / 0\n")
    monkeypatch.setattr(sys, "last_exc", exc, raising=False)
    monkeypatch.setattr(sys, "last_value", exc, raising=False)
    assert last_traceback(USER, "ZeroDivisionError") == user_traceback(exc, USER)
    assert last_traceback(USER, "KeyError") is None


@pytest.mark.parametrize("code, last", [("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
                                        ("raise SystemExit(3)\n", "SystemExit: 3")])
def test_base_exceptions_are_formatted_too(code, last):
    text = user_traceback(raised(code), USER)
    assert text.rstrip().splitlines()[-1] == last and frames(text) == [f'File "{USER}", line 1, in <module>'], text
