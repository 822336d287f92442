"""The site's start-up snapshot, made at build time: Pyodide's memory right after ``import webgrad``
(Pyodide's ``_makeSnapshot``/``makeMemorySnapshot``), made by the site's own ``worker.js`` in
headless Chromium (Playwright), served from the site's own folder. Every visit, the first one too,
restores it (``startWebgrad({siteSnapshot})``) instead of starting the interpreter and importing
webgrad: Pyodide's start is most of a first visit's time.

Why a browser: restoring needs a snapshot made with the same stack switching (JSPI) the page has,
and Node 20 has none. Without Playwright or a Chromium (``$WEBGRAD_CHROMIUM``, else ``chromium``
on PATH or Debian's ``/usr/bin/chromium``) the site has no snapshot and says so
(``SnapshotUnavailable``); the pages then keep one in the browser's Cache Storage on a first visit.

The file is the snapshot without its empty pages (about half of Pyodide's memory is zeros): the
header ``WGS1``, the snapshot's length, the count of runs, then each run's offset and length (all
little-endian uint32), then the runs' bytes (``pack``; worker.js's ``unpackSnapshot`` expands it).
That halves what a visit reads from the browser's cache (or, compressed, what it decompresses).

Results are cached by content (``compress.default_cache()``): the Pyodide files, the wheel and
``worker.js`` that made it. The first build takes about 5-15 s.

>>> chromium() is None or Path(chromium()).exists()
True
"""
from __future__ import annotations

import base64
import functools
import json
import os
import shutil
import struct
import threading
from pathlib import Path

from webgrad.web.compress import digest

WEB = Path(__file__).resolve().parent
NAME = "webgrad.snapshot"
TIMEOUT_S = 180
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run"]

# in a page of the site: the site's worker makes the snapshot; its bytes come back as base64
MAKE = """async ([pyodideUrl, wheelUrl, ms]) => {
  const worker = new Worker(new URL("worker.js", location.href), {type: "module"});
  const reply = await new Promise((resolve) => {
    setTimeout(() => resolve({type: "failed", error: `no snapshot after ${ms / 1000} s`}), ms);
    worker.onmessage = (e) => ["snapshot", "failed"].includes(e.data.type) && resolve(e.data);
    worker.onerror = (e) => resolve({type: "failed", error: String(e.message || e)});
    worker.postMessage({type: "make-snapshot", pyodideUrl: new URL(pyodideUrl, location.href).href,
                        wheelUrl: new URL(wheelUrl, location.href).href});
  });
  worker.terminate();
  if (reply.type === "failed") return {error: reply.error};
  const url = await new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.readAsDataURL(new Blob([reply.bytes]));
  });
  return {base64: url.slice(url.indexOf(",") + 1), stdlib: reply.stdlib, jspi: reply.jspi};
}"""


MAGIC = b"WGS1"
PAGE = 4096


def pack(data: bytes) -> bytes:
    """``data`` without its all-zero pages (see the module's docstring for the layout).

    >>> packed = pack(bytes(8192) + b"webgrad" + bytes(9000))
    >>> len(packed), unpack(packed) == bytes(8192) + b"webgrad" + bytes(9000)
    (4116, True)
    """
    runs, zero = [], bytes(PAGE)
    for start in range(0, len(data), PAGE):
        if data[start:start + PAGE] != zero[:len(data) - start]:
            if runs and runs[-1][1] == start:
                runs[-1][1] = min(start + PAGE, len(data))
            else:
                runs.append([start, min(start + PAGE, len(data))])
    header = struct.pack(f"<4sII{2 * len(runs)}I", MAGIC, len(data), len(runs),
                         *(v for a, b in runs for v in (a, b - a)))
    return header + b"".join(data[a:b] for a, b in runs)


