"""Reliability on the backend under test (``webgpu`` in the page): tensors freed by the cycle
collector in the middle of training, and indices out of range (no numpy)."""
import gc

import pytest

import webgrad as wg
import webgrad.nn.functional as F
from webgrad import nn
from webgrad.backends.gpu import runtime


class Cycle:
    def __init__(self, *held):
        self.held, self.me = held, self


def _train(steps, chaos):
    wg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = wg.optim.SGD(model.parameters(), lr=0.1)
    x = wg.tensor([[(i * 7 + j) % 5 / 5.0 - 0.4 for j in range(4)] for i in range(16)])
    y = wg.tensor([i % 3 for i in range(16)])
    losses = []
    for _ in range(steps):
        out = model(x)
        loss = F.cross_entropy(out, y)
        if chaos:
            Cycle(out, loss, out * 2)
            try:
                raise ValueError(out.relu())
            except ValueError as e:
                Cycle(e)
            gc.collect()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_training_goes_on_while_the_collector_frees_cycles(monkeypatch):
    monkeypatch.setattr(runtime, "BIND_GROUPS", 0)   # no cached bind group keeps a buffer reachable
    want = _train(6, chaos=False)
    got = _train(6, chaos=True)
    assert all(abs(g - w) <= 1e-5 * abs(w) for g, w in zip(got, want)), (got, want)


def test_out_of_range_index_raises_and_the_backend_goes_on():
    x = wg.arange(10.0)
    with pytest.raises(IndexError, match="Gather: index 12"):
        x[wg.tensor([1, 12])].tolist()          # at the op on cpu, at the readback on a GPU backend
    with pytest.raises(IndexError, match="SoftmaxCrossEntropy"):
        F.cross_entropy(x.reshape(2, 5), wg.tensor([1, 5])).item()
    assert x[wg.tensor([9, 0])].tolist() == [9.0, 0.0]


def test_sizes_beyond_the_device_are_refused_before_anything_runs(slice_backend):
    be = wg.backend(slice_backend)
    if not hasattr(be, "max_buffer"):
        pytest.skip(f"GPU buffer limits: backend {slice_backend!r} has no GPU buffers")
    from webgrad.backends.gpu import GpuLimitError
    in_use = be.in_use
    with pytest.raises(GpuLimitError, match=rf"kernel 'Fill': an output of shape \(1000000000000,\) .* "
                                            rf"\({be._max_buffer_limit}\)"):
        wg.zeros(10**12)
    assert be.in_use == in_use and 0 < be.max_buffer and 0 <= be.pooled <= be.pool_limit
    assert wg.memory()[slice_backend]["pool_limit"] == be.pool_limit
    assert (wg.ones(3) * 2).tolist() == [2.0, 2.0, 2.0]


def test_a_shader_without_main_names_the_kernel(slice_backend):
    if slice_backend not in ("wgpu", "webgpu"):
        pytest.skip(f"WGSL kernels: backend {slice_backend!r} runs none")
    op = wg.wgsl_kernel("NoMainHere", "@compute @workgroup_size(WG) fn start() {}",
                        output=lambda shapes, attrs: (shapes[0], "float32"))
    try:
        with pytest.raises(wg.WgslError, match="'NoMainHere': the shader has no entry point `fn main`"):
            op(wg.ones(2))
    finally:
        for b in ("wgpu", "webgpu"):
            wg.unregister_kernel("NoMainHere", b)
