"""Half precision on the GPU backend: float16 where the device was granted WebGPU's shader-f16 feature
(2-byte f16 storage, every kernel computing in float32 and rounding once, as PyTorch on the CPU), and
a clear error where it was not; bfloat16 has no WGSL type and is refused. The op tables' float16
agreement with cpu is ``test_half_agreement`` of every op_tests module (tests/opinfo.py)."""
import asyncio

import numpy as np
import pytest
import torch

import webgrad as wg
from webgrad import nn
from webgrad.backends.gpu import GpuBackend

MAKERS = {
    "factory": lambda dt: wg.ones(2, dtype=dt, device="wgpu"),
    "upload": lambda dt: wg.ones(2, dtype=dt).to("wgpu"),
    "numpy": lambda dt: wg.tensor(np.ones(3, dtype=np.float16), device="wgpu") if dt is wg.float16 else
    wg.tensor(np.ones(3, dtype=np.float32), dtype=dt, device="wgpu"),
    "cast": lambda dt: wg.ones(2, device="wgpu").to(dt),
    "method": lambda dt: wg.ones(2, device="wgpu").half() if dt is wg.float16 else wg.ones(2, device="wgpu").bfloat16(),
    "module": lambda dt: nn.Linear(2, 2).to("wgpu").half() if dt is wg.float16 else
    nn.Linear(2, 2).to("wgpu").bfloat16(),
}


@pytest.fixture
def f16(gpu):
    """The ``wgpu`` backend, which on an adapter with shader-f16 (lavapipe has it) holds float16. (As the
    ``gpu`` fixture without an adapter: on one without the feature, these tests cannot run; what runs
    there instead is the refusal, the ``without_f16`` tests.)"""
    if "shader-f16" not in gpu.device.adapter_features:
        pytest.skip(f"{gpu!r} has no WebGPU shader-f16 feature, so no float16")
    assert wg.float16 in gpu.dtypes and "shader-f16" in gpu.device.features
    return gpu


@pytest.fixture
def without_f16(gpu, monkeypatch):
    """A ``wgpu`` backend whose device was made with shader-f16 withheld, standing in for the usual one."""
    from webgrad.backends.gpu.native import NativeDevice
    be = GpuBackend(NativeDevice(withhold={"shader-f16"}), "wgpu")
    monkeypatch.setitem(wg.registry._backend_instances, "wgpu", be)
    yield be
    be.empty_pool()


@pytest.mark.parametrize("how", sorted(MAKERS))
def test_bfloat16_on_the_gpu_is_refused_with_the_reason(gpu, how):
    with pytest.raises(TypeError) as info:
        MAKERS[how](wg.bfloat16)
    message = str(info.value)
    assert "dtype bfloat16 is not supported on the GPU backend 'wgpu'" in message and "WGSL has no bfloat16" in message
    assert "t.to(webgrad.float32)" in message and "t.to('cpu')" in message


@pytest.mark.parametrize("how", sorted(MAKERS))
def test_float16_on_the_gpu_every_way_in(f16, how):
    made = MAKERS[how](wg.float16)
    t = made.weight if how == "module" else made
    assert t.dtype is wg.float16 and t.device == "wgpu"
    assert t.to("cpu").dtype is wg.float16 and t.detach().numpy().dtype == np.float16


@pytest.mark.parametrize("how", sorted(MAKERS))
def test_without_shader_f16_float16_is_refused_naming_backend_dtype_and_remedy(without_f16, how):
    assert wg.float16 not in without_f16.dtypes and "shader-f16" not in without_f16.device.features
    with pytest.raises(TypeError) as info:
        MAKERS[how](wg.float16)
    message = str(info.value)
    assert "dtype float16 is not supported on the GPU backend 'wgpu'" in message
    offered = "shader-f16" in without_f16.device.adapter_features
    assert ("offers WebGPU's shader-f16 feature, but this device was created without it" if offered else
            "needs WebGPU's shader-f16 feature, which") in message
    assert "t.to(webgrad.float32)" in message and "t.to('cpu')" in message
    assert wg.ones(2, device="wgpu").tolist() == [1.0, 1.0]   # float32 still works there


def test_without_shader_f16_on_the_adapter_the_reason_says_so(without_f16, monkeypatch):
    monkeypatch.setattr(without_f16.device, "adapter_features", frozenset())
    with pytest.raises(TypeError, match="float16 needs WebGPU's shader-f16 feature, which .* does not offer"):
        wg.zeros(3, dtype=wg.half, device="wgpu")


def test_without_shader_f16_autocast_warns_and_stays_off(without_f16):
    with pytest.warns(UserWarning, match="float16 is not supported. Disabling autocast"):
        with wg.autocast("wgpu", dtype=wg.float16):
            assert (wg.ones(2, 2, device="wgpu") @ wg.ones(2, 2, device="wgpu")).dtype is wg.float32


