"""The pages of web/ in headless Chromium (SwiftShader WebGPU): the demo trains on ``webgpu`` and its
loss falls, with no console errors, its ``wg.compile``'d step replaying after its first calls; the
playground runs code with ``backward()`` and shows the gradients, and shows Python errors. Fixtures
(``server_url``, ``browser_page``) are in conftest.py.
"""
import re

import pytest

PYODIDE = "pyodide=./pyodide/"
START_MS = 60_000


def open_page(page, server_url, path):
    """Go to ``path`` on the local server, collecting console errors and uncaught exceptions."""
    errors = []
    page.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.goto(server_url.rstrip("/") + "/" + path)
    return errors


def test_demo_trains_on_webgpu_and_loss_falls(browser_page, server_url):
    steps = 30
    errors = open_page(browser_page, server_url, f"index.html?{PYODIDE}&steps={steps}&data=moons")
    browser_page.wait_for_function("['done', 'error'].includes(window.__demo.state)", timeout=START_MS)
    demo = browser_page.evaluate("window.__demo")
    assert demo["error"] is None, demo["error"]
    assert demo["state"] == "done"
    assert demo["backend"]["name"] == "webgpu" and demo["backend"]["adapter"]
    losses = demo["losses"]
    assert len(losses) == steps and all(isinstance(v, float) for v in losses)
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    assert last < 0.5 * first, f"loss did not fall: {first:.4f} -> {last:.4f}"
    assert demo["compiled"] == {"traces": 2, "replays": steps - 2}   # (the first step makes Adam's state)
    assert browser_page.eval_on_selector("#progress", "p => p.value") == 1
    assert browser_page.text_content("#backend") == "webgpu"
    assert "accuracy" in browser_page.text_content("#accuracy")
    # the decision boundary was drawn: the canvas is not blank
    painted = browser_page.evaluate("""() => {
        const c = document.getElementById('boundary');
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < px.length; i += 4) n += px[i] > 0; return n / (px.length / 4); }""")
    assert painted > 0.9
    assert errors == []


SNIPPET = """\
import webgrad as wg
x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = wg.tensor([0.5, -1.0, 2.0], requires_grad=True)
loss = ((x * w).sum() - 1) ** 2
loss.backward()
print("device", x.device)
print("loss", loss.item())
print("xgrad", x.grad.tolist())
print("wgrad", await w.grad.read())
"""


def run_in_playground(page, code):
    page.fill("#code", code)
    page.click("#run")
    page.wait_for_function("window.__playground.state === 'ready'", timeout=START_MS)
    return page.evaluate("window.__playground")


def test_playground_runs_backward_and_shows_gradients(browser_page, server_url):
    errors = open_page(browser_page, server_url, f"playground.html?{PYODIDE}")
    browser_page.wait_for_function("['ready', 'error'].includes(window.__playground.state)", timeout=START_MS)
    assert browser_page.evaluate("window.__playground.error") is None
    assert browser_page.text_content("#backend") == "webgpu"

    pg = run_in_playground(browser_page, SNIPPET)
    assert pg["error"] is None, pg["output"]
    shown = browser_page.text_content("#output")
    values = dict(line.split(" ", 1) for line in shown.strip().splitlines())
    assert values["device"] == "webgpu"
    assert float(values["loss"]) == pytest.approx(12.25)          # (x.w - 1)^2 with x.w = 4.5
    assert eval(values["xgrad"]) == pytest.approx([3.5, -7.0, 14.0])   # 2 (x.w - 1) w
    assert eval(values["wgrad"]) == pytest.approx([7.0, 14.0, 21.0])   # 2 (x.w - 1) x

    pg = run_in_playground(browser_page, "import webgrad as wg\nwg.ones(2, 3) @ wg.ones(4, 5)\n")
    assert pg["error"] and re.search(r"matmul: shapes \(2, 3\) and \(4, 5\)", pg["error"])
    assert "matmul" in browser_page.text_content("#output .error")
    assert errors == []


CUSTOM_OP = """
import webgrad as wg

# a new op: a WGSL kernel registered from Python, with a gradient written with ops
swish = wg.wgsl_elementwise("PlaygroundSwish", "x / (1.0 + exp(-beta * x))", inputs=("x",), attrs=("beta",))

@wg.register_gradient("PlaygroundSwish", inputs_to_save=[0])
def _(dy, saved, attrs):
    (x,) = saved
    s = (attrs["beta"] * x).sigmoid()
    return (dy * (s + attrs["beta"] * x * s * (1 - s)),)

wg.manual_seed(0)
x = wg.linspace(-2, 2, 32).reshape(32, 1)
y = (2 * x).sin()
w1, w2 = wg.randn(1, 16, requires_grad=True), wg.randn(16, 1, requires_grad=True)
opt = wg.optim.Adam([w1, w2], lr=0.05)
for step in range(60):
    loss = ((swish(x @ w1, beta=1.5) @ w2 - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step in (0, 59):
        print("loss", step, (await loss.read()))
print("device", loss.device)
"""


