"""webgrad in JupyterLite (issue 20 item 7): a site built here, offline, by ``webgrad.web.notebook``
(jupyterlite-core and jupyterlite-pyodide-kernel from PyPI, npm's Pyodide, the kernel's pure-Python
wheels from PyPI under a lock file of their own) starts the Pyodide kernel in headless Chromium, and
a notebook cell ``%pip install webgrad``s from the site's index, starts the ``webgpu`` backend and
trains a small model. The browser may reach nothing but the local server."""
import importlib.util
from pathlib import Path

import pytest

from browser_harness import ROOT, TIMEOUT_S, launch

NOTEBOOK_WHEELS = ROOT / "build" / "notebook-wheels"     # KERNEL_WHEELS, pip-downloaded by .ci/test.sh
KERNEL_START_S = 240                                      # Pyodide, IPython and the kernel, in a worker, on a loaded machine

CELL = """\
%pip install webgrad
from webgrad.backends.gpu import browser
info = await browser.init()
import webgrad as wg

wg.manual_seed(0)
x = wg.randn(64, 3)
y = x @ wg.tensor([[1.0], [-2.0], [0.5]]) + 0.25
model = wg.nn.Linear(3, 1)
opt = wg.optim.SGD(model.parameters(), lr=0.1)
for step in range(200):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("backend", wg.get_backend().name, x.device, info["architecture"])
print("loss", await loss.read(), loss.item())
print("weight", await model.weight.read(), "bias", await model.bias.read())
"""

RUN_CELL = """async ([code, ms]) => {
    const sm = window.jupyterapp.serviceManager;
    await sm.ready;
    const kernel = await sm.kernels.startNew({name: "python"});
    const out = [];
    const future = kernel.requestExecute({code});
    future.onIOPub = (msg) => out.push({type: msg.header.msg_type, content: msg.content});
    let timer;
    const limit = new Promise((_, rej) => timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms`)), ms));
    try {
        const reply = await Promise.race([future.done, limit]);
        return {status: reply.content.status, out};
    } finally { clearTimeout(timer); }
}"""


def missing_pieces() -> str | None:
    for module in ("jupyterlite_core", "jupyterlite_pyodide_kernel"):
        if importlib.util.find_spec(module) is None:
            return "needs jupyterlite: pip install 'webgrad[notebook]'  (bash .ci/test.sh does it)"
    from webgrad.web.notebook import KERNEL_WHEELS, wheels_missing
    lacking = wheels_missing(NOTEBOOK_WHEELS, KERNEL_WHEELS)
    if lacking:
        return (f"needs the kernel's wheels in {NOTEBOOK_WHEELS.relative_to(ROOT)}: pip download --no-deps "
                f"--only-binary=:all: --python-version 3.14 --dest build/notebook-wheels {' '.join(lacking)}"
                "  (bash .ci/test.sh does it)")
    return None


@pytest.fixture(scope="module")
def lite_server(web_server, tmp_path_factory):
    """A server of the JupyterLite site (at /lite/), built with the session's webgrad wheel."""
    reason = missing_pieces()
    if reason:
        pytest.skip(reason)
    from webgrad.web.notebook import build_site
    from webgrad.web.serve import Server
    site = build_site(tmp_path_factory.mktemp("lite") / "site", web_server.wheel, sorted(NOTEBOOK_WHEELS.glob("*.whl")),
                      ROOT / "web" / "node_modules" / "pyodide", expose_app=True)
    with Server(port=0, wheel=web_server.wheel, mounts={"lite": site}, bytecode=False, snapshot=False) as server:
        yield server


def run_cell(playwright, server, code: str) -> dict:
    """Open the site's REPL, start a Python kernel and run ``code``: {status, stdout, outside, errors}."""
    browser = launch(playwright)
    try:
        context = browser.new_context(service_workers="block")
        outside = []
        context.route(lambda url: not url.startswith(server.url),
                      lambda route: (outside.append(route.request.url), route.abort()))
        page = context.new_page()
        page.goto(server.url + "lite/repl/index.html")
        page.wait_for_function("window.jupyterapp !== undefined", timeout=TIMEOUT_S * 1000)
        reply = page.evaluate(RUN_CELL, [code, KERNEL_START_S * 1000])
    finally:
        browser.close()
    stream = "".join(m["content"].get("text", "") for m in reply["out"] if m["type"] == "stream")
    errors = [m["content"] for m in reply["out"] if m["type"] == "error"]
    return {"status": reply["status"], "stdout": stream, "errors": errors, "outside": outside}


def printed(stdout: str, word: str) -> list:
    line = next(t for t in stdout.splitlines() if t.startswith(word + " "))
    return line.split()[1:]


@pytest.mark.slow
def test_a_notebook_cell_installs_webgrad_and_trains_on_webgpu(playwright, lite_server):
    first = len(lite_server.requests)
    r = run_cell(playwright, lite_server, CELL)
    assert r["status"] == "ok" and not r["errors"], (r["errors"], r["stdout"][-3000:])
    assert r["outside"] == [], f"the page asked for addresses outside the site: {r['outside']}"
    assert printed(r["stdout"], "backend")[:2] == ["webgpu", "webgpu"], r["stdout"]
    read, item = (float(v) for v in printed(r["stdout"], "loss"))
    assert read == item and read < 1e-4, r["stdout"]
    words = printed(r["stdout"], "weight")
    weight = [float(v.strip("[],")) for v in words[:words.index("bias")]]
    bias = float(words[-1].strip("[]"))
    assert weight == pytest.approx([1.0, -2.0, 0.5], abs=1e-2) and bias == pytest.approx(0.25, abs=1e-2), r["stdout"]
    served = {Path(q["path"]).name for q in lite_server.requests[first:] if q["status"] in (200, 304)}
    assert lite_server.wheel.name in served, "the cell's %pip install took webgrad's wheel from the site"
    assert {"micropip-0.11.1-py3-none-any.whl", "ipython-9.12.0-py3-none-any.whl"} <= served, sorted(served)
