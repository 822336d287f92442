"""Serve webgrad's pages locally: a site built now (``webgrad.web.site``) with a wheel built from the checkout.

    python -m webgrad.web.serve [--port 8000] [--pyodide URL_OR_DIR] [--wheel PATH] [--allow-host NAME] [--no-bytecode]
                                [--no-snapshot] [--mount NAME=DIR]

* ``/`` is the site built from ``web/`` (the demo, the playground, the benchmark, the loader);
* the wheel is built now from the checkout's sources (``python -m build --wheel``, else
  ``pip wheel``), or ``--wheel PATH``; it is at ``/assets/webgrad-<hash>/`` and ``/webgrad.whl``;
* a local Pyodide, when ``--pyodide`` names a folder or ``web/node_modules/pyodide`` exists
  (``npm install`` in ``web/``), is at ``/assets/pyodide-<version>-<hash>/``, which the pages use
  by default, and at ``/pyodide/`` (``?pyodide=./pyodide/``); without one the pages load Pyodide
  from the public CDN. ``--pyodide URL`` only prints the page address to open;
* ``--mount NAME=DIR`` (repeatable) serves another folder at ``/NAME/``, with the same headers: e.g.
  a JupyterLite site built by ``webgrad.web.notebook`` (``--mount lite=_site``, then ``/lite/lab/``).

Responses: the hashed ``/assets/`` are cached for good (``Cache-Control: public, max-age=31536000,
immutable``), everything else revalidated (``no-cache``, answered 304 when unchanged); a client that
accepts brotli or gzip gets the pre-compressed ``.br``/``.gz`` file with its ``Content-Encoding``.

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
import email.utils
import functools
import http.server
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from webgrad.web.compress import encoded_variant
from webgrad.web.serve_checks import LOOPBACK_HOSTS, Refused, host_allowed, inside, kind, path_segments
from webgrad.web.site import ISOLATION, build_site, cache_control

WEB = Path(__file__).resolve().parent
SOURCES = ("core", "backends", "web")           # the folders the wheel is built from (pyproject's package-dir)
SKIP = shutil.ignore_patterns("__pycache__", "node_modules", "*.pyc", ".*")
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
    """Files from the built site and from folders mounted at /NAME/ (Pyodide at /pyodide/);
    pre-compressed when the client accepts it, cached by ``site.cache_control``, cross-origin
    isolated (``ISOLATION``). Refuses what ``serve_checks`` refuses; folders give their
    index.html or 404, never a listing. Each file response is appended to ``requests``."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}

    def __init__(self, *args, site: Path, mounts: dict, hosts: frozenset, requests: list, **kwargs):
        self.site, self.mounts, self.hosts, self.requests, self.target = site, mounts, hosts, requests, None
        super().__init__(*args, directory=str(site), **kwargs)

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
        if kind(self.target) == "folder":
            return super().send_head()                  # the redirect to the path with its slash
        return self.send_file(self.target)

    def send_file(self, path: Path):
        """Headers for ``path`` (or its .br/.gz copy), then the open file; 304 when unchanged."""
        encoding, body = encoded_variant(path, self.headers.get("Accept-Encoding"))
        stat = body.stat()
        status = 304 if self.unchanged_since(stat.st_mtime) else 200
        self.requests.append({"path": self.path.split("?", 1)[0], "status": status, "encoding": encoding,
                              "bytes": 0 if status == 304 else stat.st_size, "raw": path.stat().st_size})
        self.send_response(status)
        self.send_header("Content-Type", self.guess_type(str(path)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        if body != path or path.with_name(path.name + ".gz").is_file():
            self.send_header("Vary", "Accept-Encoding")
        self.send_header("Last-Modified", self.date_time_string(stat.st_mtime))
        if status == 304:
            self.end_headers()
            return None
        self.send_header("Content-Length", str(stat.st_size))
        self.end_headers()
        return open(body, "rb")

    def unchanged_since(self, mtime: float) -> bool:
        """Whether the request's If-Modified-Since covers ``mtime`` (HTTP dates have whole seconds)."""
        header = self.headers.get("If-Modified-Since")
        if not header or self.headers.get("If-None-Match"):
            return False
        try:
            since = email.utils.parsedate_to_datetime(header).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return False
        return int(mtime) <= since

    def locate(self, segments: list) -> Path:
        """The file a request's ``segments`` name (a folder's index.html), or the folder itself
        when the path lacks its trailing slash (the server redirects)."""
        root, parts = (self.mounts[segments[0]], segments[1:]) if segments[0] in self.mounts else (self.site, segments)
        if any(s.startswith(".") for s in parts):
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

    def translate_path(self, path: str) -> str:     # send_head's folder: the one locate() checked
        return str(self.target)

    def list_directory(self, path):
        self.send_error(404, "folders are not listed")

    def end_headers(self):
        path = getattr(self, "path", "/")                  # unset when the request line was refused
        self.send_header("Cache-Control", cache_control(path.split("?", 1)[0]))
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
    ``allow_hosts`` adds Host names to the loopback ones; ``bytecode=False`` ships Python
    sources only; ``snapshot=False`` makes no start-up snapshot (``webgrad.web.snapshot``). ``site`` is what ``site.build_site`` returned; ``requests`` lists the file
    responses sent ({path, status, encoding, bytes: the body's size, raw: the file's uncompressed
    size}), oldest first.

    >>> with Server(port=0) as s:      # doctest: +SKIP
    ...     print(s.url)
    http://127.0.0.1:41234/
    """

    def __init__(self, port: int = 8000, pyodide: str | None = None, wheel: str | None = None, mounts=None,
                 allow_hosts=(), bytecode: bool = True, snapshot: bool = True):
        self._tmp = tempfile.TemporaryDirectory(prefix="webgrad-site-")
        tmp = Path(self._tmp.name)
        self.wheel = Path(wheel).resolve() if wheel else build_wheel(tmp / "dist")
        self.pyodide = local_pyodide(pyodide)
        self.root = tmp / "site"
        self.site = build_site(self.root, self.wheel, self.pyodide, compile_bytecode=bytecode,
                               make_snapshot=snapshot)
        folders = {name.strip("/"): Path(path).resolve() for name, path in (mounts or {}).items()}
        if self.site["pyodide"] is not None:
            folders["pyodide"] = (self.root / self.site["pyodide"]).resolve()
        hosts = LOOPBACK_HOSTS | {h.lower() for h in allow_hosts}
        self.requests = []
        handler = functools.partial(Handler, site=self.root, mounts=folders, hosts=hosts, requests=self.requests)
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


def parse_mounts(values) -> dict:
    """``--mount`` values (``NAME=DIR``) as {name: folder}; a bad one exits naming it.

    >>> parse_mounts(["lite=."])
    {'lite': PosixPath('.')}
    """
    mounts = {}
    for value in values:
        name, sep, folder = value.partition("=")
        if not (sep and name.strip("/") and folder and Path(folder).is_dir()):
            raise SystemExit(f"serve: --mount wants NAME=DIR with DIR an existing folder, got {value!r}")
        mounts[name.strip("/")] = Path(folder)
    return mounts


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m webgrad.web.serve", description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--pyodide", help="a local Pyodide folder to serve (default: web/node_modules/pyodide if "
                                      "present), or a Pyodide base URL")
    ap.add_argument("--wheel", help="serve this wheel instead of building one from the checkout")
    ap.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="answer requests for this Host name too (repeatable); by default only localhost, "
                         "127.0.0.1 and [::1] (DNS rebinding)")
    ap.add_argument("--no-bytecode", action="store_true", help="ship Python sources only (no node needed)")
    ap.add_argument("--no-snapshot", action="store_true", help="make no start-up snapshot (no Chromium needed)")
    ap.add_argument("--mount", action="append", default=[], metavar="NAME=DIR",
                    help="serve DIR at /NAME/ too (repeatable), e.g. a JupyterLite site: --mount lite=_site")
    args = ap.parse_args(argv)
    mounts = parse_mounts(args.mount)
    server = Server(args.port, args.pyodide, args.wheel, mounts=mounts, allow_hosts=args.allow_host,
                    bytecode=not args.no_bytecode, snapshot=not args.no_snapshot)
    query = f"?pyodide={args.pyodide}" if server.pyodide is None and args.pyodide else ""
    for note in server.site["notes"]:
        print(f"note: {note}", file=sys.stderr)
    print(f"webgrad: serving a site built from {WEB} with {server.wheel.name}"
          + (f" and Pyodide from {server.pyodide}" if server.pyodide else " (Pyodide from the CDN)"))
    print(f"  demo:       {server.url}{query}")
    print(f"  playground: {server.url}playground.html{query}")
    for name, folder in mounts.items():
        print(f"  {name + ':':<11} {server.url}{name}/  ({folder})")
    sys.stdout.flush()
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
        server._tmp.cleanup()


if __name__ == "__main__":
    main()
