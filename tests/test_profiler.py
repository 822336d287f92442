"""``webgrad.profile()``: per-kernel stats, the table, and the kernel registry left exactly as it was."""
import pytest

import webgrad as wg
from webgrad import registry


def test_counts_time_and_bytes_per_kernel(backend):
    a, b = wg.ones(8, 4), wg.ones(4, 2)
    with wg.profile() as prof:
        for _ in range(3):
            y = a @ b
        y.sum().item()
    mm = prof.stats["MatMul"]
    assert mm.calls == 3 and mm.backends == {backend}
    assert mm.bytes == 3 * 8 * 2 * 4                       # three float32 [8, 2] outputs
    assert mm.host_s > 0 and mm.mean_s == pytest.approx(mm.host_s / 3)
    assert prof.stats["Sum"].calls == 1
    assert 0 < prof.peak_bytes and mm.peak_bytes <= prof.peak_bytes
    assert prof.wall_s >= sum(s.host_s for s in prof.stats.values())


def test_peak_counts_live_outputs_not_freed_ones():
    x = wg.ones(1000, backend="cpu")                       # 4000 bytes, made before the block
    with wg.profile() as prof:
        for _ in range(5):
            y = x + 1                                      # each 4000 bytes; the previous one is freed
        del y
    assert prof.stats["Add"].bytes == 5 * 4000
    assert 4000 <= prof.peak_bytes < 5 * 4000
    assert prof.live_bytes < 4000                          # every Add output is gone (small scalars may be cached)


def test_backward_kernels_are_profiled():
    x = wg.randn(5, 3, requires_grad=True)
    with wg.profile() as prof:
        (x.tanh() * 2).sum().backward()
    assert {"Tanh", "Mul", "Sum"} <= set(prof.stats)
    assert prof.stats["Mul"].calls == 1                    # forward
    assert {"TanhGrad", "MulGrad", "SumGrad"} <= set(prof.stats)   # backward, by the cpu's native VJPs


def test_backward_kernels_are_profiled_when_recording_the_backward():
    x = wg.randn(5, 3, requires_grad=True)
    with wg.profile() as prof:
        (g,) = wg.grad((x.tanh() * 2).sum(), x, create_graph=True)
    assert prof.stats["Mul"].calls >= 2                    # forward, and the rule's dy * 2
    assert not [k for k in prof.stats if k.endswith("Grad")]


def test_table_lists_every_kernel_slowest_first():
    with wg.profile() as prof:
        (wg.ones(3) * wg.ones(3)).exp()
    text = prof.table()
    assert str(prof) == text
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["kernel", "backend", "calls"] and "peak live" in lines[0]
    body = [line.split()[0] for line in lines[2:-2]]
    assert set(body) == set(prof.stats)
    times = [prof.stats[name].host_s for name in body]
    assert times == sorted(times, reverse=True)
    assert lines[-1].startswith("total")
    assert len(prof.table(limit=1).splitlines()) == 5


def _flat(tables: dict) -> dict:
    """A per-backend registry as {(name, backend): entry}."""
    return {(name, be): entry for be, table in tables.items() for name, entry in table.items()}


def test_registry_restored_exactly_even_after_an_exception():
    before = _flat(registry._kernels)
    with pytest.raises(KeyError):
        with wg.profile():
            now = _flat(registry._kernels)
            assert all(now[k] is not fn for k, fn in before.items())
            raise KeyError("boom")
    now = _flat(registry._kernels)
    assert now == before
    assert all(now[k] is fn for k, fn in before.items())


def test_a_backward_pass_shows_its_backward_kernels():
    x = wg.tensor([[1.0, 2.0]], requires_grad=True)
    w = wg.tensor([[3.0], [4.0]], requires_grad=True)
    with wg.profile() as prof:
        (x @ w).tanh().sum().backward()
    for name in ("MatMulGrad", "TanhGrad", "SumGrad"):
        assert prof.stats[name].calls == 1, name


def test_kernels_registered_inside_the_block_are_left_unwrapped():
    mine = lambda x: x  # noqa: E731
    before = _flat(registry._kernels)
    try:
        with wg.profile() as prof:
            wg.register_kernel("TestProfiledNew", "cpu", mine)
            wg.run_kernel("TestProfiledNew", wg.ones(1, backend="cpu"))
        assert wg.get_kernel("TestProfiledNew", "cpu") is mine
        assert "TestProfiledNew" not in prof.stats
    finally:
        wg.unregister_kernel("TestProfiledNew", "cpu")
    assert _flat(registry._kernels) == before


def test_a_wrapper_kept_after_the_block_stops_recording():
    with wg.profile() as prof:
        kept = wg.get_kernel("Neg", "cpu")
    assert kept is not wg.get_kernel("Neg", "cpu")
    assert kept.__wrapped__ is wg.get_kernel("Neg", "cpu")
    kept(wg.ones(2, backend="cpu")._data)
    assert "Neg" not in prof.stats


def test_nested_profiles():
    before = _flat(registry._kernels)
    with wg.profile() as outer:
        wg.ones(2) + 1
        with wg.profile() as inner:
            wg.ones(2) + 1
    assert outer.stats["Add"].calls == 2 and inner.stats["Add"].calls == 1
    assert _flat(registry._kernels) == before


def test_device_time_hook():
    """A backend with start/stop_device_timing reports device time; the table shows it."""
    class Timed:
        def start_device_timing(self, report):
            self.report = report

        def stop_device_timing(self):
            self.report("MatMul", 0.002)

    be = Timed()
    registry._backend_instances["test_timed"] = be
    try:
        with wg.profile() as prof:
            wg.ones(2, 2) @ wg.ones(2, 2)
    finally:
        del registry._backend_instances["test_timed"]
    assert prof.stats["MatMul"].device_s == pytest.approx(0.002)
    assert "device ms" in prof.table()


def test_a_running_profile_cannot_be_entered_twice():
    prof = wg.profile()
    with prof:
        with pytest.raises(RuntimeError, match="profile: this profile is already running"):
            prof.__enter__()