def test_playground_trains_with_a_custom_wgsl_op(browser_page, server_url):
    """The extending guide's promise, in the page: an op with a WGSL kernel and a gradient,
    registered from the playground, trains on webgpu."""
    open_page(browser_page, server_url, f"playground.html?{PYODIDE}")
    browser_page.wait_for_function("['ready', 'error'].includes(window.__playground.state)", timeout=START_MS)
    pg = run_in_playground(browser_page, CUSTOM_OP)
    assert pg["error"] is None, pg["output"]
    lines = browser_page.text_content("#output").strip().splitlines()
    losses = {int(line.split()[1]): float(line.split()[2].strip("[]")) for line in lines if line.startswith("loss")}
    assert "device webgpu" in lines
    assert losses[59] < 0.5 * losses[0], losses


def test_bench_page_agrees_with_direct_webgpu(browser_page, server_url):
    """bench.html, short (one timed run per row, the small MLP only): webgrad's chain result and MLP
    losses over three steps match the same work written directly in JS WebGPU (checked in the page),
    and every row has a time. ``python bench/bench_browser.py`` runs the full page."""
    errors = open_page(browser_page, server_url, f"bench.html?{PYODIDE}&repeat=1&mlp=small")
    browser_page.wait_for_function("window.__bench.done", timeout=2 * START_MS)
    bench = browser_page.evaluate("window.__bench")
    assert bench["error"] is None, bench["error"]
    assert bench["backend"]["name"] == "webgpu"
    assert len(bench["rows"]) == 4 and all(row["webgrad"] > 0 for row in bench["rows"])
    assert bench["startup"]["first_result_ms"] >= bench["startup"]["ready_ms"] > 0
    assert errors == []


def test_links_keep_the_shared_query(browser_page, server_url):
    """A page opened with a local Pyodide links to the others with it (the page's own settings,
    such as the demo's steps, stay behind); the playground reached from the demo starts."""
    for path in ("bench.html?repeat=1&mlp=small", "index.html?steps=1&data=moons"):
        browser_page.goto(f"{server_url}{path}&{PYODIDE}")
        browser_page.wait_for_function("[...document.querySelectorAll('nav a')].every(a => a.search)")
        links = browser_page.eval_on_selector_all("nav a", "as => as.map(a => [a.pathname, a.search])")
        assert [p for p, _ in links] == ["/index.html", "/playground.html", "/bench.html"], links
        assert all(q == "?pyodide=.%2Fpyodide%2F" for _, q in links), links
    browser_page.click("nav a[href*='playground.html']")
    browser_page.wait_for_url("**/playground.html?pyodide=*")
    browser_page.wait_for_function("['ready', 'error'].includes(window.__playground.state)", timeout=START_MS)
    assert browser_page.evaluate("window.__playground.error") is None


def test_the_served_pages_are_cross_origin_isolated(browser_page, server_url):
    """COOP/COEP on the page, its scripts, the worker, Pyodide's files and the wheel (the site's
    hashed one), which all still load; the page gets SharedArrayBuffer (the playground's Stop)."""
    seen = {}
    browser_page.on("response", lambda r: seen.setdefault(r.url.split("?")[0].rsplit("/", 1)[-1], r.all_headers()))
    browser_page.goto(f"{server_url}playground.html?{PYODIDE}")
    browser_page.wait_for_function("['ready', 'error'].includes(window.__playground.state)", timeout=START_MS)
    assert browser_page.evaluate("window.__playground.error") is None
    assert browser_page.evaluate("crossOriginIsolated && typeof SharedArrayBuffer === 'function'")
    wheel = [name for name in seen if name.endswith(".whl")]      # the site's hashed wheel
    assert len(wheel) == 1, sorted(seen)
    for name in ("playground.html", "playground.js", "webgrad.js", "worker.js", "pyodide.mjs", "pyodide.asm.wasm",
                 *wheel):
        assert name in seen, sorted(seen)
        headers = seen[name]
        assert headers.get("cross-origin-opener-policy") == "same-origin", (name, headers)
        assert headers.get("cross-origin-embedder-policy") == "require-corp", (name, headers)
