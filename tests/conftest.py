"""Shared fixtures: every backend that starts here, and CI's no-skip rule.

Backends under test (tests/backends_under_test.py) are those in ``wg.backends()``;
``WEBGRAD_TEST_BACKENDS=cpu,wgpu`` narrows the list. In CI (``CI=true``) a skipped test fails
the run (see pytest_terminal_summary).
"""
import os

import pytest

import webgrad as wg
from backends_under_test import BACKEND_DTYPES, BACKENDS


@pytest.fixture(params=BACKENDS)
def backend(request):
    """The name of a backend to run on; tensors made inside the test default to it."""
    previous = wg.get_backend().name
    wg.set_backend(request.param)
    yield request.param
    wg.set_backend(previous)


@pytest.fixture(scope="session")
def gpu():
    """The ``wgpu`` backend object (registered on demand; skipped, with the reason, if no adapter)."""
    wgpu = pytest.importorskip("wgpu", reason="wgpu-py is not installed")
    del wgpu
    from webgrad.backends.gpu import register_native
    if "wgpu" not in wg.registry._backend_entries:
        register_native()
    wg.registry.backend("cpu")          # imports the cpu kernels, the oracle
    try:
        return wg.registry.backend("wgpu")
    except RuntimeError as e:
        pytest.skip(f"no WebGPU adapter: {e} (install Debian's mesa-vulkan-drivers for lavapipe)")


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    yield
    assert wg.is_grad_enabled(), "a test left grad mode off"


def _wanted_dtypes(item) -> set:
    """The dtype names a test asks for: its parameters that are dtypes or dtype names (and float64
    for the ``float64`` marker)."""
    wanted = {"float64"} if item.get_closest_marker("float64") else set()
    params = getattr(getattr(item, "callspec", None), "params", {})
    for v in params.values():
        name = v if isinstance(v, str) else getattr(v, "name", None) if isinstance(v, wg.dtype) else None
        if name in wg.dtypes.DTYPES:
            wanted.add(name)
    return wanted


def pytest_collection_modifyitems(config, items):
    """GPU backends have no float64 (their refusal is tested in test_gpu_backend.py), no bfloat16, and
    float16 only where the device has WebGPU's shader-f16 feature (test_gpu_half.py): a test that needs
    a dtype its backend lacks is not a test that could run, so it is deselected, not skipped.
    Browser tests go last: Playwright's sync API holds an event loop for the whole session, and
    asyncio.run() in a later test would fail."""
    keep, drop = [], []
    for item in items:
        be = getattr(getattr(item, "callspec", None), "params", {}).get("backend")
        (drop if be and not _wanted_dtypes(item) <= BACKEND_DTYPES.get(be, _wanted_dtypes(item)) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = sorted(keep, key=lambda item: "browser" in item.path.parts)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = terminalreporter.stats.get("skipped", [])
    if os.environ.get("CI") == "true" and skipped:
        terminalreporter.write_line(f"CI: {len(skipped)} test(s) skipped; in CI nothing that can run may skip",
                                    red=True)
        for rep in skipped:
            terminalreporter.write_line(f"  skipped: {rep.nodeid}: {rep.longrepr}")
        terminalreporter._session.exitstatus = 1
