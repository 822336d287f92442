"""The page's start-up (issue 20 item 6) in headless Chromium: the site's assets come compressed
(``Content-Encoding`` br/gzip) and content-hashed with ``Cache-Control: immutable``; every visit, the
first too, starts Python from the snapshot made at the site's build (``webgrad.web.snapshot``); a
second visit takes the assets from the browser's caches (the server sees no request for them; the
snapshot, the standard library and the wheel from the Cache Storage copy the first visit kept); the
wheel is requested while Pyodide is still loading; the Python the page runs was compiled ahead of
time. Times are never asserted (bench/bench_browser.py --startup measures them)."""
import io
import zipfile

import pytest

from browser_harness import TIMEOUT_S

IMMUTABLE = "public, max-age=31536000, immutable"


def visit(context, server) -> dict:
    """Open startup.html (the site's own hashed Pyodide and wheel) in ``context``: its
    ``window.__startup``, the responses the page and its worker got ({path: headers}) and the file
    responses the server sent meanwhile."""
    first = len(server.requests)
    page = context.new_page()
    responses = {}
    page.on("response", lambda r: responses.setdefault(r.url.split("?")[0].replace(server.url, "/"), r.all_headers()))
    page.goto(server.url + "startup.html")
    page.wait_for_function("window.__startup && window.__startup.done", timeout=TIMEOUT_S * 1000)
    page.wait_for_function("window.__startup.kept || window.__startup.error", timeout=TIMEOUT_S * 1000)
    result = page.evaluate("window.__startup")
    page.close()
    assert result["error"] is None, result["error"]
    return {"startup": result, "responses": responses, "served": server.requests[first:]}


@pytest.fixture(scope="module")
def visits(browser, web_server):
    """A first visit and a second one in the same browser context (a fresh cache before the first)."""
    context = browser.new_context()
    try:
        yield [visit(context, web_server) for _ in range(2)]
    finally:
        context.close()


def asset_paths(responses) -> list:
    return [path for path in responses if path.startswith("/assets/")]


def test_both_visits_compute_the_first_result(visits):
    for v in visits:
        assert v["startup"]["result"] == "8.0" and v["startup"]["backend"] == "webgpu", v["startup"]
        assert 0 < v["startup"]["ready_ms"] <= v["startup"]["first_result_ms"]


def test_assets_are_hashed_and_cached_for_good(visits, web_server):
    responses = visits[0]["responses"]
    assets = asset_paths(responses)
    names = {path.rsplit("/", 1)[-1] for path in assets}
    assert {"pyodide.asm.wasm", "python_stdlib.zip", "pyodide.asm.mjs", "pyodide.mjs",
            web_server.wheel.name} <= names, sorted(responses)
    for path in assets:
        assert responses[path]["cache-control"] == IMMUTABLE, (path, responses[path])
    for page_file in ("/startup.html", "/startup.js", "/webgrad.js", "/worker.js", "/site.js"):
        assert responses[page_file]["cache-control"] == "no-cache", (page_file, responses[page_file])
    # the hash in a folder's name is its content's: the site.js the page read names these folders
    folders = {path.split("/")[2] for path in assets}
    site_js = (web_server.root / "site.js").read_text()
    assert all(folder in site_js for folder in folders), (folders, site_js)


def test_big_assets_come_compressed(visits):
    responses = visits[0]["responses"]
    by_name = {path.rsplit("/", 1)[-1]: headers for path, headers in responses.items()}
    for name in ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide.asm.mjs", "worker.js", "startup.html"):
        assert by_name[name].get("content-encoding") in ("br", "gzip"), (name, by_name[name])
        assert "accept-encoding" in by_name[name].get("vary", "").lower(), (name, by_name[name])
    sent = {r["path"].rsplit("/", 1)[-1]: r for r in visits[0]["served"]}
    wasm = sent["pyodide.asm.wasm"]
    assert wasm["encoding"] in ("br", "gzip") and wasm["bytes"] < 0.5 * wasm["raw"], wasm


def test_the_second_visit_loads_from_the_browser_cache(visits):
    first, second = visits
    assert asset_paths(first["responses"])
    assert not [r for r in second["served"] if r["path"].startswith("/assets/")], second["served"]
    revalidated = [r for r in second["served"] if r["status"] == 200]
    assert revalidated == [], revalidated          # the pages' own files: 304, nothing sent again
    assert sum(r["bytes"] for r in second["served"]) == 0
    assert first["startup"]["phases"]["snapshot"] == second["startup"]["phases"]["snapshot"] == "site"


