"""The playground in headless Chromium: Stop interrupts Python (Pyodide's interrupt buffer, which
the served page's cross-origin isolation allows) or restarts it, tracebacks show the user's frames
only, and every example runs. One playground page serves the module (Pyodide starts once)."""
import time

import pytest

from browser_harness import WebgradPage

PYODIDE = "pyodide=./pyodide/"
START_MS = 60_000
RUNNER_MARKS = ("_pyodide", "/lib/python314.zip", "webloop", "eval_code", "CodeRunner")


@pytest.fixture(scope="module")
def playground(browser, server_url):
    page = browser.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.goto(f"{server_url}playground.html?{PYODIDE}")
    page.wait_for_function("['ready', 'error'].includes(window.__playground.state)", timeout=START_MS)
    assert page.evaluate("window.__playground.error") is None
    page.errors = errors
    yield page
    page.close()


def run(page, code, timeout_ms=START_MS):
    page.fill("#code", code)
    page.click("#run")
    page.wait_for_function("window.__playground.state === 'ready'", timeout=timeout_ms)
    return page.evaluate("window.__playground")


def start_and_stop(page, code, after_s=1.0):
    """Run ``code`` (which does not end), press Stop after ``after_s`` seconds, wait until Python is back."""
    page.fill("#code", code)
    page.click("#run")
    page.wait_for_function("window.__playground.state === 'running'")
    time.sleep(after_s)
    assert page.evaluate("window.__playground.state") == "running"
    assert page.is_enabled("#stop") and page.is_disabled("#run")
    page.click("#stop")
    page.wait_for_function("window.__playground.state === 'ready'", timeout=START_MS)
    return page.evaluate("window.__playground")


def frames(traceback: str) -> list:
    return [line for line in traceback.splitlines() if line.startswith("  File ")]


def test_stop_interrupts_an_infinite_loop_and_python_runs_again(playground):
    assert playground.evaluate("crossOriginIsolated")
    pg = start_and_stop(playground, "kept = 41\nprint('looping')\nwhile True: pass\n")
    assert pg["stopped"] == "interrupted", pg
    assert pg["error"].rstrip().endswith("KeyboardInterrupt"), pg["error"]
    assert frames(pg["error"]) == ['  File "playground.py", line 3, in <module>'], pg["error"]
    assert "looping" in pg["output"]
    assert playground.is_enabled("#run") and playground.is_disabled("#stop")
    # the same Python goes on: the namespace survived, and code runs again
    pg = run(playground, "print(kept + 1)")
    assert pg["error"] is None and pg["output"] == "42\n", pg


def test_stop_restarts_python_that_ignores_the_interrupt(playground):
    code = "gone = 1\nwhile True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass\n"
    pg = start_and_stop(playground, code)
    assert pg["stopped"] == "restarted", pg
    assert "did not stop" in pg["error"] and "restarted" in pg["error"], pg["error"]
    assert playground.text_content("#backend") == "webgpu"
    pg = run(playground, "print('gone' in globals(), 6 * 7)")
    assert pg["error"] is None and pg["output"] == "False 42\n", pg


def test_stop_restarts_python_waiting_on_javascript_forever(playground):
    """Python awaiting a promise that never settles never checks the interrupt: after the grace
    period the worker is restarted (and the SIGINT left in the buffer does not hit the new one)."""
    pg = start_and_stop(playground, "import js\nawait js.Promise.new(lambda resolve, reject: None)\n")
    assert pg["stopped"] == "restarted" and "did not stop" in pg["error"], pg
    pg = run(playground, "print(sum(range(5)))")
    assert pg["error"] is None and pg["output"] == "10\n", pg


def test_a_traceback_shows_only_the_users_frames(playground):
    pg = run(playground, "def f(x):\n    return 1 / x\n\nf(0)\n")
    error = pg["error"]
    assert error.startswith("Traceback (most recent call last):\n"), error
    assert frames(error) == ['  File "playground.py", line 4, in <module>', '  File "playground.py", line 2, in f'], error
    assert "return 1 / x" in error                                  # the user's source lines are shown
    assert error.rstrip().endswith("ZeroDivisionError: division by zero"), error
    assert not any(mark in error for mark in RUNNER_MARKS), error
    assert playground.text_content("#output .error") == error


