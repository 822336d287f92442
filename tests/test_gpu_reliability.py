"""The ``wgpu`` backend under hostile use: tensors freed by the cycle collector in any order,
and indices out of range, which must never read or write outside a buffer."""
import asyncio
import gc
import sys

import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from webgrad import nn
from webgrad.backends.gpu import runtime


class Cycle:
    """An object in a reference cycle: only the cycle collector frees what it holds."""

    def __init__(self, *held):
        self.held, self.me = held, self


def _train(device, steps, chaos):
    wg.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3)).to(device)
    opt = wg.optim.SGD(model.parameters(), lr=0.1)
    x = wg.tensor(np.linspace(-1, 1, 64 * 8, dtype=np.float32).reshape(64, 8), device=device)
    y = wg.tensor(np.arange(64, dtype=np.int32) % 3, device=device)
    losses = []
    for _ in range(steps):
        out = model(x)
        loss = F.cross_entropy(out, y)
        chaos(out, loss)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _chaos(out, loss):
    Cycle(out, loss, out * 2)                 # graph pieces and a fresh tensor, freed only by the collector
    try:
        raise ValueError(out.relu())           # a tensor held by a caught exception's traceback
    except ValueError as e:
        Cycle(e)


def test_tensors_freed_by_the_cycle_collector_keep_the_pool_sound(gpu, monkeypatch):
    """The collector finalises a cycle's objects in no set order: a buffer reachable only through
    a dying tensor must not be released behind the pool's back (wgpu-native aborted the process)."""
    monkeypatch.setattr(runtime, "BIND_GROUPS", 0)    # no cached bind group keeps a buffer reachable
    want = _train("cpu", 12, lambda out, loss: None)
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)                        # a collection at nearly every allocation
    try:
        got = _train("wgpu", 6, _chaos)
        calls = iter(range(10**9))
        sys.setprofile(lambda frame, event, arg: gc.collect(0 if next(calls) % 256 else 2) if event == "call" else None)
        try:                                         # and one at every call of a step (a full one now and then)
            got += _train("wgpu", 1, _chaos)[-1:]
        finally:
            sys.setprofile(None)
    finally:
        gc.set_threshold(*thresholds)
    got = got[:6] + _train("wgpu", 12, _chaos)[6:]   # ... and training goes on
    assert not any(b._internal is None for bufs in gpu._pool.values() for b in bufs), "a released buffer is pooled"
    np.testing.assert_allclose(got, want, rtol=1e-4)


def _junk(gpu):
    """Fill the pool with buffers holding 1234.5, which a stray read would return."""
    for n in (4, 16, 64, 256, 1024):
        (wg.full((n,), 1234.5, device="wgpu") * 1).tolist()


OUT_OF_RANGE = {
    "x[idx]": (lambda x: x[wg.tensor([1, 12], device="wgpu")], "Gather: index 12 is out of bounds for a dimension of size 10"),
    "index_select": (lambda x: x.index_select(0, wg.tensor([-1, 2], device="wgpu")), "Gather: index -1 is out of bounds"),
    "gather": (lambda x: x.gather(0, wg.tensor([3, 10, 40], device="wgpu")),
               "Gather: indices from 10 to 40 are out of bounds for a dimension of size 10"),
    "embedding": (lambda x: F.embedding(wg.tensor([0, 11], device="wgpu"), x.reshape(5, 2)),
                  "Gather: index 11 is out of bounds for a dimension of size 5"),
    "cross_entropy": (lambda x: F.cross_entropy(x.reshape(2, 5), wg.tensor([1, 5], device="wgpu"), reduction="none"),
                      "SoftmaxCrossEntropy: index 5 is out of bounds for a dimension of size 5"),
    "scatter_add": (lambda x: x.scatter_add(0, wg.tensor([0, 10], device="wgpu"), wg.ones(2, device="wgpu")),
                    "ScatterAdd: index 10 is out of bounds for a dimension of size 10"),
}


@pytest.mark.parametrize("case", OUT_OF_RANGE)
def test_out_of_range_indices_raise_at_the_next_readback(gpu, case):
    fn, message = OUT_OF_RANGE[case]
    x = wg.arange(10.0, device="wgpu")
    _junk(gpu)
    before = gpu.submits
    y = fn(x)
    assert gpu.submits == before, "the check read back per op"
    with pytest.raises(IndexError, match=message + ".* reported at the first readback"):
        y.tolist()
    data = y.numpy()                                 # reported once: the data reads back now
    assert not (data == 1234.5).any(), f"{case} returned stale pooled data: {data}"
    assert (x * 2).tolist() == [2.0 * i for i in range(10)]   # and the backend goes on


def test_out_of_range_writes_nothing_and_reads_zero(gpu):
    x = wg.arange(10.0, device="wgpu")
    _junk(gpu)
    y = x.gather(0, wg.tensor([2, 99, -5], device="wgpu"))
    s = wg.zeros(10, device="wgpu").scatter_add(0, wg.tensor([1, 10, -1], device="wgpu"), wg.ones(3, device="wgpu"))
    with pytest.raises(IndexError, match="Gather: indices from -5 to 99 .*ScatterAdd: indices from -1 to 10"):
        s.tolist()
    assert y.tolist() == [2.0, 0.0, 0.0] and s.tolist() == [0.0, 1.0] + [0.0] * 8


def test_out_of_range_raises_on_async_readback(gpu):
    y = wg.arange(4.0, device="wgpu").gather(0, wg.tensor([4], device="wgpu"))
    with pytest.raises(IndexError, match="Gather: index 4"):
        asyncio.run(y._backend.read_async(y._data))


