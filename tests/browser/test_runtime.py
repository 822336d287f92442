"""webgrad in headless Chromium: Pyodide in a Web Worker, the wheel built from this checkout,
and the browser's WebGPU as backend ``webgpu`` (DESIGN.md §4-5; issue 4 items 1 and 3)."""
import hashlib

from browser_harness import ARGS, ROOT, WebgradPage, launch

TRAIN = """
import webgrad as wg
wg.manual_seed(0)
x = wg.randn(64, 4)
y = x @ wg.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.25
model = wg.nn.Sequential(wg.nn.Linear(4, 16), wg.nn.ReLU(), wg.nn.Linear(16, 1))
opt = wg.optim.Adam(model.parameters(), lr=0.05)
losses = []
for step in range(30):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(model[0].weight.device, losses[-1] < losses[0] / 4)
"""


def test_webgpu_is_chosen_by_default_without_numpy(webgrad_page):
    assert webgrad_page.backend["name"] == "webgpu", webgrad_page.backend
    assert "swiftshader" in webgrad_page.backend["adapter"].lower(), webgrad_page.backend
    out = webgrad_page.ok("""
import sys, importlib.util, webgrad as wg
print(sys.platform, wg.get_backend().name, wg.ones(2).device, importlib.util.find_spec("numpy") is None)
print(sorted(wg.backends()))
""")
    assert out == "emscripten webgpu webgpu True\n['webgpu']\n", out


def test_the_page_runs_the_wheel_built_from_this_checkout(webgrad_page):
    out = webgrad_page.ok("""
import hashlib, webgrad
from webgrad.backends.gpu import browser as b
print(webgrad.__file__)
print(hashlib.sha256(open(b.__file__, "rb").read()).hexdigest())
""")
    path, digest = out.split()
    assert "site-packages/webgrad/" in path
    assert digest == hashlib.sha256((ROOT / "backends/gpu/browser.py").read_bytes()).hexdigest()


def test_sync_readback_through_jspi(webgrad_page):
    out = webgrad_page.ok("""
import webgrad as wg
x = wg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = (x * x * 3).mean()
y.backward()
print(y.item(), x.grad.tolist(), wg.arange(5).tolist(), (x > 2).tolist())
""")
    assert out == "22.5 [[1.5, 3.0], [4.5, 6.0]] [0, 1, 2, 3, 4] [[False, False], [True, True]]\n", out


def test_async_readback(webgrad_page):
    out = webgrad_page.ok("""
import webgrad as wg
t = wg.arange(6.0).reshape(2, 3) * 0.5
print(await t.read(), await (t.sum()).read(), await wg.zeros(0).read())
""")
    assert out == "[[0.0, 0.5, 1.0], [1.5, 2.0, 2.5]] 7.5 []\n", out


def test_sync_readback_without_jspi_names_await_data(webgrad_page):
    r = webgrad_page.run("import webgrad as wg\nwg.ones(3).tolist()", sync_entry=True)
    assert r["error"] and "SyncReadbackError" in r["error"] and "await t.read()" in r["error"], r
    assert "JSPI" in r["error"]
    # the same session still reads back both ways afterwards
    assert webgrad_page.ok("import webgrad as wg\nprint(wg.ones(2).tolist(), await wg.ones(1).read())") == \
        "[1.0, 1.0] [1.0]\n"


def test_custom_wgsl_elementwise_kernel_runs_on_webgpu(webgrad_page):
    out = webgrad_page.ok("""
import webgrad as wg
swish = wg.wgsl_elementwise("BrowserSwish", "x / (1.0 + exp(-beta * x))", attrs=("beta",))
t = wg.tensor([0.0, 1.0, -2.0])
print(t.device, [round(v, 5) for v in swish(t, beta=1.0).tolist()])
""")
    assert out == "webgpu [0.0, 0.73106, -0.23841]\n", out


def test_wgsl_compile_error_is_a_python_error_with_the_line(webgrad_page):
    r = webgrad_page.run("""
import webgrad as wg
bad = wg.wgsl_elementwise("BrowserBad", "x +* 2.0")
bad(wg.ones(2)).tolist()
""")
    assert r["error"] and "WgslError" in r["error"] and "'BrowserBad'" in r["error"], r
    assert "line 1" in r["error"], r["error"]


