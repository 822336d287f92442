"""Serve webgrad's pages locally with a wheel freshly built from the checkout.

    python -m webgrad.web.serve [--port 8000] [--pyodide URL_OR_DIR] [--wheel PATH]

* ``/`` is ``web/`` (the demo, the playground, the loader);
* ``/webgrad.whl`` is a wheel built now from the checkout's sources (``python -m build --wheel``,
  else ``pip wheel``), or ``--wheel PATH``;
* ``/pyodide/`` is a local Pyodide when ``--pyodide`` names a folder, or when ``web/node_modules/pyodide``
  exists (``npm install`` in ``web/``). The pages take ``?pyodide=./pyodide/`` to use it; without it
  they load Pyodide from the public CDN. ``--pyodide URL`` only prints the page address to open.

It listens on 127.0.0.1 only.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import posixpath
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import unquote

WEB = Path(__file__).resolve().parent
SOURCES = ("core", "backends", "web")           # the folders the wheel is built from (pyproject's package-dir)
SKIP = shutil.ignore_patterns("__pycache__", "node_modules", "*.pyc", ".*")
MISSING = "-missing-"
TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
         ".json": "application/json", ".whl": "application/zip", ".py": "text/x-python", ".zip": "application/zip"}


def checkout_root() -> Path | None:
    """The source checkout this module belongs to (None when webgrad is installed from a wheel)."""
    root = WEB.parent
    return root if (root / "pyproject.toml").exists() and all((root / s).is_dir() for s in SOURCES) else None


def build_wheel(out_dir: Path, root: Path | None = None) -> Path:
    """Build webgrad's wheel from a clean copy of the checkout's sources into ``out_dir``.

    >>> build_wheel(Path("/tmp/dist"))      # doctest: +SKIP
    PosixPath('/tmp/dist/webgrad-0.1.0-py3-none-any.whl')
    """
    root = root or checkout_root()
    if root is None:
        raise SystemExit("serve: no webgrad checkout next to this module to build the wheel from; pass --wheel PATH")
    with tempfile.TemporaryDirectory(prefix="webgrad-src-") as tmp:
        src = Path(tmp)
        for folder in SOURCES:                   # a copy: no stale build/ folder can leak into the wheel
            shutil.copytree(root / folder, src / folder, ignore=SKIP)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(root / name, src / name)
        try:
            import build  # noqa: F401  (only to choose the command)
            cmd = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out_dir), str(src)]
        except ImportError:
            cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out_dir), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"serve: building the wheel failed ({' '.join(cmd)}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    wheels = sorted(out_dir.glob("webgrad-*.whl"))
    if not wheels:
        raise SystemExit(f"serve: the build left no wheel in {out_dir}")
    return wheels[-1]


def local_pyodide(option: str | None) -> Path | None:
    """The local Pyodide folder to serve at /pyodide/, if any."""
    if option and not option.startswith(("http://", "https://")):
        path = Path(option).resolve()
        if not (path / "pyodide.mjs").exists():
            raise SystemExit(f"serve: {path} holds no pyodide.mjs (expected an npm `pyodide` package folder)")
        return path
    default = WEB / "node_modules" / "pyodide"
    return default if (default / "pyodide.mjs").exists() else None


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files from web/, the wheel at /webgrad.whl, folders mounted at /NAME/ (Pyodide at
    /pyodide/); never cached."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}

    def __init__(self, *args, wheel: Path, mounts: dict, **kwargs):
        self.wheel, self.mounts = wheel, mounts
        super().__init__(*args, directory=str(WEB), **kwargs)

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        if clean == "/webgrad.whl":
            return str(self.wheel)
        for prefix, folder in self.mounts.items():
            if clean.startswith(prefix):
                rel = posixpath.normpath(unquote(clean[len(prefix):]))
                return str(folder / rel) if not rel.startswith(("..", "/")) else str(WEB / MISSING)
        if clean.startswith("/node_modules/"):
            return str(WEB / MISSING)                    # the local Pyodide is served as /pyodide/ only
        return super().translate_path(path)

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_request(self, code="-", size="-"):      # quiet: failed requests only
        if str(getattr(code, "value", code)).startswith(("4", "5")):
            super().log_request(code, size)


class Server:
    """The server, started in a thread (for tests): ``with Server(port=0) as s: s.url``.
    ``mounts`` ({name: folder}) serves more folders at /name/ (tests use it for wheels).

    >>> with Server(port=0) as s:      # doctest: +SKIP
    ...     print(s.url)
    http://127.0.0.1:41234/
    """

    def __init__(self, port: int = 8000, pyodide: str | None = None, wheel: str | None = None, mounts=None):
        self._tmp = tempfile.TemporaryDirectory(prefix="webgrad-wheel-")
        self.wheel = Path(wheel).resolve() if wheel else build_wheel(Path(self._tmp.name))
        self.pyodide = local_pyodide(pyodide)
        folders = {f"/{name.strip('/')}/": Path(path) for name, path in (mounts or {}).items()}
        if self.pyodide is not None:
            folders["/pyodide/"] = self.pyodide
        handler = functools.partial(Handler, wheel=self.wheel, mounts=folders)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self._thread = None

    def __enter__(self):
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self._tmp.cleanup()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m webgrad.web.serve", description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--pyodide", help="a local Pyodide folder to serve at /pyodide/, or a Pyodide base URL")
    ap.add_argument("--wheel", help="serve this wheel instead of building one from the checkout")
    args = ap.parse_args(argv)
    server = Server(args.port, args.pyodide, args.wheel)
    query = ""
    if server.pyodide is not None:
        query = "?pyodide=./pyodide/"
    elif args.pyodide:
        query = f"?pyodide={args.pyodide}"
    print(f"webgrad: serving {WEB} with {server.wheel.name}"
          + (f" and Pyodide from {server.pyodide}" if server.pyodide else " (Pyodide from the CDN)"))
    print(f"  demo:       {server.url}{query}")
    print(f"  playground: {server.url}playground.html{query}")
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
        server._tmp.cleanup()


if __name__ == "__main__":
    main()