def test_in_range_indices_pass_after_an_error(gpu):
    x = wg.arange(10.0, device="wgpu")
    with pytest.raises(IndexError):
        x[wg.tensor([10], device="wgpu")].tolist()
    assert x[wg.tensor([9, 0], device="wgpu")].tolist() == [9.0, 0.0]


def test_user_shader_output_starts_as_zeros(gpu):
    op = wg.wgsl_kernel("WritesHalf", """
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid);
    if (i < u.size_out / 2u) { out[i] = in0[i]; }
}""", output=lambda shapes, attrs: (shapes[0], "float32"))
    _junk(gpu)
    assert op(wg.ones(8, device="wgpu")).tolist() == [1.0] * 4 + [0.0] * 4


# ---------------------------------------------------------------- user shaders that cannot run

COPY = """
@compute @workgroup_size(SIZE)
fn ENTRY(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = flat_index(wid, nwg, lid);
    if (i < u.size_out) { out[i] = in0[i]; }
}"""

BAD_SHADERS = {
    "no main": (dict(ENTRY="mane", SIZE="WG"), {}, r"'NoEntry': the shader has no entry point `fn main`"),
    "main in a comment only": (dict(ENTRY="mane // fn main(", SIZE="WG"), {}, r"no entry point `fn main`"),
    "too many invocations": (dict(ENTRY="main", SIZE="512"), {},
                             r"line 2, column 10: @workgroup_size\(512\) is not a workgroup WebGPU runs"),
    "a zero size": (dict(ENTRY="main", SIZE="0"), {}, r"@workgroup_size\(0\) is not a workgroup WebGPU runs"),
    "z beyond 64": (dict(ENTRY="main", SIZE="1, 1, 65"), {"grid": lambda s, a: 1}, r"is not a workgroup"),
    "not the dispatch's size": (dict(ENTRY="main", SIZE="16, 16"), {},
                                r"@workgroup_size\(16, 16\) runs 256 invocations per workgroup, but the dispatch covers "
                                r"size_out with workgroups of workgroup_size=64"),
}


@pytest.mark.parametrize("case", BAD_SHADERS)
def test_a_shader_that_cannot_run_names_the_kernel_and_the_cause(gpu, case):
    subs, options, message = BAD_SHADERS[case]
    source = COPY
    for k, v in subs.items():
        source = source.replace(k, v)
    op = wg.wgsl_kernel("NoEntry", source, output=lambda shapes, attrs: (shapes[0], "float32"), **options)
    try:
        with pytest.raises(wg.WgslError, match=message) as e:
            op(wg.ones(8, device="wgpu"))
        assert e.value.kernel == "NoEntry"
        assert not any(k[:2] == ("wgsl", "NoEntry") for k in gpu.pipelines)
    finally:
        for b in ("wgpu", "webgpu"):
            wg.unregister_kernel("NoEntry", b)
    assert (wg.ones(3, device="wgpu") * 2).tolist() == [2.0] * 3


def test_a_two_dimensional_workgroup_runs_with_its_own_grid(gpu):
    source = COPY.replace("ENTRY", "main").replace("SIZE", "8, 8").replace("flat_index(wid, nwg, lid)",
                                                                            "wid.x * 64u + lid")
    op = wg.wgsl_kernel("Grid2D", source, output=lambda shapes, attrs: (shapes[0], "float32"),
                        grid=lambda shapes, attrs: -(-shapes[0][0] // 64))
    try:
        assert op(wg.arange(100.0, device="wgpu")).tolist() == [float(i) for i in range(100)]
    finally:
        for b in ("wgpu", "webgpu"):
            wg.unregister_kernel("Grid2D", b)


# ---------------------------------------------------------------- a lost device

AFTER_LOSS = {
    "a readback": lambda t, pending: t.tolist(),
    "a readback of pending work": lambda t, pending: pending.tolist(),
    "an async readback": lambda t, pending: asyncio.run(t._backend.read_async(t._data)),
    "an upload": lambda t, pending: wg.tensor([1.0, 2.0, 3.0], backend="wgpu_lost"),
    "a numpy upload": lambda t, pending: wg.tensor(np.ones(5, np.float32), backend="wgpu_lost"),
    "a kernel": lambda t, pending: t + t,
    "memory()": lambda t, pending: wg.memory(),
}


@pytest.mark.parametrize("case", AFTER_LOSS)
def test_the_first_error_after_device_loss_is_a_gpu_error(gpu, case):
    """Whatever first reaches a lost device -- a readback, an upload, a kernel, memory() -- raises
    a GpuError that says the device was lost, not wgpu's bare error."""
    from webgrad.backends.gpu import GpuBackend, GpuError, register_kernels
    from webgrad.backends.gpu.native import NativeDevice
    wg.register_backend("wgpu_lost", lambda: GpuBackend(NativeDevice(), "wgpu_lost"), priority=-10)
    register_kernels("wgpu_lost")
    try:
        t = wg.tensor([1.0, 2.0], backend="wgpu_lost")
        assert (t + 1).tolist() == [2.0, 3.0]
        pending = t * 2
        wg.backend("wgpu_lost").device.device.destroy()
        with pytest.raises(GpuError, match=r"^wgpu_lost: .* failed \(the GPU device was lost: restart the process"):
            AFTER_LOSS[case](t, pending)
    finally:
        wg.remove_backend("wgpu_lost")