def test_the_second_visit_reads_the_big_files_from_cache_storage(visits, web_server):
    """The first visit kept the snapshot, the standard library and the wheel in Cache Storage; the
    second one asks neither the server nor the HTTP cache for them (Pyodide's WebAssembly still
    comes from the HTTP cache, where V8 keeps its compiled code)."""
    kept = {web_server.site["snapshot"]["url"][1:], web_server.site["wheel"][1:],
            web_server.site["pyodide"][1:] + "python_stdlib.zip"}
    assert kept <= set(visits[0]["responses"]), sorted(visits[0]["responses"])
    assert not kept & set(visits[1]["responses"]), sorted(visits[1]["responses"])
    assert web_server.site["pyodide"][1:] + "pyodide.asm.wasm" in visits[1]["responses"]


def test_the_site_snapshot_is_built_packed(web_server):
    from webgrad.web.snapshot import unpack
    snapshot = web_server.site["snapshot"]
    assert snapshot is not None and snapshot["stdlib"].startswith("python3"), web_server.site
    packed = (web_server.root / snapshot["url"]).read_bytes()
    assert packed[:4] == b"WGS1" and len(packed) < 0.8 * len(unpack(packed))


def test_a_restored_start_seeds_random_again(new_page):
    """Python's random module was seeded when the snapshot was made; each start seeds it afresh."""
    from browser_harness import WebgradPage
    draws = []
    for _ in range(2):
        page = new_page(WebgradPage).start()
        assert page.evaluate("async () => window.wg.startup.snapshot") == "site"
        draws.append(page.ok("import random\nprint(random.random())"))
    assert draws[0] != draws[1], draws


def test_a_page_with_packages_or_another_pyodide_does_not_use_the_site_snapshot(new_page):
    from browser_harness import WebgradPage
    page = new_page(WebgradPage).start(pyodideUrl="./pyodide/", siteSnapshot=None)
    assert page.evaluate("async () => window.wg.startup.snapshot") in ("made", "restored")
    assert page.ok("import webgrad as wg\nprint(await (wg.ones(2) * 2).sum().read())") == "4.0\n"


def test_the_wheel_is_requested_while_pyodide_loads(visits, web_server):
    for v in visits:
        steps = v["startup"]["phases"]
        assert steps["worker"] <= steps["wheel_requested"] < steps["pyodide"] < steps["installed"], steps
        assert steps["installed"] <= steps["imported"] <= steps["ready"] <= v["startup"]["first_result_ms"], steps
    # the first visit took the wheel from the server once. (Which of two concurrent requests the
    # server logs first — the wheel's or Pyodide's standard library's — is a race under load, so the
    # order is read from the page's own marks above, not from the server's log.)
    names = [r["path"].rsplit("/", 1)[-1] for r in visits[0]["served"]]
    assert names.count(web_server.wheel.name) == 1, names


def test_the_python_shipped_is_compiled(web_server):
    """Pyodide's standard library as .pyc only, and the wheel with __pycache__ for Pyodide's Python
    (made by Pyodide under Node at site build; see webgrad.web.bytecode)."""
    assert web_server.site["notes"] == [], web_server.site["notes"]
    pyodide = web_server.root / web_server.site["pyodide"]
    names = zipfile.ZipFile(pyodide / "python_stdlib.zip").namelist()
    assert "asyncio/__init__.pyc" in names and not [n for n in names if n.endswith(".py")]
    wheel = zipfile.ZipFile(io.BytesIO((web_server.root / web_server.site["wheel"]).read_bytes()))
    assert "webgrad/__pycache__/tensor.cpython-314.pyc" in wheel.namelist()
    assert "webgrad/tensor.py" in wheel.namelist()


def test_a_page_without_the_snapshot_starts_the_same(new_page):
    """startWebgrad({snapshot: false}): no Cache Storage entry is read or made."""
    from browser_harness import WebgradPage
    page = new_page(WebgradPage).start(snapshot=False)
    startup = page.evaluate("async () => window.wg.startup")
    assert startup["snapshot"] == "off", startup
    assert page.ok("import webgrad as wg\nprint(await (wg.ones(3) * 3).sum().read())") == "9.0\n"
    assert page.evaluate("async () => (await caches.keys()).length") == 0
