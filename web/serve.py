"""Serve webgrad's pages locally with a wheel freshly built from the checkout.

    python -m webgrad.web.serve [--port 8000] [--pyodide URL_OR_DIR] [--wheel PATH] [--allow-host NAME]

* ``/`` is ``web/`` (the demo, the playground, the loader);
* ``/webgrad.whl`` is a wheel built now from the checkout's sources (``python -m build --wheel``,
  else ``pip wheel``), or ``--wheel PATH``;
* ``/pyodide/`` is a local Pyodide when ``--pyodide`` names a folder, or when ``web/node_modules/pyodide``
  exists (``npm install`` in ``web/``). The pages take ``?pyodide=./pyodide/`` to use it; without it
  they load Pyodide from the public CDN. ``--pyodide URL`` only prints the page address to open.

It listens on 127.0.0.1 only and answers only requests whose Host header is a loopback name
(``localhost``, ``127.0.0.1``, ``[::1]``, any port), so a page on another name that resolves to
127.0.0.1 (DNS rebinding) reads nothing; ``--allow-host NAME`` (repeatable) adds a name, e.g. one
a tunnel or a reverse proxy forwards. Malformed paths get 400 (``serve_checks``), paths that a
symlink leads out of their folder 403, folders their ``index.html`` or 404 (never a listing).
Every response is cross-origin isolated (``ISOLATION``: COOP ``same-origin``, COEP ``require-corp``),
which gives the pages ``SharedArrayBuffer`` and with it the playground's Stop button.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from webgrad.web.serve_checks import LOOPBACK_HOSTS, Refused, host_allowed, inside, kind, path_segments

WEB = Path(__file__).resolve().parent
SOURCES = ("core", "backends", "web")           # the folders the wheel is built from (pyproject's package-dir)
SKIP = shutil.ignore_patterns("__pycache__", "node_modules", "*.pyc", ".*")
HIDDEN = ("node_modules", "__pycache__")   # in web/: the local Pyodide is served as /pyodide/ only
ISOLATION = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}
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
    """Files from web/, the wheel at /webgrad.whl, folders mounted at /NAME/ (Pyodide at
    /pyodide/); never cached, cross-origin isolated (``ISOLATION``). Refuses what
    ``serve_checks`` refuses; folders give their index.html or 404, never a listing."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}

    def __init__(self, *args, wheel: Path, mounts: dict, hosts: frozenset, **kwargs):
        self.wheel, self.mounts, self.hosts, self.target = wheel, mounts, hosts, None
        super().__init__(*args, directory=str(WEB), **kwargs)

    def send_head(self):
        try:
            if len(self.headers.get_all("Host", [])) != 1:
                raise Refused(400, "a request needs one Host header")
            if not host_allowed(self.headers["Host"], self.hosts):
                raise Refused(403, f"host {self.headers['Host']!r} is not allowed (serve --allow-host NAME)")
            self.target = self.locate(path_segments(self.path))
        except Refused as r:
            self.send_error(r.status, r.reason)
            return None
        return super().send_head()

    def locate(self, segments: list) -> Path:
        """The file a request's ``segments`` name (a folder's index.html), or the folder itself
        when the path lacks its trailing slash (the server redirects)."""
        if segments == ["webgrad.whl"]:
            return self.wheel
        root, parts = (self.mounts[segments[0]], segments[1:]) if segments[0] in self.mounts else (WEB, segments)
        if any(s.startswith(".") for s in parts) or (root == WEB and parts[0] in HIDDEN):
            raise Refused(404, "not served")
        real = inside(root, parts)
        if parts[-1:] == [""]:                          # a folder's path: its index.html
            if kind(real) != "folder":
                raise Refused(404, "not a folder")
            real = inside(root, [*parts, "index.html"])
        elif kind(real) == "folder":
            return real                                 # send_head redirects to the path with its slash
        if kind(real) != "file":
            raise Refused(404, "no such file (folders are not listed)")
        return real

    def translate_path(self, path: str) -> str:     # send_head's file: the one locate() checked
        return str(self.target)

    def list_directory(self, path):
        self.send_error(404, "folders are not listed")

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        for name, value in ISOLATION.items():
            self.send_header(name, value)
        super().end_headers()

    def log_request(self, code="-", size="-"):      # quiet: failed requests only
        if str(getattr(code, "value", code)).startswith(("4", "5")):
            super().log_request(code, size)


class QuietServer(http.server.ThreadingHTTPServer):
    """A browser that drops a connection mid-download (a page closed) is not an error to print."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Server:
    """The server, started in a thread (for tests): ``with Server(port=0) as s: s.url``.
    ``mounts`` ({name: folder}) serves more folders at /name/ (tests use it for wheels);
    ``allow_hosts`` adds Host names to the loopback ones.

    >>> with Server(port=0) as s:      # doctest: +SKIP
    ...     print(s.url)
    http://127.0.0.1:41234/
    """

    def __init__(self, port: int = 8000, pyodide: str | None = None, wheel: str | None = None, mounts=None,
                 allow_hosts=()):
        self._tmp = tempfile.TemporaryDirectory(prefix="webgrad-wheel-")
        self.wheel = Path(wheel).resolve() if wheel else build_wheel(Path(self._tmp.name))
        self.pyodide = local_pyodide(pyodide)
        folders = {name.strip("/"): Path(path).resolve() for name, path in (mounts or {}).items()}
        if self.pyodide is not None:
            folders["pyodide"] = self.pyodide.resolve()
        hosts = LOOPBACK_HOSTS | {h.lower() for h in allow_hosts}
        handler = functools.partial(Handler, wheel=self.wheel, mounts=folders, hosts=hosts)
        self.httpd = QuietServer(("127.0.0.1", port), handler)
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
    ap.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="answer requests for this Host name too (repeatable); by default only localhost, "
                         "127.0.0.1 and [::1] (DNS rebinding)")
    args = ap.parse_args(argv)
    server = Server(args.port, args.pyodide, args.wheel, allow_hosts=args.allow_host)
    query = ""
    if server.pyodide is not None:
        query = "?pyodide=./pyodide/"
    elif args.pyodide:
        query = f"?pyodide={args.pyodide}"
    print(f"webgrad: serving {WEB} with {server.wheel.name}"
          + (f" and Pyodide from {server.pyodide}" if server.pyodide else " (Pyodide from the CDN)"))
    print(f"  demo:       {server.url}{query}")
    print(f"  playground: {server.url}playground.html{query}", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
        server._tmp.cleanup()


if __name__ == "__main__":
    main()
