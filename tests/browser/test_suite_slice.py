"""A slice of the suite runs inside Pyodide, with pytest unpacked from its pure-Python wheels,
on ``webgpu`` and without numpy: tests/pyodide_slice (autograd semantics; every op family's
forward and gradient against the ``cpu`` results computed here on the host)."""
import importlib.util
import json

import pytest

from browser_harness import ROOT, WHEEL_CACHE

SLICE = ROOT / "tests" / "pyodide_slice"
PYTEST_WHEELS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")

RUN = """
import io, json, sys, sysconfig, zipfile
from pathlib import Path
from pyodide.http import pyfetch

site = sysconfig.get_paths()["purelib"]
for name in WHEELS:                         # pure-Python wheels: unzip into site-packages (no micropip)
    data = await (await pyfetch(f"./test-wheels/{name}")).bytes()
    zipfile.ZipFile(io.BytesIO(data)).extractall(site)
folder = Path("/tmp/webgrad_slice")
folder.mkdir(exist_ok=True)
for name, text in FILES.items():
    (folder / name).write_text(text)

import pytest

class Outcomes:
    def __init__(self):
        self.counts, self.failures = {}, []
    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            self.counts[report.outcome] = self.counts.get(report.outcome, 0) + 1
            if report.outcome != "passed":
                self.failures.append(f"{report.nodeid} ({report.when}): {report.longreprtext[-1500:]}")

outcomes = Outcomes()
code = pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", str(folder), str(folder)], plugins=[outcomes])
print("SLICE " + json.dumps({"exit": int(code), "counts": outcomes.counts, "failures": outcomes.failures}))
"""


def cpu_results() -> dict:
    """Every slice case run here on ``cpu`` (tests/pyodide_slice/cases.py)."""
    spec = importlib.util.spec_from_file_location("pyodide_slice_cases", SLICE / "cases.py")
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    return cases.expected()


def test_suite_slice_passes_inside_pyodide_on_webgpu(webgrad_page):
    wheels = sorted(p.name for p in WHEEL_CACHE.glob("*.whl")) if WHEEL_CACHE.is_dir() else []
    have = {w.split("-")[0].lower() for w in wheels}
    if not set(PYTEST_WHEELS) <= have:
        pytest.skip(f"needs pytest's wheels in {WHEEL_CACHE}: pip download --no-deps --only-binary=:all: "
                    f"--dest {WHEEL_CACHE.relative_to(ROOT)} {' '.join(PYTEST_WHEELS)}  (bash .ci/test.sh does it)")
    files = {p.name: p.read_text() for p in sorted(SLICE.glob("*.py"))}
    files["expected.json"] = json.dumps(cpu_results())
    setup = f"WHEELS = {wheels!r}\nFILES = json.loads({json.dumps(json.dumps(files))})\n"
    r = webgrad_page.run("import json\n" + setup + RUN, timeout_s=150)
    assert r["error"] is None, r["error"][-4000:] + r["stdout"][-2000:]
    line = next(t for t in r["stdout"].splitlines() if t.startswith("SLICE "))
    result = json.loads(line[len("SLICE "):])
    assert result["exit"] == 0 and not result["failures"], "\n".join(result["failures"]) or result
    assert result["counts"].get("passed", 0) >= 100 and "skipped" not in result["counts"], result["counts"]
