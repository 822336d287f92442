"""Browser fixtures: the local server (a wheel built from this checkout, web/, the npm Pyodide),
Debian's headless Chromium through Playwright, and a page with webgrad started in its worker.

Needs /usr/bin/chromium (Debian's ``chromium``), the ``playwright`` Python package (never
``playwright install``: it downloads a browser) and ``web/node_modules/pyodide`` (``npm install``
in web/); ``bash .ci/test.sh`` installs all three. Without them these tests skip, saying what to
install -- and in CI a skip fails the run.
"""
import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
PYODIDE = ROOT / "web" / "node_modules" / "pyodide"
WHEEL_CACHE = ROOT / "build" / "pyodide-wheels"     # pytest and its pure-Python dependencies (.ci/test.sh)
ARGS = ["--enable-unsafe-webgpu", "--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
BLANK = "__blank__.html"                            # an empty same-origin page (served by a Playwright route)
TIMEOUT_S = 90


def missing() -> str | None:
    """Why the browser tests cannot run here (the install line), or None."""
    if not os.path.exists(CHROMIUM):
        return f"needs {CHROMIUM}: sudo apt-get install -y chromium  (bash .ci/test.sh does it as root)"
    if importlib.util.find_spec("playwright") is None:
        return "needs Playwright for Python: pip install playwright  (never `playwright install`)"
    if not (PYODIDE / "pyodide.mjs").exists():
        return "needs the npm package pyodide in web/: (cd web && npm install)  (bash .ci/test.sh does it)"
    return None


@pytest.fixture(scope="session")
def web_server():
    """The local server (webgrad.web.serve) on a free port, with a freshly built wheel; also
    serves build/pyodide-wheels at /test-wheels/."""
    reason = missing()
    if reason:
        pytest.skip(reason)
    from webgrad.web.serve import Server
    mounts = {"test-wheels": WHEEL_CACHE} if WHEEL_CACHE.is_dir() else {}
    with Server(port=0, mounts=mounts) as server:
        yield server


@pytest.fixture(scope="session")
def playwright(web_server):
    """Playwright's sync API (one per session; launch browsers from it)."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        yield p


def launch(playwright, args=ARGS):
    """Debian's Chromium, headless, with ``args`` (WebGPU on by default)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=list(args))


@pytest.fixture(scope="session")
def browser(playwright):
    b = launch(playwright)
    yield b
    b.close()


class Page:
    """A Playwright page on the server's origin that records console errors and page errors."""

    def __init__(self, browser, server):
        self.server = server
        self.page = browser.new_page()
        self.errors = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.route(server.url + BLANK, lambda r: r.fulfill(body="<!doctype html><title>webgrad test</title>",
                                                                 content_type="text/html"))

    def goto(self, path: str = BLANK):
        self.page.goto(self.server.url + path)
        return self

    def evaluate(self, script: str, arg=None, timeout_s: float = TIMEOUT_S):
        """Await the async JS function ``script`` (called with ``arg``), failing after ``timeout_s``."""
        wrapped = f"""async ([arg, ms]) => {{
            const f = {script};
            let timer;
            const limit = new Promise((_, rej) => timer = setTimeout(() => rej(new Error(`timed out after ${{ms}} ms`)), ms));
            try {{ return await Promise.race([f(arg), limit]); }} finally {{ clearTimeout(timer); }}
        }}"""
        return self.page.evaluate(wrapped, [arg, int(timeout_s * 1000)])

    def close(self):
        self.page.close()


class WebgradPage(Page):
    """A page with webgrad started as the site's pages start it (webgrad.js with page.js's
    ``siteOptions()``: the site's Pyodide, wheel and start-up snapshot; ``options`` override them)
    as ``window.wg``."""

    def start(self, **options):
        self.goto()
        self.backend = self.evaluate("""async (options) => {
            const {startWebgrad} = await import("./webgrad.js");
            const {siteOptions} = await import("./page.js");
            window.messages = [];
            window.wg = await startWebgrad({...siteOptions(), ...options});
            window.wg.onMessage((m) => window.messages.push(m));
            return window.wg.backend;
        }""", options)
        return self

    def run(self, code: str, sync_entry: bool = False, timeout_s: float = TIMEOUT_S) -> dict:
        """``wg.run(code)`` -> {stdout, stderr, error}; ``sync_entry`` runs through runPython (no JSPI)."""
        return self.evaluate("async ([code, sync]) => await window.wg.run(code, {async: !sync})",
                             [code, sync_entry], timeout_s)

    def ok(self, code: str, **kw) -> str:
        """Run ``code``, fail with its traceback on an error, return its stdout."""
        r = self.run(code, **kw)
        assert r["error"] is None, r["error"]
        return r["stdout"]

    def messages(self) -> list:
        return self.page.evaluate("window.messages")


@pytest.fixture(scope="session")
def webgrad_page(browser, web_server):
    """One page with webgrad started, shared by the session's tests (Pyodide starts once)."""
    page = WebgradPage(browser, web_server).start()
    yield page
    page.close()


@pytest.fixture(scope="session")
def server_url(web_server):
    """The local server's base URL, ending in /."""
    return web_server.url


@pytest.fixture
def browser_page(browser):
    """A fresh Playwright page (closed after the test)."""
    page = browser.new_page()
    yield page
    page.close()


@pytest.fixture
def new_page(browser, web_server):
    """A fresh Page (closed after the test)."""
    pages = []

    def make(cls=Page):
        pages.append(cls(browser, web_server))
        return pages[-1]
    yield make
    for p in pages:
        p.close()


def py_literal(obj) -> str:
    """``obj`` (JSON data) as a Python expression to embed in code run in the page."""
    return f"__import__('json').loads({json.dumps(json.dumps(obj))})"