# ---------------------------------------------------------------- host transfer: 2 bytes an element

EDGES = [0.0, -0.0, 1.0, 65504.0, 65519.0, 65520.0, 1e6, -1e6, 6.1035156e-05, 6.0e-05, 5.96e-08, 2.9e-08, 3.0e-08,
         1.00048828125, 1.00146484375, 0.1, -3.3333, float("inf"), float("-inf"), float("nan")]


def _half(values):
    """numpy's float16 of ``values`` (overflowing to infinity, as intended here)."""
    with np.errstate(over="ignore"):
        return np.float32(values).astype(np.float16)


@pytest.mark.parametrize("n", [1, 3, 5, 20, 1001])   # odd counts: buffers and copies are whole 4-byte words
def test_float16_upload_and_readback_round_as_torch(f16, n):
    values = (EDGES * (n // len(EDGES) + 1))[:n]
    want = torch.tensor(values, dtype=torch.float16).numpy()
    for t in (wg.tensor(values, dtype=wg.float16, device="wgpu"),                    # Python floats
              wg.tensor(np.float32(values), device="wgpu").half(),                    # rounded by the GPU
              wg.tensor(_half(values), device="wgpu")):                               # numpy halves
        got = t.numpy()
        assert got.dtype == np.float16 and got.shape == (n,)
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))     # bit for bit, -0.0 and NaN too
        np.testing.assert_array_equal(np.float16(t.tolist()).view(np.uint16), want.view(np.uint16))
        np.testing.assert_array_equal(np.float16(asyncio.run(t.read())).view(np.uint16), want.view(np.uint16))


def test_float32_to_float16_on_the_gpu_rounds_to_nearest_even_bit_for_bit(f16):
    halves = np.arange(0, 0x7C01, dtype=np.uint16).view(np.float16).astype(np.float32)   # every finite half and inf
    mids = (halves[:-1] + np.diff(halves) / 2).astype(np.float32)                          # ties (exact in float32)
    near = np.nextafter(mids, np.float32(np.inf))
    x = np.concatenate([halves, mids, near, -mids, np.float32([7e4, 1e-9, -1e-9])])
    got = wg.tensor(x, device="wgpu").half().numpy()
    np.testing.assert_array_equal(got.view(np.uint16), torch.tensor(x).half().numpy().view(np.uint16))
    every = wg.tensor(halves.astype(np.float16), device="wgpu")   # read into float32 exactly, subnormals too
    np.testing.assert_array_equal(every.float().numpy(), halves)
    np.testing.assert_array_equal((-every * 1).numpy().view(np.uint16), (-halves).astype(np.float16).view(np.uint16))


def test_float16_takes_half_the_bytes(f16):
    t = wg.zeros(1000, dtype=wg.float16, device="wgpu")
    assert t._data.nbytes == 2000 and t.element_size() == 2 and t.nbytes == 2000


# ---------------------------------------------------------------- arithmetic and promotion as PyTorch's

def test_elementwise_in_float32_rounded_once_equals_torch_bit_for_bit(f16):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(258).astype(np.float16) for _ in range(2))
    ta, tb = torch.tensor(a), torch.tensor(b)
    wa, wb = wg.tensor(a, device="wgpu"), wg.tensor(b, device="wgpu")
    for name, f in {"add": lambda lib, x, y: x + y, "mul": lambda lib, x, y: x * y, "div": lambda lib, x, y: x / y,
                    "sub_strided": lambda lib, x, y: x[::2] - y[1::2],
                    "where": lambda lib, x, y: lib.where(x > y, x, y),
                    "neg_abs": lambda lib, x, y: -abs(x), "relu": lambda lib, x, y: x.relu(),
                    "to_int": lambda lib, x, y: (x * 100).to(lib.int32)}.items():
        got, want = f(wg, wa, wb), f(torch, ta, tb)
        assert got.dtype.name == str(want.dtype)[6:], name
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()), err_msg=name)


