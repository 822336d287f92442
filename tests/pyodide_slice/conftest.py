"""The in-Pyodide slice of the suite: autograd semantics and every op family's forward and
gradient, without numpy, on the default backend (``webgpu`` in the page).

tests/browser/test_suite_slice.py copies this folder into Pyodide with ``expected.json`` (the
``cpu`` results of cases.py, computed on the host) and runs pytest on it there. On the host the
folder is not collected; ``WEBGRAD_SLICE_HOST=1`` collects it (on the default backend, or
``WEBGRAD_SLICE_BACKEND``), which is handy when changing it:

    WEBGRAD_SLICE_HOST=1 WEBGRAD_SLICE_BACKEND=wgpu python -m pytest tests/pyodide_slice -q
"""
import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
IN_PYODIDE = sys.platform == "emscripten"

if not IN_PYODIDE and os.environ.get("WEBGRAD_SLICE_HOST") != "1":
    collect_ignore_glob = ["test_*.py"]
sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session", autouse=True)
def slice_backend():
    """The backend under test: the default one (``webgpu`` in the browser) or WEBGRAD_SLICE_BACKEND."""
    import webgrad as wg
    name = os.environ.get("WEBGRAD_SLICE_BACKEND")
    previous = wg.get_backend().name
    if name:
        wg.set_backend(name)
    yield wg.get_backend().name
    wg.set_backend(previous)


@pytest.fixture(scope="session")
def expected():
    """The cpu results of every case: expected.json next to this file, else computed here (host only)."""
    path = HERE / "expected.json"
    if path.exists():
        return json.loads(path.read_text())
    if IN_PYODIDE:
        raise RuntimeError(f"{path} is missing: the host writes it (tests/browser/test_suite_slice.py)")
    import cases
    return json.loads(json.dumps(cases.expected()))
