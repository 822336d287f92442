"""Memory on the GPU backend, held flat and bounded: a training loop's host memory (RSS) and
``wg.memory()`` stay flat over thousands of steps (on every backend), the buffer pool keeps at
most ``pool_limit`` bytes and trims the least recently used size classes first, and sizes the
device cannot hold raise a ``GpuLimitError`` naming the kernel, the shape and the limit before
anything is allocated or recorded."""
import gc
import os
import resource
import sys

import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from webgrad import nn
from webgrad.backends.gpu import GpuLimitError, limits, runtime
from webgrad.backends.gpu.program import UNIFORM_WORDS, Program

MiB = 1 << 20


def rss() -> int:
    """This process's resident memory in bytes (its peak where /proc is missing: enough to see growth)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


# ---------------------------------------------------------------- training holds memory flat

def _training(device, batch=128):
    """One step of a small MLP's training (batch 128: the wgpu leak's MatMul shape) and its model."""
    wg.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3)).to(device)
    opt = wg.optim.SGD(model.parameters(), lr=0.05)
    x = wg.tensor(np.linspace(-1, 1, batch * 8, dtype=np.float32).reshape(batch, 8), device=device)
    y = wg.tensor(np.arange(batch, dtype=np.int32) % 3, device=device)

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


@pytest.mark.slow
def test_training_holds_host_and_backend_memory_flat(backend):
    """2,000 training steps, the loss read every 10: after a warm-up, host RSS grows by less
    than 16 MiB, and the backend's live tensors and bytes (on a GPU: in use and pooled) do not
    move. On lavapipe (Mesa 22.3) the last Linear's MatMul used to leak 0.4 MiB of host memory
    per step: 1.1 GiB over this test, which takes 10-15 s on lavapipe."""
    step = _training(backend)

    def ten_steps():
        for _ in range(9):
            step()
        return step().item()
    losses = [ten_steps() for _ in range(20)]            # warm-up: pipelines, pools, caches
    gc.collect()
    before, memory = rss(), wg.memory()[backend]
    losses += [ten_steps() for _ in range(180)]
    gc.collect()
    grown, after = rss() - before, wg.memory()[backend]
    assert losses[-1] < losses[0], "the model did not train"
    assert grown < 16 * MiB, f"host memory grew by {grown / MiB:.1f} MiB over 1,800 steps on {backend}"
    assert after == memory, f"{backend}: memory moved from {memory} to {after}"


def test_a_repeated_matmul_holds_host_memory_flat(gpu):
    """The leak's root cause, alone: lavapipe recompiled a shader whose branches read uniforms
    at constant offsets at every dispatch, and kept every compiled variant. The (128, 256) @
    (256, 10) MatMul was such a shader; each dispatch leaked 0.4 MiB (80 MiB over this test)."""
    a = wg.tensor(np.ones((128, 256), np.float32), device="wgpu")
    b = wg.tensor(np.ones((10, 256), np.float32), device="wgpu")
    for _ in range(10):
        (a @ b.T).sum().item()
    before = rss()
    for _ in range(200):
        (a @ b.T).sum().item()
    assert rss() - before < 8 * MiB, f"host memory grew by {(rss() - before) / MiB:.1f} MiB over 200 MatMuls"


# ---------------------------------------------------------------- the pool: a cap, trimmed by recency

@pytest.fixture
def pool_limit(gpu):
    """Sets the pool's cap for one test (trimming at once), and restores it after."""
    saved = gpu.pool_limit
    gpu.empty_pool()
    yield lambda nbytes: setattr(gpu, "pool_limit", nbytes)
    gpu.pool_limit = saved


def _held(gpu) -> int:
    """Bytes of every buffer the backend holds: its storage buffers and its pooled readback buffers."""
    return sum(b.size for b in gpu._owned) + sum(s * len(bufs) for s, bufs in gpu._staging.items())


