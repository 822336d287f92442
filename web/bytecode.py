"""Pyodide's own bytecode for the site, made at build time: ``webgrad.web.pycompile`` run inside
Pyodide under Node (the ``node`` that came with ``npm``), with the local Pyodide folder the site
serves. Results are cached by content (``compress.default_cache()``): a build with the same
Pyodide and wheel costs a copy; the first one about 10-30 s.

Without ``node`` the site keeps the sources (the page then compiles them at every start) and says
so (``BytecodeUnavailable``).

>>> node_available() in (True, False)
True
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from webgrad.web.compress import cached, digest

PYCOMPILE = Path(__file__).with_name("pycompile.py")
TIMEOUT_S = 600

# Node: load Pyodide from argv[1] (a folder), define pycompile's functions, then for each job
# "stdlib|wheel <in> <out>" read <in>, transform it in Python, write <out>
DRIVER = r"""
import { pathToFileURL } from "node:url";
import fs from "node:fs";
const [indexDir, script, ...jobs] = process.argv.slice(1);
const { loadPyodide } = await import(pathToFileURL(indexDir + "/pyodide.mjs").href);
const py = await loadPyodide({ indexURL: indexDir + "/" });
py.runPython(fs.readFileSync(script, "utf8"));
const run = py.runPython(`
import sys, sysconfig
def run(kind, data):
    if kind == "stdlib":
        major, minor = sys.version_info[:2]
        return compile_zip(bytes(data), f"/lib/python{major}{minor}.zip/")
    return add_bytecode(bytes(data), sysconfig.get_paths()["purelib"])
run`);
for (let i = 0; i < jobs.length; i += 3) {
  const [kind, input, output] = jobs.slice(i, i + 3);
  const result = run(kind, new Uint8Array(fs.readFileSync(input)));
  fs.writeFileSync(output, result.toJs());
  result.destroy();
}
"""


class BytecodeUnavailable(RuntimeError):
    """No bytecode could be made (no ``node``, or Node could not run Pyodide); says why."""


def node_available() -> bool:
    return shutil.which("node") is not None


def _run(pyodide: Path, jobs: list[tuple[str, Path, Path]]) -> None:
    if not node_available():
        raise BytecodeUnavailable("no `node` on PATH (it comes with npm): the page will compile Python sources at start-up")
    args = [str(part) for job in jobs for part in job]
    proc = subprocess.run(["node", "--input-type=module", "-e", DRIVER, str(pyodide.resolve()), str(PYCOMPILE), *args],
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        raise BytecodeUnavailable(f"compiling bytecode in Pyodide under Node failed:\n{proc.stderr[-2000:]}")


def _key(kind: str, pyodide: Path, data: bytes) -> str:
    """Cache key: the input, the Pyodide that compiles it (its WebAssembly) and pycompile itself."""
    runtime = (pyodide / "pyodide.asm.wasm").read_bytes()
    return digest(b"|".join([kind.encode(), digest(data).encode(), digest(runtime).encode(),
                             digest(PYCOMPILE.read_bytes()).encode()]))


def compiled(kind: str, source: Path, pyodide: Path, cache: Path) -> Path:
    """The cached bytecode version of ``source`` (``kind`` "stdlib": Pyodide's python_stdlib.zip;
    "wheel": a wheel), made by ``pyodide``'s Python."""
    data = source.read_bytes()

    def make() -> bytes:
        out = cache / "bytecode" / f"{source.name}.{kind}.out"
        out.parent.mkdir(parents=True, exist_ok=True)
        _run(pyodide, [(kind, source, out)])
        result = out.read_bytes()
        out.unlink()
        return result
    return cached(cache / "bytecode", _key(kind, pyodide, data), make)
