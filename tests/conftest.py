"""Shared fixtures: every backend that starts here, and CI's no-skip rule.

Backends under test are those in ``wg.backends()``; ``WEBGRAD_TEST_BACKENDS=cpu,wgpu``
narrows the list. In CI (``CI=true``) a skipped test fails the run (see pytest_terminal_summary).
"""
import os

import pytest

import webgrad as wg


def available_backends():
    names = wg.backends()
    wanted = os.environ.get("WEBGRAD_TEST_BACKENDS")
    return [n for n in names if not wanted or n in wanted.split(",")]


BACKENDS = available_backends()


@pytest.fixture(params=BACKENDS)
def backend(request):
    """The name of a backend to run on; tensors made inside the test default to it."""
    previous = wg.get_backend().name
    wg.set_backend(request.param)
    yield request.param
    wg.set_backend(previous)


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    yield
    assert wg.is_grad_enabled(), "a test left grad mode off"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = terminalreporter.stats.get("skipped", [])
    if os.environ.get("CI") == "true" and skipped:
        terminalreporter.write_line(f"CI: {len(skipped)} test(s) skipped; in CI nothing that can run may skip",
                                    red=True)
        for rep in skipped:
            terminalreporter.write_line(f"  skipped: {rep.nodeid}: {rep.longrepr}")
        terminalreporter._session.exitstatus = 1
