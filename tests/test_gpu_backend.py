"""The ``wgpu`` backend: every WGSL kernel against the cpu kernel (the oracle), and the
backend machinery -- pipeline cache, lazy batching, buffer pool, errors, readback.

Runs on any WebGPU adapter wgpu-py finds (lavapipe on CI). The backend is registered here
through ``register_native()`` until the shared backend list includes it.
"""
import asyncio

import numpy as np
import pytest

import webgrad as wg
from webgrad import kernel_names as K

RNG = np.random.default_rng(0)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def randint(low, high, *shape):
    return RNG.integers(low, high, size=shape).astype(np.int32)


def run_both(gpu, name, arrays, attrs):
    """(gpu result as numpy, cpu result) of kernel ``name``."""
    want = wg.get_kernel(name, "cpu")(*arrays, **attrs)
    got = wg.get_kernel(name, "wgpu")(*[gpu.from_array(a) for a in arrays], **attrs)
    return gpu.to_numpy(got), np.asarray(want)


def check(gpu, name, arrays, attrs=None, rtol=1e-5, atol=1e-5):
    got, want = run_both(gpu, name, arrays, attrs or {})
    assert got.shape == want.shape, f"{name}: shape {got.shape} != cpu {want.shape}"
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != cpu {want.dtype}"
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)


# ---------------------------------------------------------------- elementwise

SHAPES = [(), (1,), (7,), (4, 8), (3, 5, 7), (1001,)]
POSITIVE = {K.LOG, K.SQRT, K.RSQRT}
UNARY_ATTRS = {K.LEAKY_RELU: {"negative_slope": 0.1}, K.ELU: {"alpha": 1.3}, K.SOFTPLUS: {"beta": 2.0, "threshold": 3.0},
               K.CLAMP: {"min": -0.5, "max": 0.7}, K.POLYGAMMA: {"n": 2}}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(set(K.UNARY) - {K.CAST, K.LOGICAL_NOT, K.GELU, K.BITWISE_NOT}))