def test_post_and_stdout_reach_the_page(webgrad_page):
    webgrad_page.ok("import webgrad.web\nprint('hello from python')\nwebgrad.web.post({'loss': 0.5, 'step': [1, 2]})")
    messages = webgrad_page.messages()
    assert {"type": "post", "data": {"loss": 0.5, "step": [1, 2]}} in messages, messages
    assert {"type": "stdout", "text": "hello from python"} in messages, messages


def test_shapes_are_sizes_that_reach_javascript_as_arrays(webgrad_page):
    """``Tensor.shape`` is a ``webgrad.Size`` on ``webgpu`` too, and a tuple subclass converts through
    Pyodide's ``to_js`` (and so ``webgrad.web.post``) as a tuple does: a JS Array of numbers."""
    out = webgrad_page.ok("""
import webgrad as wg, webgrad.web
from pyodide.ffi import to_js
x = wg.ones(2, 3)
s = x.sum(1, keepdim=True).shape
a = to_js(s)
print(x.device, s, s[1:], x.size(1), type(a).__name__, a.length, a[0] + a[1])
webgrad.web.post({"shape": x.shape, "shapes": [x.shape, wg.Size()]})
""")
    assert out == "webgpu webgrad.Size([2, 1]) webgrad.Size([1]) 3 JsProxy 2 3\n", out
    messages = webgrad_page.messages()
    assert {"type": "post", "data": {"shape": [2, 3], "shapes": [[2, 3], []]}} in messages, messages


def test_training_loop_on_webgpu(webgrad_page):
    assert webgrad_page.ok(TRAIN, timeout_s=120) == "webgpu True\n"


def test_python_errors_come_back_as_run_errors(webgrad_page):
    r = webgrad_page.run("import webgrad as wg\nwg.ones(2, 3) @ wg.ones(2, 3)")
    assert r["error"] and "matmul" in r["error"] and "ShapeError" in r["error"], r   # a RuntimeError, as PyTorch's


def test_run_errors_show_the_users_frames_only(webgrad_page):
    """wg.run's traceback starts at the user's code (Pyodide's runner frames dropped); a file name
    given to run() names the frames and brings the source lines."""
    r = webgrad_page.run("def f():\n    raise KeyError('k')\n\nf()")
    stack = [line for line in r["error"].splitlines() if line.startswith("  File ")]
    assert stack == ['  File "<exec>", line 4, in <module>', '  File "<exec>", line 2, in f'], r["error"]
    assert r["error"].startswith("Traceback") and r["error"].endswith("KeyError: 'k'\n"), r["error"]
    r = webgrad_page.evaluate("async () => await window.wg.run('x = 1\\nx.nope', {filename: 'main.py'})")
    assert r["error"].splitlines()[1:3] == ['  File "main.py", line 2, in <module>', "    x.nope"], r["error"]
    assert "_pyodide" not in r["error"] and "AttributeError" in r["error"], r["error"]


def test_the_page_logged_no_errors(webgrad_page):
    assert webgrad_page.errors == [], webgrad_page.errors


def test_pipeline_validation_error_is_a_python_error(webgrad_page):
    # compiles, but asks for more workgroup memory than the device's 16 KiB: pipeline creation fails
    r = webgrad_page.run('''
import webgrad as wg
big = wg.wgsl_kernel("BrowserTooBig", """
var<workgroup> scratch: array<f32, 8192>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid);
    scratch[lid] = 1.0;
    if (i < u.size_out) { out[i] = in0[i] + scratch[lid]; }
}""", output=lambda shapes, attrs: (shapes[0], "float32"))
big(wg.ones(4)).tolist()
''')
    assert r["error"] and "GpuError" in r["error"] and "BrowserTooBig" in r["error"], r
    assert webgrad_page.ok("import webgrad as wg\nprint((wg.ones(2) * 2).tolist())") == "[2.0, 2.0]\n"


NO_JSPI = """
import webgrad as wg
from webgrad.backends.gpu import browser
real = browser.can_block
browser.can_block = lambda: False          # as in a browser without JSPI (Firefox, Safari today)
try:
{body}
finally:
    browser.can_block = real
"""


