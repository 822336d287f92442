"""Fusion in compiled plans: elementwise chains become one kernel (generated WGSL on the GPU backends,
ufuncs into shared arrays on cpu), with eager's values (bit for bit on cpu, float32 rounding on the
GPU); intermediates something else needs are not fused away; fused pipelines are cached by structure."""
import pytest

import webgrad as wg
from webgrad.backends.gpu.fused import fused_source


def _flat(v):
    return [x for e in v for x in _flat(e)] if isinstance(v, list) else [v]


def _same(a, b, backend):
    if backend == "cpu":
        assert a == b
    else:
        assert _flat(a) == pytest.approx(_flat(b), rel=1e-5, abs=1e-6)


def _chain(x, bias):
    return ((x * 1.5 + bias).tanh() - 0.25).exp() / (x.abs() + 1)


def test_an_elementwise_chain_runs_as_one_fused_kernel(backend):
    f = wg.compile(_chain)
    for i in range(3):
        x, bias = wg.randn(3, 4, generator=wg.Generator().manual_seed(i)), wg.tensor([0.5, -1.0, 2.0, 0.0])
        _same(f(x, bias).tolist(), _chain(x, bias).tolist(), backend)       # bias broadcasts inside the chain
    plan = f.last.plan
    assert f.replays == 2 and len(plan.steps) == 1 and plan.steps[0].name.startswith("Fused[")
    assert "Fused[" in f.explain()


def test_intermediates_that_are_returned_are_not_fused_away(backend):
    f = wg.compile(lambda x: (lambda h: (h, (h * 2).exp()))(x.sin() + 1))
    x = wg.tensor([0.1, 0.2, 0.3])
    for _ in range(2):
        h, y = f(x)
    _same(h.tolist(), (x.sin() + 1).tolist(), backend)
    _same(y.tolist(), ((x.sin() + 1) * 2).exp().tolist(), backend)
    assert len(f.last.plan.steps) >= 2


def test_replays_make_new_arrays_each_time(backend):
    f = wg.compile(lambda x: (x * 2 + 1).exp())
    x = wg.tensor([0.0, 1.0])
    first = f(x)
    second = f(wg.tensor([1.0, 2.0]))
    third = f(x)
    _same(first.tolist(), third.tolist(), backend)                       # not overwritten by the later replays
    _same(second.tolist(), (wg.tensor([1.0, 2.0]) * 2 + 1).exp().tolist(), backend)


def test_fused_pipelines_are_cached_by_the_chains_structure(gpu):
    wg.set_backend("wgpu")
    try:
        f, g = wg.compile(lambda x: (x * 3 - 1).tanh()), wg.compile(lambda y: (y * 3 - 1).tanh())
        f(wg.ones(5))
        f(wg.ones(5))
        count = len(gpu.pipelines)
        g(wg.ones(7))
        g(wg.ones(7))                                                # another function, same structure
        assert len(gpu.pipelines) == count
    finally:
        wg.set_backend("cpu")


def test_the_fused_wgsl_names_each_operation_once():
    src = fused_source([("Mul", (("in", 0), ("in", 1))), ("Add", (("op", 0), ("in", 0))), ("Tanh", (("op", 1),))])
    assert src.count("let t") == 3 and "tanh_(t1)" in src and "x0 * x1" in src and "t0 + x0" in src


def test_captured_dispatches_replay_a_gpu_kernel_on_new_inputs(gpu):
    kernel = wg.get_kernel("MatMul", "wgpu")
    a, b = wg.randn(3, 5, device="wgpu"), wg.randn(5, 2, device="wgpu")
    with gpu.capture() as dispatches:
        out = kernel(a._data, b._data, transpose_a=False, transpose_b=False)
    replay = dispatches.replayer((a._data, b._data), out)
    assert replay is not None and dispatches.records                      # what it dispatched, prepared once
    c, d = wg.randn(3, 5, device="wgpu"), wg.randn(5, 2, device="wgpu")
    got = wg.Tensor._wrap(replay(c._data, d._data), gpu)
    assert _flat(got.tolist()) == pytest.approx(_flat((c @ d).tolist()), rel=1e-6)
    with gpu.capture() as dispatches:                                       # an upload: not capturable
        wg.get_kernel("Fill", "wgpu")(shape=(3,), value=1.5, dtype=wg.float32)
        gpu.upload([1.0], (1,), wg.float32)
    assert dispatches.replayer((), None) is None
