"""PyTorch's device surface: wg.device, devices in every device= and to(), wg.cuda (no CUDA here),
wg.accelerator (the GPU backend webgrad would choose), autocast and GradScaler, the torch.backends
switches, set_default_device/dtype, inference_mode and compile's name. Compared with torch where it applies."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg
from webgrad import nn


@pytest.mark.parametrize("text", ["cpu", "cpu:0", "cpu:3"])
def test_device_parses_prints_and_compares_as_torch(text):
    w, t = wg.device(text), torch.device(text)
    assert (repr(w), str(w), w.type, w.index) == (repr(t), str(t), t.type, t.index)
    assert w == wg.device(text) and hash(w) == hash(wg.device(text)) and w == str(t)
    assert wg.device(w) == w and wg.device("cpu", 1) == wg.device("cpu:1")


def test_bad_device_strings_raise_runtime_error_as_torch():
    for text in ("cpu:x", "foo", "cpu:-1"):
        with pytest.raises(RuntimeError):
            torch.device(text)
        with pytest.raises(RuntimeError):
            wg.device(text)


def test_devices_go_wherever_a_device_goes(backend):
    d = wg.device(backend)
    x = wg.ones(2, device=d)
    assert x.device == d and x.device == backend and str(x.device) == backend and x.is_cpu == (backend == "cpu")
    assert wg.tensor([1.0], device=f"{backend}:0").device == backend
    y = wg.ones(2).to(d, wg.float32)
    assert y.device == backend and y.to(device=d, dtype=wg.int64, non_blocking=True).dtype is wg.int64
    m = nn.Linear(2, 2).to(d)
    assert m.weight.device == d and m(x).device == d
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        x.to(d, foo=1)
    assert not x.is_cuda and x.get_device() == (-1 if backend == "cpu" else 0)


def test_cuda_is_absent_as_on_a_torch_build_without_it():
    assert wg.cuda.is_available() is False and wg.cuda.device_count() == 0 and not wg.cuda.is_bf16_supported()
    wg.cuda.manual_seed_all(0), wg.cuda.manual_seed(0), wg.cuda.empty_cache()   # silently nothing, as torch
    assert wg.cuda.memory_allocated() == 0
    with pytest.raises(RuntimeError, match="no CUDA backend.*wgpu"):
        wg.cuda.synchronize()
    for make in (lambda: wg.zeros(1, device="cuda"), lambda: wg.ones(1).cuda(), lambda: nn.Linear(1, 1).cuda(),
                 lambda: wg.ones(1).to(wg.device("cuda:0"))):
        with pytest.raises(RuntimeError, match="webgrad has no 'cuda' backend.*wgpu"):
            make()
    assert wg.device("cuda:1").index == 1   # naming it is fine, as in torch


def test_accelerator_is_the_gpu_backend_webgrad_would_choose():
    default = wg.get_default_device()
    acc = wg.accelerator.current_accelerator()
    if "wgpu" not in wg.backends():
        assert acc is None
        return
    is_real_gpu = wg.registry.backend_priority("wgpu") > wg.registry.backend_priority("cpu")
    assert (acc == "wgpu") == is_real_gpu and wg.accelerator.device_count() == int(is_real_gpu)
    try:
        wg.set_default_device("wgpu")   # chosen by hand, it is the accelerator even on a software adapter
        assert wg.accelerator.current_accelerator() == "wgpu" and wg.accelerator.is_available()
        assert wg.ones(1).device == "wgpu" and wg.get_default_device() == wg.device("wgpu")
        wg.accelerator.synchronize()
        assert wg.accelerator.current_device_index() == 0
    finally:
        wg.set_default_device(default)


def test_torch_backends_switches_are_accepted():
    import webgrad.backends.cudnn as cudnn
    cudnn.benchmark, cudnn.deterministic = True, True
    wg.backends.cuda.matmul.allow_tf32 = True
    wg.backends.cudnn.allow_tf32 = True
    assert wg.backends.cudnn.benchmark and wg.backends.cuda.matmul.allow_tf32
    assert not wg.backends.mps.is_available() and not wg.backends.cudnn.is_available()
    assert "cpu" in wg.backends()   # webgrad.backends keeps its own role
    wg.set_float32_matmul_precision("high")
    assert wg.get_float32_matmul_precision() == "high"
    with pytest.warns(UserWarning, match="no effect"):
        wg.set_float32_matmul_precision("fastest")
    wg.set_num_threads(2), wg.use_deterministic_algorithms(True)
    assert wg.get_num_threads() == 2 and wg.are_deterministic_algorithms_enabled()
    wg.use_deterministic_algorithms(False)


def test_set_default_dtype_as_torch():
    try:
        wg.set_default_dtype(wg.float64)
        assert wg.tensor([1.5]).dtype is wg.float64 and wg.zeros(2).dtype is wg.float64
        assert wg.get_default_dtype() is wg.float64 and (wg.tensor([1]) * 1.5).dtype is wg.float64
    finally:
        wg.set_default_dtype(wg.float32)
    with pytest.raises(TypeError, match="only floating-point types"):
        wg.set_default_dtype(wg.int64)


def test_inference_mode_context_and_decorators():
    x = wg.ones(2, requires_grad=True)
    with wg.inference_mode():
        assert not (x * 2).requires_grad and wg.is_inference_mode_enabled()
    with wg.inference_mode(False):
        assert (x * 2).requires_grad and not wg.is_inference_mode_enabled()

    @wg.inference_mode
    def bare():
        return x * 2

    @wg.inference_mode()
    def called():
        return x * 2
    assert not bare().requires_grad and not called().requires_grad and (x * 2).requires_grad


def test_compile_with_disable_returns_the_model_or_function_unchanged():
    m = nn.Linear(2, 2)
    assert wg.compile(m, disable=True) is m and wg.compile(fullgraph=True, backend="eager")(len) is len
    with pytest.raises(RuntimeError, match="mode"):
        wg.compile(m, mode="fastest")


# ---------------------------------------------------------------- autocast and GradScaler

def test_autocast_on_cpu_runs_products_in_bfloat16_and_losses_in_float32_as_torch():
    rng = np.random.default_rng(0)
    a, b, y = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8, 3), (4, 3)))
    results = {}
    for lib in (torch, wg):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = lib.tensor(a) @ lib.tensor(b)
            loss = lib.nn.functional.mse_loss(out, lib.tensor(y))
        results[lib] = (out, loss)
    (to, tl), (wo, wl) = results[torch], results[wg]
    assert str(to.dtype)[6:] == wo.dtype.name == "bfloat16" and str(tl.dtype)[6:] == wl.dtype.name == "float32"
    np.testing.assert_allclose(wo.float().numpy(), to.float().numpy(), rtol=1e-2, atol=1e-2)
    assert (wg.ones(2, 2) @ wg.ones(2, 2)).dtype is wg.float32   # off again after the block


# the ops on PyTorch's CPU autocast lower-precision list (run in the autocast dtype), ops on neither list
# (their input's dtype) and the losses (float32)
AUTOCAST_OPS = {
    "linear": lambda L, x, w: L.nn.functional.linear(x, w, w[0]),
    "conv1d": lambda L, x, w: L.nn.functional.conv1d(x[None], w[:, :, None], w[0]),
    "conv2d": lambda L, x, w: L.nn.functional.conv2d(x[None, None], w[None, None, :2, :2]),
    "conv_transpose1d": lambda L, x, w: L.nn.functional.conv_transpose1d(x[None], w[:, :, None]),
    "addmm": lambda L, x, w: L.addmm(w[0], x, w.T), "baddbmm": lambda L, x, w: L.baddbmm(w[0], x[None], w.T[None]),
    "prelu": lambda L, x, w: L.nn.functional.prelu(x, w[0, :1]),
    "sdpa": lambda L, x, w: L.nn.functional.scaled_dot_product_attention(x[None], x[None], x[None]),
    "matmul": lambda L, x, w: x @ w.T, "relu-of-linear": lambda L, x, w: L.relu(L.nn.functional.linear(x, w)),
    "add": lambda L, x, w: x + w[0], "exp": lambda L, x, w: x.exp(),
    "cross_entropy": lambda L, x, w: L.nn.functional.cross_entropy(L.nn.functional.linear(x, w), L.tensor([0, 1, 2, 3])),
    "layer_norm-module": lambda L, x, w: L.nn.functional.layer_norm(L.nn.functional.linear(x, w), (4,), w[0], w[1]),
}


@pytest.mark.parametrize("name", list(AUTOCAST_OPS))
def test_autocast_on_cpu_casts_the_ops_pytorch_casts(name):
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((4, 4)).astype(np.float32), rng.standard_normal((4, 4)).astype(np.float32)
    results = {}
    for lib in (torch, wg):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            results[lib] = AUTOCAST_OPS[name](lib, lib.tensor(x), lib.tensor(w, requires_grad=True))
    want, got = results[torch], results[wg]
    assert got.dtype.name == str(want.dtype)[6:], (got.dtype, want.dtype)
    np.testing.assert_allclose(got.float().detach().numpy(), want.float().detach().numpy(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("op", ["layer_norm", "group_norm", "batch_norm", "rms_norm"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_input_with_float32_parameters_normalises_as_pytorch(op, dtype):
    """PyTorch's CPU mixed dtypes: a half input and float32 weights give the input's dtype, computed in float32."""
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8,), (8,)))
    grads = {}
    for lib in (torch, wg):
        xt = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        wt, bt = lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)
        F = lib.nn.functional
        args = {"layer_norm": ((8,), wt, bt), "group_norm": (2, wt, bt), "rms_norm": ((8,), wt),
                "batch_norm": (lib.zeros(8), lib.ones(8), wt, bt, True)}[op]
        y = getattr(F, op)(xt, *args)
        (y.float() * lib.arange(32.0).reshape(4, 8)).sum().backward()
        grads[lib] = (y, xt.grad, wt.grad)
    for t, g in zip(grads[torch], grads[wg]):
        assert g.dtype.name == str(t.dtype)[6:]
        np.testing.assert_allclose(g.float().detach().numpy(), t.float().detach().numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", ["float16"])   # on the backends that hold it (conftest)
def test_autocast_in_float16_runs_products_in_half_and_losses_in_float32_as_torch_on_cpu(backend, dtype):
    rng = np.random.default_rng(1)
    a, b, y = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8, 3), (4, 3)))
    results = {}
    for lib, device in ((torch, "cpu"), (wg, backend)):
        with lib.autocast(device, dtype=lib.float16):
            out = lib.tensor(a, device=device) @ lib.tensor(b, device=device)
            loss = lib.nn.functional.mse_loss(out, lib.tensor(y, device=device))
        results[lib] = (out, loss)
    (to, tl), (wo, wl) = results[torch], results[wg]
    assert str(to.dtype)[6:] == wo.dtype.name == "float16" and str(tl.dtype)[6:] == wl.dtype.name == "float32"
    np.testing.assert_array_equal(wo.numpy(), to.numpy())   # float32 products rounded once: the same halves
    np.testing.assert_allclose(wl.item(), tl.item(), rtol=1e-6)


def test_autocast_without_the_device_or_the_dtype_warns_and_stays_off(backend):
    with pytest.warns(UserWarning, match="Disabling"):
        with wg.autocast("cuda"):
            assert (wg.ones(2, 2) @ wg.ones(2, 2)).dtype is wg.float32
    if backend != "cpu":   # no GPU holds bfloat16 (WGSL has no such type)
        with pytest.warns(UserWarning, match="not supported. Disabling autocast"):
            with wg.autocast(backend, dtype=wg.bfloat16):
                assert (wg.ones(2, 2) @ wg.ones(2, 2)).dtype is wg.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with wg.autocast("cpu", enabled=False):
            assert (wg.ones(2, 2) @ wg.ones(2, 2)).dtype is wg.float32


def test_cuda_grad_scaler_disables_itself_and_passes_through():
    for make in (lambda lib: lib.cuda.amp.GradScaler(), lambda lib: lib.amp.GradScaler("cuda")):
        with pytest.warns(UserWarning, match="Disabling"):
            scaler = make(wg)
        p = nn.Parameter(wg.ones(2))
        opt = wg.optim.SGD([p], lr=0.5)
        loss = (p * 3).sum()
        assert scaler.scale(loss) is loss and not scaler.is_enabled() and scaler.get_scale() == 1.0
        scaler.scale(loss).backward()
        scaler.step(opt), scaler.update()
        assert p.tolist() == [-0.5, -0.5] and scaler.state_dict() == {}


def _scaled_training(lib, grads):
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    opt = lib.optim.SGD([p], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    scales = []
    for g in grads:
        opt.zero_grad()
        scaler.scale((p * lib.tensor(g)).sum()).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return p.detach().tolist(), scales, scaler.state_dict()


def test_grad_scaler_on_cpu_matches_torch_including_skipped_steps():
    grads = [[1.0, 2.0], [0.5, float("inf")], [1.0, 1.0], [2.0, -1.0], [float("nan"), 0.0], [1.0, 3.0]]
    (tp, ts, tsd), (wp, ws, wsd) = _scaled_training(torch, grads), _scaled_training(wg, grads)
    np.testing.assert_allclose(wp, tp, rtol=1e-6)
    assert ws == ts and wsd == {k: (v.item() if hasattr(v, "item") else v) for k, v in tsd.items()}