def test_a_traceback_keeps_the_frames_the_users_code_called(playground):
    error = run(playground, "import webgrad as wg\n\nwg.ones(2, 3) @ wg.ones(4, 5)\n")["error"]
    names = frames(error)
    assert names[0] == '  File "playground.py", line 3, in <module>', error
    assert all("site-packages/webgrad/" in line for line in names[1:]) and len(names) >= 2, error
    last = error.rstrip().splitlines()[-1]       # a ShapeError is PyTorch's RuntimeError (and a ValueError)
    assert last.startswith("webgrad.shapes.ShapeError: matmul: shapes (2, 3) and (4, 5)"), error
    assert not any(mark in error for mark in RUNNER_MARKS), error


def test_a_syntax_error_shows_the_line_and_no_frames(playground):
    error = run(playground, "x = 1\ny = (\n")["error"]
    assert error.startswith('  File "playground.py", line 2'), error
    assert "SyntaxError" in error and "Traceback" not in error, error


def test_system_exit_ends_the_run_only(playground):
    pg = run(playground, "import sys\nsys.exit(3)")
    assert pg["error"].rstrip().endswith("SystemExit: 3"), pg
    assert run(playground, "print('still here')")["output"] == "still here\n"


def test_each_example_runs(playground):
    examples = playground.eval_on_selector_all("#example option", "os => os.map(o => o.value)")
    assert {"autograd", "wgsl", "training"} <= set(examples), examples
    outputs = {}
    for name in examples:
        playground.select_option("#example", name)
        code = playground.input_value("#code")
        assert "import webgrad" in code, name
        pg = run(playground, code, timeout_ms=2 * START_MS)
        assert pg["error"] is None, (name, pg["output"])
        outputs[name] = pg
    assert "x.grad: [3.5, -7.0, 14.0]" in outputs["autograd"]["output"]
    lines = dict(line.split(":", 1) for line in outputs["wgsl"]["output"].splitlines())
    assert eval(lines["swish(x)"]) == pytest.approx(eval(lines["from ops"]), abs=1e-4), lines
    losses = outputs["training"]["series"]["loss"]
    assert len(losses) == 200 and losses[-1] < 0.1 * losses[0], losses[::20]
    # the posted losses were drawn
    assert playground.is_visible("#plot")
    painted = playground.evaluate("""() => {
        const c = document.getElementById('plot');
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 0; i < px.length; i += 4) n += px[i + 2] > 200 && px[i] < 100; return n; }""")
    assert painted > 100, painted                                  # pixels of the blue loss line


def test_an_example_opens_from_the_query(browser_page, server_url):
    browser_page.goto(f"{server_url}playground.html?{PYODIDE}&example=wgsl")
    assert browser_page.input_value("#example") == "wgsl"
    assert "wgsl_elementwise" in browser_page.input_value("#code")


def test_the_playground_logged_no_errors(playground):
    assert playground.errors == [], playground.errors


def test_stop_restarts_where_the_page_cannot_interrupt(new_page):
    """A page without cross-origin isolation has no SharedArrayBuffer: stop() restarts the worker."""
    page = new_page(WebgradPage).start()
    assert page.evaluate("async () => [crossOriginIsolated, window.wg.interruptible]") == [False, False]
    page.ok("before = 1")
    how, result = page.evaluate("""async () => {
        const running = window.wg.run("while True: pass");
        await new Promise((res) => setTimeout(res, 500));
        const how = await window.wg.stop();
        return [how, await running];
    }""")
    assert how == "restarted" and "cannot interrupt" in result["error"], (how, result)
    assert page.ok("print('before' in globals(), 1 + 1)") == "False 2\n"
    assert page.evaluate("async () => await window.wg.stop()") == "idle"
    assert page.errors == [], page.errors