def unpack(packed: bytes) -> bytes:
    """The snapshot ``pack`` packed (what worker.js's ``unpackSnapshot`` does in the page)."""
    magic, total, count = struct.unpack_from("<4sII", packed)
    if magic != MAGIC:
        raise ValueError(f"not a packed webgrad snapshot (starts with {magic!r}, not {MAGIC!r})")
    out, at = bytearray(total), 12 + 8 * count
    for i in range(count):
        offset, length = struct.unpack_from("<II", packed, 12 + 8 * i)
        out[offset:offset + length] = packed[at:at + length]
        at += length
    return bytes(out)


class SnapshotUnavailable(RuntimeError):
    """No snapshot could be made (no Playwright or Chromium, or the browser failed); says why."""


def chromium() -> str | None:
    """The Chromium to make the snapshot with, or None."""
    found = os.environ.get("WEBGRAD_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    return found or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def _serving(root: Path):
    """``root`` served on a free loopback port as ``webgrad.web.serve`` serves a site; (server, url)."""
    from webgrad.web.serve import Handler, QuietServer
    from webgrad.web.serve_checks import LOOPBACK_HOSTS
    handler = functools.partial(Handler, site=root, mounts={}, hosts=LOOPBACK_HOSTS, requests=[])
    httpd = QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def _make(root: Path, pyodide: str, wheel: str) -> dict:
    """Open the built site ``root`` in headless Chromium and have its worker make the snapshot:
    {base64, stdlib, jspi} (see worker.js's make-snapshot)."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        raise SnapshotUnavailable("no Playwright (pip install playwright): the site has no start-up snapshot") from None
    exe = chromium()
    if exe is None:
        raise SnapshotUnavailable("no Chromium (chromium on PATH or $WEBGRAD_CHROMIUM): the site has no start-up snapshot")
    httpd, url = _serving(root)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=ARGS)
            try:
                page = browser.new_page()
                page.route(url + "__snapshot__.html", lambda r: r.fulfill(body="<!doctype html>", content_type="text/html"))
                page.goto(url + "__snapshot__.html")
                made = page.evaluate(MAKE, [pyodide, wheel, TIMEOUT_S * 1000])
            finally:
                browser.close()
    except Error as e:
        raise SnapshotUnavailable(f"making the start-up snapshot in Chromium failed: {e}") from None
    finally:
        httpd.shutdown()
        httpd.server_close()
    if "error" in made:
        raise SnapshotUnavailable(f"making the start-up snapshot in Chromium failed:\n{made['error'][-2000:]}")
    if not made["jspi"]:
        raise SnapshotUnavailable(f"{exe} has no JSPI (WebAssembly.Suspending): a snapshot made there cannot be restored")
    return made


def _key(root: Path, pyodide: str, wheel: str) -> str:
    """Cache key: what the snapshot is made of (Pyodide's files, the wheel) and with (worker.js)."""
    files = sorted((root / pyodide).iterdir()) + [root / wheel, root / "worker.js"]
    return digest(b"|".join(f.name.encode() + b":" + digest(f.read_bytes()).encode() for f in files if f.is_file()))


def snapshot(root: Path, pyodide: str, wheel: str, cache: Path) -> tuple[Path, str]:
    """The snapshot for the built site ``root`` whose Pyodide folder and wheel are at the site
    addresses ``pyodide`` and ``wheel``: (the cached file, the standard library stamp worker.js
    checks it against). Raises ``SnapshotUnavailable``.

    >>> snapshot(Path("public"), "./assets/pyodide-314.0.7-5d41402abc4b/", "./webgrad.whl", CACHE)  # doctest: +SKIP
    (PosixPath('.../snapshot/ab/ab12...'), 'python314.zip:10625063:1234567890')
    """
    key = _key(Path(root), pyodide, wheel)
    folder = Path(cache) / "snapshot" / key[:2]
    data, meta = folder / key, folder / f"{key}.json"
    if not (data.exists() and meta.exists()):
        made = _make(Path(root), pyodide, wheel)
        folder.mkdir(parents=True, exist_ok=True)
        for path, content in ((data, pack(base64.b64decode(made["base64"]))), (meta, json.dumps({"stdlib": made["stdlib"]}).encode())):
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(content)
            os.replace(tmp, path)
    return data, json.loads(meta.read_text())["stdlib"]