def test_without_jspi_await_data_works_and_tolist_names_it(webgrad_page):
    out = webgrad_page.ok(NO_JSPI.format(body="""
    t = wg.tensor([1.0, 2.0], requires_grad=True)
    (t * t).sum().backward()
    print(await t.grad.read())
    try:
        t.grad.tolist()
    except browser.SyncReadbackError as e:
        print("error names", "await t.read()" in str(e))
"""))
    assert out == "[2.0, 4.0]\nerror names True\n", out


def test_without_jspi_a_compile_error_surfaces_at_the_next_readback(webgrad_page):
    r = webgrad_page.run(NO_JSPI.format(body="""
    bad = wg.wgsl_elementwise("BrowserLateBad", "2.0 * (x +* 1.0)")
    y = bad(wg.ones(2))                    # the pipeline is checked asynchronously
    print("recorded")
    await y.read()
"""))
    assert r["stdout"] == "recorded\n" and r["error"] and "WgslError" in r["error"], r
    assert "'BrowserLateBad'" in r["error"] and "line 1" in r["error"], r["error"]
    assert webgrad_page.ok("import webgrad as wg\nprint(await (wg.ones(2) + 1).read())") == "[2.0, 2.0]\n"


def test_without_a_webgpu_adapter_the_page_says_why(playwright, web_server):
    b = launch(playwright, [a for a in ARGS if a != "--enable-unsafe-webgpu"] + ["--disable-features=WebGPU"])
    try:
        page = WebgradPage(b, web_server).start()
        assert page.backend["name"] == "none", page.backend
        assert "no adapter" in page.backend["adapter"] and "numpy" in page.backend["adapter"], page.backend
        r = page.run("import webgrad as wg\nwg.ones(2)")
        assert "no webgrad backend could start" in r["error"] and "webgpu" in r["error"], r
        assert page.errors == [], page.errors
    finally:
        b.close()


PROBE_F16 = """
import webgrad as wg
be = wg.registry.backend("webgpu")
print("shader-f16" in be.device.adapter_features, "shader-f16" in be.device.features, wg.float16 in be.dtypes)
"""


def test_float16_on_webgpu_where_the_adapter_has_shader_f16(webgrad_page):
    """gpu.js asks for shader-f16 when the adapter has it (SwiftShader does); the same WGSL as ``wgpu``'s
    then holds float16 in 2 bytes, computes in float32 and rounds as PyTorch does."""
    offered, granted, holds = webgrad_page.ok(PROBE_F16).split()
    assert offered == granted == holds, (offered, granted, holds)
    if holds == "True":
        out = webgrad_page.ok("""
import webgrad as wg
x = wg.tensor([1.0, 2.5, 65519.0, 1e6, -3.3333], dtype=wg.float16)
w = wg.tensor([[0.5, -1.0, 0.25]], requires_grad=True).half()
w.retain_grad()
loss = (wg.ones(3, 1).half() @ w).sum() * 2
loss.backward()
print(x.device, x.dtype, x.tolist(), (x * 3).tolist()[:2], (x[:2].sum()).item(), await x[:3].read())
print(loss.dtype, loss.item(), w.grad.dtype, w.grad.tolist())
""")
        assert out == ("webgpu webgrad.float16 [1.0, 2.5, 65504.0, inf, -3.333984375] [3.0, 7.5] 3.5 "
                       "[1.0, 2.5, 65504.0]\nwebgrad.float16 -1.5 webgrad.float16 [[6.0, 6.0, 6.0]]\n"), out
    else:
        r = webgrad_page.run("import webgrad as wg\nwg.ones(2, dtype=wg.float16)")
        assert "dtype float16 is not supported on the GPU backend 'webgpu'" in r["error"], r
        assert "shader-f16" in r["error"] and "t.to(webgrad.float32)" in r["error"], r
    r = webgrad_page.run("import webgrad as wg\nwg.ones(2, dtype=wg.bfloat16)")
    assert "WGSL has no bfloat16 type" in r["error"] and "t.to('cpu')" in r["error"], r
