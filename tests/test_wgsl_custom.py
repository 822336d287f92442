"""User WGSL kernels (webgrad.wgsl_elementwise, webgrad.wgsl_kernel) on the ``wgpu`` backend:
forward and gradients agree with cpu twins, broadcasting, compile errors located in the
user's text, the clash warning, and lazy, cached pipelines."""
import warnings

import numpy as np
import pytest

import webgrad as wg
from webgrad import registry
from webgrad.backends.gpu import GpuError

if "wgpu" not in wg.backends():
    pytest.skip("the wgpu backend does not start here", allow_module_level=True)

GPU = ("wgpu", "webgpu")
ROW_SOFTMAX = """
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = flat_index(wid, nwg, lid);
    let cols = u.shape_in0[RANK_IN0 - 1u];
    if (row * cols >= u.size_out) { return; }
    var m = in0[row * cols];
    for (var j = 1u; j < cols; j++) { m = max(m, in0[row * cols + j]); }
    var s = 0.0;
    for (var j = 0u; j < cols; j++) { s += exp(u.beta * (in0[row * cols + j] - m)); }
    for (var j = 0u; j < cols; j++) { out[row * cols + j] = exp(u.beta * (in0[row * cols + j] - m)) / s; }
}
"""


@pytest.fixture
def cleanup():
    """Names registered by a test; their kernels (GPU and cpu) and gradients go afterwards."""
    names = []
    yield names
    for name in names:
        for b in GPU + ("cpu",):
            registry._kernels.get(b, {}).pop(name, None)
        registry._gradients.pop(name, None)
        assert not any(name in table for table in registry._kernels.values())


def swish(names):
    names.append("Swish")
    op = wg.wgsl_elementwise("Swish", "x / (1.0 + exp(-beta * x))", inputs=("x",), attrs=("beta",))
    wg.register_kernel("Swish", "cpu", lambda x, *, beta: np.asarray(x / (1 + np.exp(-beta * x)), dtype=x.dtype))

    @wg.register_gradient("Swish", inputs_to_save=[0])
    def _(dy, saved, attrs):
        (x,) = saved
        s = (x * attrs["beta"]).sigmoid()
        return (dy * (s + x * attrs["beta"] * s * (1 - s)),)
    return op


def grads_on(backend, op, arrays, **attrs):
    xs = [wg.tensor(a, backend=backend, requires_grad=True) for a in arrays]
    y = op(*xs, **attrs)
    (y * wg.tensor(np.linspace(-1, 1, y.numel()).reshape(y.shape).astype(np.float32), backend=backend)).sum().backward()
    return y.detach().numpy(), [x.grad.numpy() for x in xs]


def agree(op, arrays, **attrs):
    (y_gpu, g_gpu), (y_cpu, g_cpu) = grads_on("wgpu", op, arrays, **attrs), grads_on("cpu", op, arrays, **attrs)
    np.testing.assert_allclose(y_gpu, y_cpu, rtol=1e-5, atol=1e-6)
    for a, b in zip(g_gpu, g_cpu):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    return y_gpu


def test_expression_kernel_agrees_with_cpu_twin(cleanup):
    op = swish(cleanup)
    rng = np.random.default_rng(0)
    for shape in [(), (7,), (3, 5), (1500,)]:       # 1500: several workgroups
        x = rng.standard_normal(shape).astype(np.float32)
        y = agree(op, [x], beta=1.7)
        np.testing.assert_allclose(y, x / (1 + np.exp(-1.7 * x)), rtol=1e-5, atol=1e-6)
    assert op(wg.zeros(0, backend="wgpu"), beta=1.0).shape == (0,)
    with pytest.raises(TypeError, match="Swish: takes attrs"):
        op(wg.ones(2, backend="wgpu"))


