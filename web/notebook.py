"""A JupyterLite site whose Pyodide kernel starts offline, with webgrad's wheel in its package index.

    python -m webgrad.web.notebook OUT --wheels DIR [--wheel webgrad-....whl] [--pyodide DIR]

JupyterLite's Pyodide kernel (``jupyterlite-pyodide-kernel``) loads, when it starts, ``micropip``
through ``pyodide.loadPackage`` and then ``ipykernel``, ``comm``, ``pyodide-kernel``, ``jedi`` and
``ipython`` through ``piplite`` -- by default from Pyodide's package repository on a CDN. npm's
Pyodide carries only the interpreter, so this builds, in the site, a Pyodide folder of its own:
npm's Pyodide files, the pure-Python wheels of those packages (``KERNEL_WHEELS``, downloaded from
PyPI by ``pip download``) and a ``pyodide-lock.json`` that lists exactly those wheels, with their
sha256 and their dependencies read from the wheels' metadata. The kernel then fetches nothing from
outside the site: ``%pip install webgrad`` resolves webgrad's wheel from the site's own index.

Needs ``jupyterlite-core`` and ``jupyterlite-pyodide-kernel`` (``bash .ci/test.sh`` installs them
and downloads ``KERNEL_WHEELS`` into ``build/notebook-wheels``).
"""
import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# What the kernel of jupyterlite-pyodide-kernel 0.8.6 imports at start, with every dependency, at the
# versions Pyodide 314.0's own lock file names (comm and ipython-pygments-lexers are not in it).
# micropip needs Python >= 3.13: pip download them with --python-version 3.14 (Pyodide 314's Python).
KERNEL_WHEELS = (
    "micropip==0.11.1", "comm==0.2.3", "ipython==9.12.0", "ipython-pygments-lexers==1.1.1",
    "jedi==0.19.2", "parso==0.8.6", "decorator==5.2.1", "matplotlib-inline==0.2.1", "traitlets==5.14.3",
    "prompt-toolkit==3.0.52", "wcwidth==0.6.0", "pygments==2.20.0", "stack-data==0.6.3",
    "executing==2.2.1", "asttokens==3.0.1", "pure-eval==0.2.3",
)
# loaded with Pyodide itself (loadPyodide's ``packages``), so the kernel's start skips its own installs
PRELOAD = ("micropip", "comm", "jedi", "ipython")
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide.js")
# Pyodide 314's Python, for the wheels' environment markers
EMSCRIPTEN = {"sys_platform": "emscripten", "platform_system": "Emscripten", "os_name": "posix",
              "platform_machine": "wasm32", "python_version": "3.14", "python_full_version": "3.14.2",
              "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}


def wheels_missing(folder: Path, specs=KERNEL_WHEELS) -> list:
    """The ``name==version`` specs among ``specs`` whose wheel ``folder`` lacks.

    >>> wheels_missing(Path("/nowhere"), ("comm==0.2.3",))
    ['comm==0.2.3']
    """
    have = {tuple(canonicalize_name(p) if i == 0 else p for i, p in enumerate(w.name.split("-")[:2]))
            for w in Path(folder).glob("*.whl")}
    return [s for s in specs if (canonicalize_name(s.split("==")[0]), s.split("==")[1]) not in have]


def wheel_metadata(wheel: Path):
    """The METADATA of ``wheel`` (an email.message.Message) and its top-level import names."""
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = Parser().parsestr(z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode())
        tops = next((n for n in names if n.endswith(".dist-info/top_level.txt")), None)
        imports = z.read(tops).decode().split() if tops else sorted(
            {n.split("/")[0].removesuffix(".py") for n in names
             if not n.split("/")[0].endswith((".dist-info", ".data")) and (n.endswith(".py") or "/" in n)})
    return meta, imports


def lock_entry(wheel: Path) -> dict:
    """The pyodide-lock.json entry of a pure-Python wheel: name, version, file, sha256, imports and
    the dependencies that apply in Pyodide (markers evaluated for emscripten, extras left out).

    >>> lock_entry(Path("comm-0.2.3-py3-none-any.whl"))["imports"]     # doctest: +SKIP
    ['comm']
    """
    meta, imports = wheel_metadata(wheel)
    requires = [Requirement(r) for r in meta.get_all("Requires-Dist") or []]
    depends = sorted({canonicalize_name(r.name) for r in requires if r.marker is None or r.marker.evaluate(EMSCRIPTEN)})
    return {"name": canonicalize_name(meta["Name"]), "version": meta["Version"], "file_name": wheel.name,
            "install_dir": "site", "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
            "package_type": "package", "imports": imports, "depends": depends,
            "unvendored_tests": False, "shared_library": False}


def pyodide_folder(dest: Path, pyodide: Path, wheels: list[Path]) -> Path:
    """``dest``: npm Pyodide's files, ``wheels`` and a lock file listing only those wheels (every
    dependency they name must be among them, so a missing one fails here, not in the browser)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_FILES:
        shutil.copy2(pyodide / name, dest / name)
    entries = {}
    for wheel in wheels:
        shutil.copy2(wheel, dest / wheel.name)
        entry = lock_entry(wheel)
        entries[entry["name"]] = entry
    missing = {d: e["name"] for e in entries.values() for d in e["depends"] if d not in entries}
    if missing:
        raise SystemExit(f"notebook: wheels missing for dependencies {missing} (dependency: wanted by); "
                         f"pip download them with --no-deps --only-binary=:all: --python-version 3.14")
    info = json.loads((pyodide / "pyodide-lock.json").read_text())["info"]
    (dest / "pyodide-lock.json").write_text(json.dumps({"info": info, "packages": entries}, indent=1))
    return dest


def kernel_settings(preload=PRELOAD) -> dict:
    """The kernel's jupyter-lite.json settings: preload the kernel's packages, never ask PyPI."""
    return {"loadPyodideOptions": {"packages": list(preload)}, "disablePyPIFallback": True}


def build_site(out: Path, webgrad_wheel: Path, kernel_wheels: list[Path], pyodide: Path, expose_app=False) -> Path:
    """Run ``jupyter lite build`` into ``out`` with the local Pyodide folder and webgrad's wheel;
    ``expose_app`` sets the app's ``exposeAppInBrowser`` (``window.jupyterapp``, for scripts and tests).

    >>> build_site(Path("_site"), Path("dist/webgrad-0.1.0-py3-none-any.whl"),
    ...            sorted(Path("build/notebook-wheels").glob("*.whl")), Path("web/node_modules/pyodide"))  # doctest: +SKIP
    """
    with tempfile.TemporaryDirectory() as tmp:
        lite = Path(tmp)
        pyodide_folder(lite / "static" / "pyodide", pyodide, kernel_wheels)
        config = {"jupyter-config-data": {"exposeAppInBrowser": str(bool(expose_app)).lower(), "litePluginSettings": {
            "@jupyterlite/pyodide-kernel-extension:kernel": kernel_settings()}}}
        (lite / "jupyter-lite.json").write_text(json.dumps(config))
        cmd = [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(lite), "--output-dir",
               str(Path(out).resolve()), "--piplite-wheels", str(Path(webgrad_wheel).resolve()), "--no-sourcemaps"]
        proc = subprocess.run(cmd, cwd=lite, capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"notebook: {' '.join(cmd)} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return Path(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m webgrad.web.notebook", description=__doc__.split("\n")[0])
    ap.add_argument("out", help="the site's folder")
    ap.add_argument("--wheels", required=True, help="folder of KERNEL_WHEELS' wheels (pip download)")
    ap.add_argument("--wheel", help="webgrad's wheel (default: built now from the checkout)")
    ap.add_argument("--pyodide", help="npm Pyodide's folder (default: web/node_modules/pyodide)")
    args = ap.parse_args(argv)
    from .serve import build_wheel
    wheel = Path(args.wheel) if args.wheel else build_wheel(Path(tempfile.mkdtemp()) / "dist")
    pyodide = Path(args.pyodide) if args.pyodide else Path(__file__).parent / "node_modules" / "pyodide"
    lacking = wheels_missing(Path(args.wheels))
    if lacking:
        raise SystemExit(f"notebook: {args.wheels} lacks {' '.join(lacking)}: pip download --no-deps "
                         f"--only-binary=:all: --python-version 3.14 --dest {args.wheels} {' '.join(lacking)}")
    build_site(Path(args.out), wheel, sorted(Path(args.wheels).glob("*.whl")), pyodide)
    print(f"webgrad: a JupyterLite site in {args.out}; serve it with COOP/COEP headers and open lab/")


if __name__ == "__main__":
    main()