def test_pooled_and_in_use_count_every_buffer_the_backend_holds(gpu):
    x = wg.tensor(np.arange(3000, dtype=np.float32), device="wgpu")
    x[wg.tensor([5, 7], device="wgpu")].tolist()        # index-check flags and readback buffers
    (x * 2).numpy()
    assert gpu._staging and gpu._flags is not None
    m = wg.memory()["wgpu"]
    assert m["in_use"] + m["pooled"] == _held(gpu) and m["pool_limit"] == gpu.pool_limit
    gpu.empty_pool()
    assert gpu.pooled == 0 and not any(gpu._staging.values()) and gpu.in_use == _held(gpu)
    assert (x * 3).tolist()[:3] == [0.0, 3.0, 6.0]


def test_releasing_more_than_the_cap_trims_the_pool(gpu, pool_limit):
    pool_limit(256 * 1024)
    big = [wg.zeros(64 * 1024, device="wgpu") for _ in range(6)]      # 256 KiB each
    wg.memory()
    del big
    assert 0 < gpu.pooled <= 256 * 1024
    assert gpu.in_use + gpu.pooled == _held(gpu), "a destroyed buffer is still owned"
    assert not any(b._internal is None for bufs in gpu._pool.values() for b in bufs)
    assert wg.zeros(64 * 1024, device="wgpu").sum().item() == 0.0     # the pool's buffer serves again


def test_the_least_recently_requested_size_classes_go_first(gpu, pool_limit, monkeypatch):
    pool_limit(1 << 20)
    old = wg.ones(32 * 1024, device="wgpu") * 1          # 128 KiB buffers, in one batch
    old.tolist()
    new = wg.ones(16 * 1024, device="wgpu") * 1          # 64 KiB buffers, in a later one
    new.tolist()
    del old, new
    kept = lambda pool: {s: len(bufs) for s, bufs in pool.items() if bufs}      # noqa: E731
    storage, staging = kept(gpu._pool), kept(gpu._staging)
    assert storage.get(128 * 1024) and storage.get(64 * 1024) and staging.get(128 * 1024)
    pool_limit(64 * 1024 * (storage[64 * 1024] + staging.get(64 * 1024, 0)))    # room for the newer class only
    assert kept(gpu._pool) == {64 * 1024: storage[64 * 1024]}
    assert 128 * 1024 not in kept(gpu._staging)
    made = []
    monkeypatch.setattr(gpu.device, "create_buffer", lambda size, make=gpu.device.create_buffer: made.append(size)
                        or make(size))
    assert (wg.ones(16 * 1024, device="wgpu") + 1).sum().item() == 2 * 16 * 1024
    assert 64 * 1024 not in made, "the kept size class was made anew"


def test_training_under_a_small_cap_gives_the_same_losses(gpu, pool_limit):
    want = [_training("wgpu")().item() for _ in range(1)]
    pool_limit(0)                                         # nothing is kept between readbacks
    step = _training("wgpu")
    got = [step().item() for _ in range(5)]
    assert got[0] == pytest.approx(want[0], rel=1e-6) and got[-1] < got[0]
    assert gpu.pooled == 0


def test_pool_limit_is_configurable(gpu, pool_limit):
    assert limits.pool_limit(128 * MiB, {}) == 1 << 30
    assert limits.pool_limit(1 << 30, {}) == 2 << 30
    assert limits.pool_limit(1 << 30, {"WEBGRAD_GPU_POOL_LIMIT": "64m"}) == 64 * MiB
    with pytest.raises(ValueError, match="WEBGRAD_GPU_POOL_LIMIT: expected a byte count .* got '12 GB'"):
        limits.pool_limit(0, {"WEBGRAD_GPU_POOL_LIMIT": "12 GB"})
    for bad in (-1, 1.5, "1G", True):
        with pytest.raises(ValueError, match="pool_limit must be a byte count"):
            gpu.pool_limit = bad
    pool_limit(12345)
    assert gpu.pool_limit == 12345 == wg.memory()["wgpu"]["pool_limit"]


# ---------------------------------------------------------------- sizes beyond the device

def _nothing_changes(gpu):
    """A check that no buffer was made or leased and no dispatch recorded since it was made."""
    state = (len(gpu._records), gpu.in_use, len(gpu._owned))
    return lambda: (len(gpu._records), gpu.in_use, len(gpu._owned)) == state