def test_expression_kernel_broadcasts_two_inputs(cleanup):
    cleanup.append("Blend")
    op = wg.wgsl_elementwise("Blend", "a * tanh(b) + t * b * b", inputs=("a", "b"), attrs=("t",))
    wg.register_kernel("Blend", "cpu", lambda a, b, *, t: np.asarray(a * np.tanh(b) + t * b * b, dtype=a.dtype))
    wg.register_gradient("Blend", lambda dy, s, at: (dy * s[1].tanh(), dy * (s[0] * (1 - s[1].tanh() ** 2) + 2 * at["t"] * s[1])),
                         inputs_to_save=[0, 1])
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 1, 3)).astype(np.float32), rng.standard_normal((5, 1)).astype(np.float32)
    y = agree(op, [a, b], t=0.5)
    assert y.shape == (4, 5, 3)
    np.testing.assert_allclose(y, a * np.tanh(b) + 0.5 * b * b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Blend"):
        op(wg.ones(2, backend="wgpu"), wg.ones(3, backend="wgpu"), t=1.0)


def test_expression_kernel_dtypes(cleanup):
    cleanup.append("IsBig")
    op = wg.wgsl_elementwise("IsBig", "x > limit", attrs=("limit",), dtype="bool")
    out = op(wg.tensor([1, 5, 9], backend="wgpu"), limit=4.0)
    assert out.dtype == wg.bool and out.tolist() == [False, True, True]


def test_full_shader_kernel_agrees_with_cpu_twin(cleanup):
    cleanup.append("RowSoftmax")
    op = wg.wgsl_kernel("RowSoftmax", ROW_SOFTMAX, attrs=("beta",),
                        output=lambda shapes, attrs: (shapes[0], "float32"),
                        grid=lambda shapes, attrs: -(-(int(np.prod(shapes[0][:-1]))) // 64))

    @wg.register_kernel("RowSoftmax", "cpu")
    def _(x, *, beta):
        e = np.exp(beta * (x - x.max(-1, keepdims=True)))
        return np.asarray(e / e.sum(-1, keepdims=True), dtype=x.dtype)

    @wg.register_gradient("RowSoftmax", outputs_to_save=[0])
    def _(dy, saved, attrs):
        (y,) = saved
        return (attrs["beta"] * y * (dy - (dy * y).sum(-1, keepdim=True)),)

    rng = np.random.default_rng(2)
    for shape in [(3, 4), (2, 3, 5), (130, 7)]:      # 130 rows: three workgroups
        x = rng.standard_normal(shape).astype(np.float32)
        y = agree(op, [x], beta=1.5)
        np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-5)


def test_full_shader_flat_dispatch_and_second_order(cleanup):
    cleanup.append("Reverse")
    src = """
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid);
    if (i >= u.size_out) { return; }
    out[i] = in0[u.size_in0 - 1u - i];
}
"""
    op = wg.wgsl_kernel("Reverse", src, output=lambda shapes, attrs: (shapes[0], "float32"), workgroup_size=32)
    wg.register_kernel("Reverse", "cpu", lambda x: x[::-1].copy())
    wg.register_gradient("Reverse", lambda dy, saved, attrs: (op(dy),))
    x = np.arange(1000, dtype=np.float32)
    np.testing.assert_array_equal(agree(op, [x]), x[::-1])
    t = wg.tensor([1.0, 2.0, 3.0], backend="wgpu", requires_grad=True)
    (g,) = wg.grad((op(t) ** 3 * wg.tensor([1.0, 0.0, 0.0], backend="wgpu")).sum(), t, create_graph=True)
    (h,) = wg.grad(g.sum(), t)
    assert g.tolist() == [0.0, 0.0, 27.0] and h.tolist() == pytest.approx([0.0, 0.0, 18.0], rel=1e-6)


def test_compile_errors_name_the_users_line_and_column(cleanup):
    cleanup += ["BadExpr", "BadShader"]
    bad = wg.wgsl_elementwise("BadExpr", "x +* 2.0")                 # registering compiles nothing
    with pytest.raises(wg.WgslError, match=r"'BadExpr': line 1, column 4") as e:
        bad(wg.ones(3, backend="wgpu"))
    assert (e.value.line, e.value.column) == (1, 4)
    src = "@compute @workgroup_size(WG)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n  let i = = g.x;\n}\n"
    shader = wg.wgsl_kernel("BadShader", src, output=lambda shapes, attrs: (shapes[0], "float32"))
    with pytest.raises(wg.WgslError, match=r"line 3, column 11") as e:
        shader(wg.ones(3, backend="wgpu"))
    assert "let i = = g.x;" in str(e.value) and isinstance(e.value, GpuError)
    assert not any(k[:2] in (("ew", "BadExpr"), ("wgsl", "BadShader")) for k in wg.backend("wgpu").pipelines)


def test_a_name_clash_warns_once(cleanup):
    cleanup.append("Clash")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wg.wgsl_elementwise("Clash", "x + 1.0")
    with pytest.warns(UserWarning, match="'Clash' was already registered for wgpu, webgpu") as rec:
        op = wg.wgsl_elementwise("Clash", "x + 2.0")
    assert len(rec) == 1 and rec[0].filename == __file__
    assert op(wg.zeros(2, backend="wgpu")).tolist() == [2.0, 2.0]       # the new source, a new pipeline
    with pytest.warns(UserWarning, match="'Exp' was already registered"):
        wg.wgsl_kernel("Exp", "", output=lambda shapes, attrs: (shapes[0], "float32"))
    builtin = wg.get_kernel("Exp", "cpu")
    for b in GPU:
        registry._kernels.get(b, {}).pop("Exp", None)
    from webgrad.backends.gpu import register_kernels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        register_kernels("wgpu")                                          # restore the built-in Exp
    assert wg.get_kernel("Exp", "cpu") is builtin
    assert wg.tensor([0.0], backend="wgpu").exp().tolist() == [1.0]


def test_pipelines_are_lazy_and_cached_per_key(cleanup):
    be = wg.backend("wgpu")
    ours = lambda: [k for k in be.pipelines if k[:2] in (("ew", "LazyEw"), ("wgsl", "LazyShader"))]   # noqa: E731
    cleanup += ["LazyEw", "LazyShader"]
    op = wg.wgsl_elementwise("LazyEw", "x * beta", attrs=("beta",))
    assert len(ours()) == 0
    op(wg.ones(3, backend="wgpu"), beta=1.0)
    op(wg.ones(2, 5, backend="wgpu"), beta=3.0)                 # another shape and attr value
    assert len(ours()) == 1
    soft = wg.wgsl_kernel("LazyShader", ROW_SOFTMAX, attrs=("beta",), output=lambda shapes, attrs: (shapes[0], "float32"))
    soft(wg.ones(2, 3, backend="wgpu"), beta=1.0).tolist()
    soft(wg.ones(4, 7, backend="wgpu"), beta=2.0).tolist()      # same rank: same pipeline
    assert len(ours()) == 2
    soft(wg.ones(2, 2, 2, backend="wgpu"), beta=1.0)            # another rank: another one
    assert len(ours()) == 3
