"""Packaging promises (DESIGN.md §1-2): webgrad imports without numpy, core/ never imports
numpy or wgpu, and one pure-Python ``py3-none-any`` wheel carries every module and data file,
with numpy and wgpu required only off emscripten."""
import ast
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"core": "webgrad", "backends": "webgrad/backends", "web": "webgrad/web"}   # source -> wheel path
FORBIDDEN = {"numpy", "wgpu"}
EMSCRIPTEN_ONLY_OFF = 'sys_platform != "emscripten"'


NOT_SHIPPED = ("__pycache__", "node_modules")   # caches, and web/'s npm install (Pyodide for the tests)


def source_files(folder):
    """The files a wheel must carry from ``folder``: sources and package data, not caches or the
    npm manifests that fetch the browser tests' Pyodide."""
    return sorted(p for p in (ROOT / folder).rglob("*") if p.is_file() and not set(NOT_SHIPPED) & set(p.parts)
                  and p.suffix not in (".pyc", ".pyo") and p.name not in ("package.json", "package-lock.json"))


def test_import_without_numpy_and_cpu_backend_says_why():
    code = """
import sys
sys.modules['numpy'] = None          # numpy is unimportable from here on
import webgrad as wg
loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'wgpu') and sys.modules[m] is not None)
assert not loaded, f'import webgrad loaded {loaded}: backends must import their runtime only when started'
x = wg.float32, wg.kernel_names.ADD, wg.no_grad   # the core is usable as plain Python
try:
    wg.backend('cpu')
except RuntimeError as e:
    print('cpu error:', e)
else:
    raise SystemExit('the cpu backend started without numpy')
assert 'cpu' not in wg.backends(), wg.backends()
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    msg = proc.stdout
    assert "cpu error:" in msg and "'cpu'" in msg and "numpy" in msg, msg


def imported_modules(tree):
    """Every module a Python file imports, anywhere in it (including inside functions and
    through importlib.import_module / __import__ with a literal name)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                yield node.args[0].value


def test_core_never_imports_numpy_or_wgpu():
    files = [p for p in source_files("core") if p.suffix == ".py"]
    assert len(files) > 10
    offenders = [f"{p.relative_to(ROOT)} imports {m}" for p in files
                 for m in imported_modules(ast.parse(p.read_text(), str(p)))
                 if m.split(".")[0] in FORBIDDEN]
    assert not offenders, "core/ must stay free of numpy and wgpu (DESIGN.md §2):\n" + "\n".join(offenders)


def test_the_scan_sees_imports_inside_functions():
    tree = ast.parse("def f():\n    import numpy as np\n    from wgpu.utils import x\n"
                     "    importlib.import_module('numpy.linalg')\n")
    assert [m.split(".")[0] for m in imported_modules(tree)] == ["numpy", "wgpu", "numpy"]


def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_folder_is_listed_in_pyproject():
    setup = pyproject()["tool"]["setuptools"]
    listed, package_dir = set(setup["packages"]), setup["package-dir"]
    assert package_dir == {"webgrad": "core", "webgrad.backends": "backends", "webgrad.web": "web"}
    found, no_init = set(), []
    for folder, pkg in package_dir.items():
        for d in [ROOT / pkg] + [p for p in (ROOT / pkg).rglob("*") if p.is_dir()]:
            if "__pycache__" in d.parts:
                continue
            name = ".".join([folder, *d.relative_to(ROOT / pkg).parts])
            if (d / "__init__.py").exists():
                found.add(name)
            elif any(d.glob("*.py")):
                no_init.append(str(d.relative_to(ROOT)))
    assert not no_init, f"folders with Python files but no __init__.py (left out of the wheel): {no_init}"
    assert found <= listed, f"packages missing from pyproject's [tool.setuptools] packages: {sorted(found - listed)}"
    assert listed <= found, f"pyproject lists packages that do not exist: {sorted(listed - found)}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel built from a clean copy of the sources (no stale build/ folder can leak in)."""
    src = tmp_path_factory.mktemp("src")
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns(*NOT_SHIPPED))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (whl,) = out.glob("*.whl")
    return whl


def test_wheel_is_pure_python(wheel):
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    with zipfile.ZipFile(wheel) as z:
        wheel_meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))).decode()
    assert "Root-Is-Purelib: true" in wheel_meta and "Tag: py3-none-any" in wheel_meta, wheel_meta


def test_wheel_holds_every_source_and_data_file(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    for must in ("webgrad/__init__.py", "webgrad/backends/cpu/__init__.py", "webgrad/backends/cpu/backend.py",
                 "webgrad/web/__init__.py"):
        assert must in names, f"{must} is not in the wheel"
    expected = {f"{dest}/{p.relative_to(ROOT / folder).as_posix()}"
                for folder, dest in FOLDERS.items() for p in source_files(folder)}
    missing = sorted(expected - names)
    assert not missing, f"files left out of the wheel (package list or package-data): {missing}"
    assert not any(n.startswith(("tests/", "examples/", "bench/")) for n in names)


def test_wheel_requires_numpy_and_wgpu_only_off_emscripten(wheel):
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    runtime = [r for r in requires if "extra ==" not in r]
    names = {r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower() for r in runtime}
    assert {"numpy", "wgpu"} <= names, runtime
    unmarked = [r for r in runtime if EMSCRIPTEN_ONLY_OFF not in r.replace("'", '"')]
    assert not unmarked, f"runtime requirements Pyodide would have to install: {unmarked}"


def test_ci_scripts_parse_and_run_is_executable():
    """The README's two commands and CI's entry point are valid bash; ``.ci/run`` is executable
    and hands over to the test command with CI=true; torch is only ever installed pinned."""
    for name in ("run", "test.sh", "main.sh", "env.sh"):
        path = ROOT / ".ci" / name
        proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, f".ci/{name}: {proc.stderr}"
    assert os.access(ROOT / ".ci" / "run", os.X_OK)
    run = (ROOT / ".ci" / "run").read_text()
    assert "CI=true" in run and ".ci/test.sh" in run
    test_sh = (ROOT / ".ci" / "test.sh").read_text()
    assert "torch==2.13.0" in test_sh and "pip install torch\n" not in test_sh


def test_install_only_mode_with_installs_skipped_does_nothing():
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "test.sh")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "WEBGRAD_SKIP_INSTALL": "1", "WEBGRAD_INSTALL_ONLY": "1"})
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