def test_a_tensor_larger_than_any_buffer_is_refused_at_once(gpu):
    one = wg.ones(1, device="wgpu")
    unchanged = _nothing_changes(gpu)
    limit = gpu._max_buffer_limit
    with pytest.raises(GpuLimitError, match=rf"wgpu: kernel 'Fill': an output of shape \(1000000000000,\) needs "
                                            rf"4000000000000 bytes .* \({limit}\)"):
        wg.zeros(10**12, device="wgpu")
    with pytest.raises(GpuLimitError, match=rf"kernel 'Expand' on float32 \(1,\): an output of shape \(65536, 65536\)"):
        one.expand(65536, 65536)                         # 2**32 elements: beyond a u32 uniform too
    assert unchanged()


def test_every_path_that_allocates_refuses_what_does_not_fit(gpu, monkeypatch):
    monkeypatch.setattr(gpu, "max_buffer", 4096)               # 1024 elements
    small = wg.ones(32, 32, device="wgpu")
    unchanged = _nothing_changes(gpu)
    cases = {
        "from numpy": (lambda: wg.tensor(np.zeros(1025, np.float32), device="wgpu"), r"wgpu: tensor data of shape \(1025,\)"),
        "from a list": (lambda: wg.tensor([0.0] * 1025, device="wgpu"), r"wgpu: tensor data of shape \(1025,\)"),
        "to": (lambda: wg.zeros(2, 1000).to("wgpu"), r"wgpu: tensor data of shape \(2, 1000\)"),
        "an op's output": (lambda: small.reshape(1024, 1) + small.reshape(1, 1024),
                           r"kernel 'Add' on float32 \(1024, 1\), float32 \(1, 1024\): an output of shape \(1024, 1024\)"),
        "matmul": (lambda: small.reshape(1024, 1) @ small.reshape(1, 1024), r"kernel 'MatMul'"),
        "creation": (lambda: wg.arange(2000, device="wgpu"), r"kernel 'Arange': an output of shape \(2000,\)"),
    }
    for name, (make, message) in cases.items():
        with pytest.raises(GpuLimitError, match=message + r".* more than the 4096 bytes one buffer may hold"):
            make()
        assert unchanged(), f"{name}: something was allocated or recorded before the error"
    assert (small * 2).sum().item() == 2048.0


def test_sizes_past_the_last_power_of_two_get_the_largest_buffer(gpu, monkeypatch):
    monkeypatch.setattr(gpu, "max_buffer", 3008)               # not a power of two: 752 elements
    x = wg.arange(750.0, device="wgpu")                        # 3000 bytes: the 4096 class would not fit
    assert x._data.storage.size == 3008
    assert (x * 2).sum().item() == 2 * sum(range(750))


def test_uniforms_and_dispatches_beyond_32_bits_are_refused(gpu):
    prog = Program("Demo", "copy", inputs=[("in0", "f32")], outputs=[("out", "f32")],
                   uniforms=[("n", "u32", 1), ("o", "i32", 1)], subs={"RANK": "1"})
    with pytest.raises(GpuLimitError, match=r"uniform o = 2147483648 is outside i32 \(-2147483648..2147483647\)"):
        prog.packed([1, 2**31])
    with pytest.raises(GpuLimitError, match=r"uniform n = -1 is outside u32"):
        prog.packed([-1, 0])
    with pytest.raises(GpuLimitError, match="4294967296 workgroups exceeds 65535 x 65535"):
        runtime.split_groups(2**32)
    with pytest.raises(ValueError, match=f"exceed the {UNIFORM_WORDS}-word slot"):
        Program("Wide", "copy", inputs=[], outputs=[("out", "f32")], uniforms=[("w", "u32", 64)], subs={"RANK": "1"})


def test_the_buffer_limit_follows_the_device():
    assert limits.buffer_limit({}) == (128 * MiB, "max-storage-buffer-binding-size")
    assert limits.buffer_limit({"max-storage-buffer-binding-size": 2**31 - 1, "max-buffer-size": 2**30 + 8}) == \
        (2**30, "max-buffer-size")
    big = limits.buffer_limit({"max-storage-buffer-binding-size": 2**40, "max-buffer-size": 2**40})
    assert big[0] <= (2**31 - 1) * 4 and "i32" in big[1]