def test_unary(gpu, name, shape):
    x = randn(*shape) * 2
    if name in POSITIVE:
        x = np.abs(x) + 0.1
    if name == K.LOG1P:
        x = np.abs(x) - 0.9
    if name == K.ERFINV:
        x = np.tanh(x)   # its domain, [-1, 1]
    if name == K.NDTRI:
        x = 1 / (1 + np.exp(-x))   # its domain, [0, 1]
    if name in (K.LGAMMA, K.DIGAMMA, K.POLYGAMMA):
        x = np.abs(x) + 0.1        # away from the poles (float32 rounding of a pole's neighbours differs)
    if name == K.ROUND:
        x = np.round(x * 2) / 2 + randn(*shape) * 0.01 * (randn(*shape) > 0)   # halves: half-to-even
    check(gpu, name, [x], UNARY_ATTRS.get(name), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(gpu, approximate):
    check(gpu, K.GELU, [randn(257) * 3], {"approximate": approximate}, atol=2e-6)


@pytest.mark.parametrize("name", [K.NEG, K.ABS, K.SQUARE, K.RELU, K.SIGN, K.IDENTITY, K.CLAMP])
def test_unary_int(gpu, name):
    check(gpu, name, [randint(-9, 9, 37)], {"min": -3, "max": 4} if name == K.CLAMP else None)


def test_clamp_one_sided(gpu):
    check(gpu, K.CLAMP, [randn(9)], {"min": None, "max": 0.2})
    check(gpu, K.CLAMP, [randint(-9, 9, 9)], {"min": 0, "max": None})


def test_expm1_log1p_tiny(gpu):
    x = np.array([1e-7, -3e-6, 2e-4, -0.4, 0.6, 20.0], np.float32)
    check(gpu, K.EXPM1, [x], rtol=1e-5, atol=0)
    check(gpu, K.LOG1P, [x[:-1]], rtol=1e-5, atol=0)


BROADCASTS = [((5,), (5,)), ((4, 8), ()), ((), (3,)), ((4, 1), (1, 6)), ((2, 3, 4), (3, 1)), ((7,), (1,)),
              ((0, 3), (1, 3))]


@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize("name", sorted(set(K.BINARY) - set(K.BITWISE)))
def test_binary(gpu, name, shapes):
    a, b = randn(*shapes[0]), randn(*shapes[1])
    if name == K.POW:
        a = np.abs(a) + 0.1
    if name in (K.EQUAL, K.NOT_EQUAL, K.LESS_EQUAL, K.GREATER_EQUAL) and a.size and b.size:
        a = np.round(a)
        b = np.round(b)
    check(gpu, name, [a, b], rtol=1e-5, atol=1e-6)


def test_pow_negative_base(gpu):
    a = np.array([-2.0, -2.0, -1.5, 0.0, 0.0, 3.0], np.float32)
    b = np.array([3.0, 2.0, 2.0, 0.0, 2.0, -1.0], np.float32)
    check(gpu, K.POW, [a, b])


@pytest.mark.parametrize("name", [K.ADD, K.SUB, K.MUL, K.MAXIMUM, K.MINIMUM, K.EQUAL, K.LESS])
def test_binary_int(gpu, name):
    check(gpu, name, [randint(-50, 50, 4, 6), randint(-50, 50, 6)])


@pytest.mark.parametrize("name", [K.LOGICAL_AND, K.LOGICAL_OR, K.LOGICAL_XOR, K.EQUAL, K.BITWISE_AND, K.BITWISE_OR,
                                  K.BITWISE_XOR])
def test_logical_bool(gpu, name):
    check(gpu, name, [randn(5, 4) > 0, randn(4) > 0])


@pytest.mark.parametrize("name", K.BITWISE)
def test_bitwise_int(gpu, name):
    args = [randint(-2 ** 31, 2 ** 31 - 1, 4, 6)] + ([] if name == K.BITWISE_NOT else [randint(-40, 40, 6)])
    check(gpu, name, args)


def test_logical_not_and_where(gpu):
    check(gpu, K.LOGICAL_NOT, [randn(13) > 0])
    check(gpu, K.LOGICAL_NOT, [randint(-1, 2, 13)])
    check(gpu, K.WHERE, [randn(3, 1) > 0, randn(3, 4), randn(4)])
    check(gpu, K.WHERE, [randn(8) > 0, randint(0, 9, 8), randint(0, 9, 8)])


@pytest.mark.parametrize("dtype", [wg.float32, wg.int32, wg.bool])
def test_cast(gpu, dtype):
    for x in (randn(11) * 5, randint(-5, 5, 11), randn(11) > 0):
        check(gpu, K.CAST, [x], {"dtype": dtype})


def test_large_elementwise_split_dispatch(gpu):
    """More than 65535 workgroups of 64: the dispatch is split over y."""
    n = 65535 * 64 + 129
    a, b = randn(n), randn(1)
    got, want = run_both(gpu, K.ADD, [a, b], {})
    np.testing.assert_allclose(got, want, rtol=1e-6)
    x = np.arange(n, dtype=np.float32).reshape(1, n)
    got, want = run_both(gpu, K.TRANSPOSE, [x], {"perm": (1, 0)})      # the strided path, one item per thread
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- reductions

@pytest.mark.parametrize("axes", [(), (0,), (1,), (2,), (0, 2), (0, 1, 2)], ids=str)
@pytest.mark.parametrize("name", [K.SUM, K.PROD, K.MAX, K.MIN])
def test_reduce(gpu, name, axes):
    x = randn(3, 5, 7) if name != K.PROD else 1 + 0.1 * randn(3, 5, 7)
    for keepdim in (False, True):
        check(gpu, name, [x], {"axes": axes, "keepdim": keepdim}, rtol=1e-5)


@pytest.mark.parametrize("shape,axes", [((2000,), (0,)), ((4, 700), (1,)), ((300, 6), (0,)), ((33, 65), (0, 1))])
def test_reduce_large(gpu, shape, axes):
    x = randn(*shape)
    for name in (K.SUM, K.MAX, K.MIN):
        check(gpu, name, [x], {"axes": axes, "keepdim": False}, rtol=1e-4, atol=1e-4)
    check(gpu, K.SUM, [randint(-9, 9, *shape)], {"axes": axes, "keepdim": True})


@pytest.mark.parametrize("name", [K.ALL, K.ANY])
def test_all_any(gpu, name):
    for x in (randn(4, 9) > -1, randn(3, 200) > 2, randint(0, 3, 5, 6)):
        for axes in ((0,), (1,), (0, 1)):
            check(gpu, name, [x], {"axes": axes, "keepdim": False})


@pytest.mark.parametrize("name", [K.ARGMAX, K.ARGMIN])
def test_arg_reduce(gpu, name):
    check(gpu, name, [randn(3, 5, 7)], {"axis": 1, "keepdim": False})
    check(gpu, name, [randn(4, 1000)], {"axis": 1, "keepdim": True})
    check(gpu, name, [np.array([1.0, 3.0, 3.0, -1.0, 3.0], np.float32)], {"axis": 0, "keepdim": False})  # first tie
    check(gpu, name, [randint(0, 3, 6, 80)], {"axis": 1, "keepdim": False})
    check(gpu, name, [np.float32(2.0)], {"axis": 0, "keepdim": False})


def test_cumsum(gpu):
    for axis in (0, 1, 2):
        check(gpu, K.CUMSUM, [randn(3, 5, 7)], {"axis": axis})
    check(gpu, K.CUMSUM, [randint(-5, 5, 1200)], {"axis": 0})
    check(gpu, K.CUMSUM, [randn(1200)], {"axis": 0}, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- matmul

MATMULS = [((5, 7), (7, 3), False, False), ((70, 130), (130, 90), False, False), ((1, 1), (1, 1), False, False),
           ((2, 1, 33, 17), (3, 17, 65), False, False), ((17, 33), (65, 17), True, True),
           ((4, 9, 6), (9, 5), True, False), ((3, 6, 9), (3, 5, 9), False, True), ((7,), (7, 4), False, False),
           ((3, 7), (7,), False, False), ((0, 4), (4, 3), False, False), ((3, 0), (0, 2), False, False)]


@pytest.mark.parametrize("sa,sb,ta,tb", MATMULS, ids=str)
def test_matmul(gpu, sa, sb, ta, tb):
    check(gpu, K.MATMUL, [randn(*sa), randn(*sb)], {"transpose_a": ta, "transpose_b": tb}, rtol=1e-4, atol=1e-4)


def test_matmul_int(gpu):
    check(gpu, K.MATMUL, [randint(-4, 4, 6, 5), randint(-4, 4, 5, 3)], {})


# ---------------------------------------------------------------- movement

def test_movement(gpu):
    x = randn(3, 5, 7)
    check(gpu, K.RESHAPE, [x], {"shape": (7, 15)})
    check(gpu, K.RESHAPE, [x], {"shape": (105,)})
    for perm in ((2, 0, 1), (0, 2, 1), (0, 1, 2)):
        check(gpu, K.TRANSPOSE, [x], {"perm": perm})
    check(gpu, K.TRANSPOSE, [randint(0, 9, 4, 6)], {"perm": (1, 0)})
    check(gpu, K.EXPAND, [x[:, :1]], {"shape": (2, 3, 4, 7)})
    check(gpu, K.EXPAND, [np.float32(3.0)], {"shape": (5, 2)})
    check(gpu, K.EXPAND, [np.float32(3.0)], {"shape": ()})
    check(gpu, K.TRANSPOSE, [np.float32(3.0)], {"perm": ()})
    check(gpu, K.SLICE, [x], {"begin": (2, 1, 6), "end": (-1, 5, 0), "step": (-1, 2, -2)})
    check(gpu, K.SLICE, [x], {"begin": (0, 0, 0), "end": (3, 0, 7), "step": (1, 1, 1)})
    check(gpu, K.SLICE, [randn(2000)], {"begin": (5,), "end": (1995,), "step": (3,)})
    check(gpu, K.CONCAT, [x, x[:, :2], x[:, :1]], {"axis": 1})
    check(gpu, K.CONCAT, [randint(0, 5, 2, 3), randint(0, 5, 1, 3)], {"axis": 0})
    check(gpu, K.PAD, [x], {"pads": ((1, 0), (0, 2), (3, 1)), "value": 1.5})
    check(gpu, K.PAD, [randint(0, 5, 4, 3)], {"pads": ((0, 0), (2, 2)), "value": -1})


def test_reshape_aliases_buffer(gpu):
    a = gpu.from_array(randn(4, 6))
    b = wg.get_kernel(K.RESHAPE, "wgpu")(a, shape=(24,))
    assert b.storage is a.storage


# ---------------------------------------------------------------- indexing, windows, creation

def test_gather(gpu):
    x = randn(3, 5, 7)
    check(gpu, K.GATHER, [x, randint(0, 5, 3, 4, 7)], {"axis": 1})
    check(gpu, K.GATHER, [x, randint(0, 3, 2, 5, 7)], {"axis": 0})
    check(gpu, K.GATHER, [randn(1000, 3), randint(0, 1000, 1500, 2)], {"axis": 0})


def test_scatter_add(gpu):
    """Deterministic (no atomics): sums land in index order, as on cpu."""
    x = randn(3, 5, 7)
    check(gpu, K.SCATTER_ADD, [x, randint(0, 5, 3, 4, 7), randn(3, 6, 7)], {"axis": 1})
    check(gpu, K.SCATTER_ADD, [x, randint(0, 7, 3, 5, 20), randn(3, 5, 20)], {"axis": 2})
    check(gpu, K.SCATTER_ADD, [np.zeros((10, 4), np.float32), randint(0, 10, 300, 4), randn(300, 4)], {"axis": 0},
          rtol=1e-4, atol=1e-5)


WINDOWS = [((3, 3), (1, 1), (1, 1), (1, 1)), ((2, 3), (2, 1), (0, 2), (1, 2)), ((3, 2), (2, 3), (1, 0), (2, 1))]


@pytest.mark.parametrize("ks,st,pd,dl", WINDOWS, ids=str)
def test_im2col_col2im(gpu, ks, st, pd, dl):
    attrs = {"kernel_size": ks, "stride": st, "padding": pd, "dilation": dl}
    x = randn(2, 3, 7, 9)
    check(gpu, K.IM2COL, [x], attrs)
    cols = wg.get_kernel(K.IM2COL, "cpu")(x, **attrs)
    check(gpu, K.COL2IM, [randn(*cols.shape)], {"output_size": (7, 9), **attrs})


def test_creation(gpu):
    def make(name, **attrs):
        return gpu.to_numpy(wg.get_kernel(name, "wgpu")(**attrs))
    np.testing.assert_array_equal(make(K.FILL, shape=(2, 3), value=7, dtype=wg.int32), np.full((2, 3), 7))
    np.testing.assert_array_equal(make(K.FILL, shape=(5,), value=2.5, dtype=wg.float32), np.full(5, 2.5))
    np.testing.assert_array_equal(make(K.FILL, shape=(3,), value=True, dtype=wg.bool), np.ones(3, bool))
    np.testing.assert_array_equal(make(K.ARANGE, start=3, step=-2, size=5, dtype=wg.int32), [3, 1, -1, -3, -5])
    np.testing.assert_allclose(make(K.ARANGE, start=0.5, step=0.25, size=1001, dtype=wg.float32),
                               0.5 + 0.25 * np.arange(1001))


def test_random_values_upload_host_draws_in_the_dtype_asked(gpu):
    def make(values, shape, dtype):
        return gpu.to_numpy(wg.get_kernel(K.RANDOM_VALUES, "wgpu")(shape=shape, dtype=dtype, values=values))
    u = np.random.default_rng(0).random(600)                  # float64 draws, as a Generator's doubles
    np.testing.assert_array_equal(make(u, (20, 30), wg.float32), u.astype(np.float32).reshape(20, 30))
    k = np.array([-3, 0, 7, 2 ** 31 - 1])
    np.testing.assert_array_equal(make(k, (2, 2), wg.int64), k.reshape(2, 2))
    np.testing.assert_array_equal(make(np.array([True, False]), (2,), wg.float32), [1.0, 0.0])
    with pytest.raises(OverflowError, match="32 bits"):
        make(np.array([2 ** 40]), (1,), wg.int64)


def test_every_cpu_kernel_exists_on_wgpu(gpu):
    missing = sorted(set(wg.kernels_for_backend("cpu")) - set(wg.kernels_for_backend("wgpu")) - K.BACKWARD_KERNELS)
    assert not missing, f"kernels without a wgpu implementation: {missing}"


# ---------------------------------------------------------------- machinery

def test_pipeline_cache_one_pipeline_per_rank(gpu):
    def exp(shape):
        return wg.get_kernel(K.EXP, "wgpu")(gpu.from_array(randn(*shape)))
    exp((3, 5))
    before = len(gpu.pipelines)
    exp((7, 9))
    exp((1, 2))
    assert len(gpu.pipelines) == before
    def mm(m, k, n):
        return wg.get_kernel(K.MATMUL, "wgpu")(gpu.from_array(randn(m, k)), gpu.from_array(randn(k, n)))
    mm(3, 4, 5)
    before = len(gpu.pipelines)
    mm(70, 33, 9)
    assert len(gpu.pipelines) == before


def test_lazy_batching_no_submit_until_readback(gpu):
    x = wg.tensor(randn(64), backend="wgpu")
    gpu.flush()
    before = gpu.submits
    y = x
    for _ in range(100):
        y = (y * 0.5 + 1.0).tanh()
    assert gpu.submits == before, "ops submitted work before any readback"
    y.tolist()
    assert gpu.submits == before + 1


def test_no_leak_in_a_loop(gpu):
    w = wg.tensor(randn(16, 8), backend="wgpu", requires_grad=True)
    x = wg.tensor(randn(32, 16), backend="wgpu")

    def step():
        loss = ((x @ w).relu() ** 2).sum()
        loss.backward()
        with wg.no_grad():
            w.sub_(w.grad * 0.01)
        w.grad = None
        return loss.item()
    step()
    base = gpu.memory()
    for _ in range(20):
        step()
    after = gpu.memory()
    assert after["in_use"] == base["in_use"], (base, after)
    assert after["tensors"] == base["tensors"]
    assert after["pooled"] == base["pooled"], "the pool grew: buffers are not being reused"


def test_empty_pool_frees_pooled_buffers_and_the_backend_goes_on(gpu):
    x = wg.tensor(randn(64, 64), backend="wgpu")
    for _ in range(3):
        (x * 2 + 1).tolist()                 # temporaries go back to the pool
    assert gpu.memory()["pooled"] > 0
    in_use = gpu.memory()["in_use"]
    gpu.empty_pool()
    assert gpu.memory()["pooled"] == 0 and gpu.memory()["in_use"] == in_use
    assert np.allclose((x * 2).numpy(), x.numpy() * 2)      # live buffers untouched; the pool refills


def test_float64_refused(gpu):
    with pytest.raises(TypeError, match=r"float64.*'wgpu'.*float32"):
        wg.tensor([1.0, 2.0], dtype=wg.float64, backend="wgpu")
    with pytest.raises(TypeError, match="float32"):
        wg.tensor(np.zeros(3), backend="wgpu")
    with pytest.raises(TypeError, match="float32"):
        wg.tensor([1.0], backend="wgpu").to(wg.float64)


def test_validation_error_names_the_kernel(gpu):
    from webgrad.backends.gpu import GpuError
    from webgrad.backends.gpu.program import Program
    a = gpu.from_array(randn(8))
    build = lambda: Program("MyBrokenKernel", "elementwise", inputs=[("in0", "f32")], outputs=[("out", "f32")],
                            uniforms=[("n", "u32", 1), ("p", "f32", 2), ("q", "i32", 4)],
                            subs={"ALIASES": "alias T0 = f32; alias O = f32; alias F = f32;", "HELPERS": "",
                                  "ARGS": "i: u32, x0: T0", "CALL": "i, x0", "LOADS": "    let x0 = in0[i];",
                                  "EXPR": "x0", "STORE": ""})
    # the same buffer bound read-only and read-write in one dispatch: WebGPU rejects it at submit
    gpu.run(("test-alias",), build, [a], [a], [8, 0.0, 0.0, 0, 0, 0, 0], 1)
    with pytest.raises(GpuError, match="MyBrokenKernel"):
        gpu.flush()
    bad = lambda: Program("MyBadShader", "elementwise", inputs=[], outputs=[("out", "f32")], subs={
        "ALIASES": "", "HELPERS": "", "ARGS": "i: u32", "CALL": "i", "LOADS": "", "EXPR": "undefined_thing",
        "STORE": ""})
    with pytest.raises(GpuError, match="MyBadShader"):
        gpu.run(("test-bad",), bad, [], [a], [8], 1)
    assert wg.tensor([1.0, 2.0], backend="wgpu").tolist() == [1.0, 2.0]      # the backend still works


def test_readback_forms(gpu):
    t = wg.tensor([[1.5, -2.0], [0.0, 4.0]], backend="wgpu")
    assert t.tolist() == [[1.5, -2.0], [0.0, 4.0]]
    assert t.sum().item() == 3.5
    assert asyncio.run(t.read()) == [[1.5, -2.0], [0.0, 4.0]]
    np.testing.assert_array_equal(t.numpy(), [[1.5, -2.0], [0.0, 4.0]])
    assert wg.tensor([True, False], backend="wgpu").tolist() == [True, False]
    assert wg.tensor([[3, 4]], backend="wgpu").tolist() == [[3, 4]]
    assert wg.zeros(0, 3, backend="wgpu").tolist() == []
    assert wg.tensor(2.5, backend="wgpu").item() == 2.5
    assert t.to("cpu").tolist() == t.tolist() and t.to("cpu").to("wgpu").device == "wgpu"


def test_training_matches_cpu(gpu):
    """A small MLP trained with plain SGD follows the same loss curve on wgpu as on cpu."""
    x, y = randn(64, 8), randn(64, 1)
    w1, w2 = randn(8, 16) * 0.3, randn(16, 1) * 0.3
    curves = {}
    for be in ("cpu", "wgpu"):
        a = wg.tensor(w1, backend=be, requires_grad=True)
        b = wg.tensor(w2, backend=be, requires_grad=True)
        xs, ys = wg.tensor(x, backend=be), wg.tensor(y, backend=be)
        losses = []
        for _ in range(10):
            loss = (((xs @ a).tanh() @ b - ys) ** 2).mean()
            a.grad = b.grad = None
            loss.backward()
            with wg.no_grad():
                a.sub_(a.grad * 0.1)
                b.sub_(b.grad * 0.1)
            losses.append(loss.item())
        curves[be] = losses
    np.testing.assert_allclose(curves["wgpu"], curves["cpu"], rtol=1e-4)
    assert curves["wgpu"][-1] < curves["wgpu"][0]


def test_native_limits_match_browsers(gpu):
    info = gpu.info()
    assert info["limits"]["max-storage-buffers-per-shader-stage"] == 8
    assert "adapter" in info and isinstance(info["cpu"], bool)


def test_priority_follows_adapter_kind(gpu):
    from webgrad.backends.gpu import _native_priority
    from webgrad.registry import _backend_entries
    expected = -1 if gpu.device.is_cpu else 1
    assert _native_priority() == expected
    assert _backend_entries["cpu"].priority == 0


def test_buffers_released_within_a_batch_are_reused_safely(gpu):
    # outputs recycle buffers freed earlier in the same (unsubmitted) batch; uploads made
    # mid-batch must not land in one of those (a queue write runs before the whole batch)
    x0 = randn(1000)
    x = wg.tensor(x0, backend="wgpu")
    y, ref = x, x0.astype(np.float64)
    gpu.flush()
    before, held = gpu.submits, gpu.in_use + gpu.pooled
    for k in range(60):
        c = np.full(1000, k, np.float32)
        y = (y * 0.5).tanh() + wg.tensor(c, backend="wgpu")
        ref = np.tanh(ref * 0.5) + c
    assert gpu.submits == before
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-5)
    assert gpu.in_use + gpu.pooled - held <= 80 * 4096, "buffers were not recycled within the batch"


@pytest.mark.parametrize("constants_before, factor", [(0, 1.0001), (600, 1.00013)],
                         ids=["fresh", "after-many-constants"])
def test_chain_reuses_bind_groups_and_calls(gpu, constants_before, factor):
    """Also once more distinct Python numbers than the constant cache holds have been used (the oldest go)."""
    x = wg.ones(2, backend="wgpu")
    for k in range(constants_before):
        x * (k + 0.25)
    y = wg.tensor(randn(4096), backend="wgpu")
    y = (y * factor).tolist() and y      # warm: pipeline, call and bind groups exist
    n_groups, n_calls = len(gpu._bind_groups), len(gpu.calls)
    for _ in range(300):
        y = y * factor
    y.tolist()
    assert len(gpu._bind_groups) - n_groups <= 6 and len(gpu.calls) == n_calls


def _profiled_matmul():
    x = wg.tensor(randn(64, 64), backend="wgpu")
    (x @ x).relu().sum().item()                   # compile outside the profile
    with wg.profile() as prof:
        y = (x @ x).relu().sum()
        y.item()
    return prof


def test_profile_device_time(gpu):
    # GPU timestamps when the adapter has "timestamp-query" (lavapipe does), host time only otherwise
    prof = _profiled_matmul()
    stats, table = prof.stats, prof.table()
    assert stats["MatMul"].calls == 1 and stats["MatMul"].host_s > 0
    if gpu.device.timestamps:
        assert "device ms" in table.splitlines()[0]
        for name in ("MatMul", "Relu", "Sum"):
            assert 0 < stats[name].device_s < 60, (name, stats[name].device_s)
    else:
        assert "device ms" not in table and all(s.device_s is None for s in stats.values())
    assert gpu._timing is None                       # timing stopped with the profile


def test_profile_falls_back_to_host_time_without_timestamps(gpu, monkeypatch):
    monkeypatch.setattr(gpu.device, "timestamps", False)
    prof = _profiled_matmul()
    assert "device ms" not in prof.table().splitlines()[0]
    assert all(s.device_s is None for s in prof.stats.values())
    assert prof.stats["MatMul"].host_s > 0
    y = wg.tensor(randn(8), backend="wgpu")          # and the backend still runs normally after
    assert np.allclose((y * 2).numpy(), y.numpy() * 2)


def test_device_loss_surfaces_as_an_error_naming_the_kernel(gpu):
    """A lost device (destroyed on purpose, on a backend of its own) gives a GpuError that names
    the kernel and says the device was lost, instead of wgpu's bare validation error."""
    from webgrad.backends.gpu import GpuBackend, GpuError, register_kernels
    from webgrad.backends.gpu.native import NativeDevice
    wg.register_backend("wgpu_lost", lambda: GpuBackend(NativeDevice(), "wgpu_lost"), priority=-10)
    register_kernels("wgpu_lost")
    try:
        x = wg.tensor([1.0, 2.0], backend="wgpu_lost")
        assert (x + 1).tolist() == [2.0, 3.0]
        wg.backend("wgpu_lost").device.device.destroy()
        with pytest.raises(GpuError, match=r"wgpu_lost: kernel 'Fill' failed \(the GPU device was lost"):
            (x * 3).exp().tolist()          # the 3 is uploaded (a Fill): the first call that reaches the device
    finally:
        wg.remove_backend("wgpu_lost")