def test_reductions_accumulate_in_float32_as_torch(f16):
    x = np.random.default_rng(1).standard_normal((1500, 3)).astype(np.float16)   # float16 sums would drift
    w, t = wg.tensor(x, device="wgpu"), torch.tensor(x)
    # PyTorch's CPU prod of half multiplies in half, step by step (its CUDA prod in float32, as here)
    for name, f in {"sum": lambda v: v.sum(0), "mean": lambda v: v.mean(0), "cumsum": lambda v: v.cumsum(0),
                    "softmax": lambda v: v.softmax(0), "prod": lambda v: (v[:40] * 0 + 1.01).prod(0),
                    "log_softmax": lambda v: v.log_softmax(1), "var": lambda v: v.var(0)}.items():
        got = f(w)
        want = f(t) if name != "prod" else (t[:40] * 0 + 1.01).float().prod(0).half()
        assert got.dtype is wg.float16, name
        np.testing.assert_allclose(got.numpy().astype(np.float64), want.numpy().astype(np.float64),
                                   rtol=2 ** -10, atol=1e-3, err_msg=name)   # one half rounding apart at most
    m = np.random.default_rng(2).standard_normal((64, 300)).astype(np.float16)
    np.testing.assert_allclose(((wg.tensor(m, device="wgpu") @ wg.tensor(m.T.copy(), device="wgpu")).numpy()),
                               (torch.tensor(m) @ torch.tensor(m.T.copy())).numpy(), rtol=2 ** -10, atol=1e-3)


@pytest.mark.parametrize("other", ["float32", "int64", "bool", "python float", "python int", "0-d float32"])
def test_type_promotion_with_float16_as_torch(f16, other):
    def make(lib, device):
        x = lib.tensor([1.5, -2.25], device=device).half()
        others = {"float32": [0.1, 0.2], "int64": [2, 3], "bool": [True, False], "python float": 0.5,
                  "python int": 3, "0-d float32": 0.25}
        o = others[other]
        return x * (o if other.startswith("python") else lib.tensor(o, device=device))
    got, want = make(wg, "wgpu"), make(torch, "cpu")
    assert got.dtype.name == str(want.dtype)[6:]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---------------------------------------------------------------- training

def _mlp_step(lib, device, params, x, y, steps=3):
    """A small MLP (Linear, GELU, LayerNorm, Linear, cross-entropy) trained in float16 by SGD."""
    model = lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.GELU(), lib.nn.LayerNorm(16), lib.nn.Linear(16, 3))
    with lib.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(lib.tensor(v))
    model = model.to(device).half()
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    xs, ys = lib.tensor(x, device=device).half(), lib.tensor(y, device=device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().to("cpu").float().numpy() for p in model.parameters()], model[0].weight.dtype


def test_mlp_trains_in_float16_on_the_gpu_as_on_cpu_and_in_torch(f16):
    rng = np.random.default_rng(3)
    shapes = [(16, 6), (16,), (16,), (16,), (3, 16), (3,)]
    params = [rng.standard_normal(s).astype(np.float32) * 0.4 for s in shapes]
    x, y = rng.standard_normal((8, 6)).astype(np.float32), rng.integers(0, 3, 8)
    gl, gp, dt = _mlp_step(wg, "wgpu", params, x, y)
    cl, cp, _ = _mlp_step(wg, "cpu", params, x, y)
    tl, tp, _ = _mlp_step(torch, "cpu", params, x, y)
    assert dt is wg.float16 and gl[-1] < gl[0]
    # a few units of half rounding (2**-10) apart, as the op tables' float16 agreement allows
    np.testing.assert_allclose(gl, cl, rtol=4e-3)
    np.testing.assert_allclose(gl, tl, rtol=4e-3)
    for g, c, t in zip(gp, cp, tp):
        np.testing.assert_allclose(g, c, rtol=4e-3, atol=2e-3)
        np.testing.assert_allclose(g, t, rtol=4e-3, atol=2e-3)


def test_compiled_float16_step_on_the_gpu_equals_eager(f16):
    w = wg.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), device="wgpu").half().requires_grad_()
    x = wg.tensor(np.linspace(0, 2, 8, dtype=np.float32).reshape(2, 4), device="wgpu").half()

    def step():
        loss = (x @ w.T).tanh().sum()
        g, = wg.autograd.grad(loss, [w])
        return loss, g
    eager, compiled = step(), wg.compile(step)()
    assert compiled[1].dtype is wg.float16
    for a, b in zip(eager, compiled):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_custom_wgsl_elementwise_in_float16(f16):
    op = wg.wgsl_elementwise("HalfSquarePlus", "x * x + c", attrs=("c",), dtype="float16")
    got = op(wg.tensor([1.5, 300.0, -2.0], device="wgpu").half(), c=0.1)
    assert got.dtype is wg.float16
    np.testing.assert_array_equal(got.numpy(), _half(np.float32([1.5, 300.0, -2.0]) ** 2 + np.float32(0.1)))


def test_float16_stays_usable_on_cpu_beside_the_gpu(gpu):
    x = wg.tensor([1.0, 2.0], dtype=wg.float16)
    assert (x * 3).tolist() == [3.0, 6.0] and (x * 3).dtype is wg.float16
    assert x.float().to("wgpu").tolist() == [1.0, 2.0]
