"""Pre-compressed copies of a site's files: ``NAME.gz`` (Python's gzip, always) and ``NAME.br``
(brotli, when the ``brotli`` package is importable: ``pip install brotli``) next to each file
worth compressing, for a server that sends them with ``Content-Encoding`` to clients that accept
them (``python -m webgrad.web.serve`` does; see docs/hosting.md for other hosts).

Compressing is slow for the big files (brotli at its best quality takes a minute or more for
Pyodide's 9.6 MB WebAssembly here), so results are kept in a cache folder keyed by the file's
content: a second build of the same files costs a copy.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "app.js").write_text("console.log('webgrad');\\n" * 200)
>>> "app.js.gz" in [p.name for p in compress_tree(folder, cache=folder / ".cache")]
True
>>> gzip.decompress((folder / "app.js.gz").read_bytes()) == (folder / "app.js").read_bytes()
True
"""
from __future__ import annotations

import gzip
import hashlib
import os
import shutil
from pathlib import Path

try:
    import brotli
except ImportError:          # optional: without it the site has .gz files only
    brotli = None

# what a browser fetches and compresses well; wheels and Pyodide's zip are compressed if it pays
COMPRESSIBLE = frozenset({".html", ".js", ".mjs", ".css", ".json", ".wasm", ".py", ".txt", ".svg", ".map",
                          ".zip", ".whl", ".snapshot"})
MIN_BYTES = 1024             # smaller files go as they are (the headers cost more than the saving)
MIN_SAVING = 0.1             # keep a compressed copy only when it is at least 10% smaller
BROTLI_BEST_UP_TO = 1 << 20  # brotli quality 11 up to 1 MiB; 9 above (11 takes ~100x longer there)


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def _brotli(data: bytes) -> bytes:
    return brotli.compress(data, quality=11 if len(data) <= BROTLI_BEST_UP_TO else 9)


ENCODERS = {"gz": _gzip, **({"br": _brotli} if brotli is not None else {})}


# Content-Encoding -> the suffix of its pre-compressed file, best first
SUFFIXES = {"br": ".br", "gzip": ".gz"}


def accepted(header: str | None) -> set[str]:
    """The content codings an ``Accept-Encoding`` header accepts (``q=0`` refuses one).

    >>> sorted(accepted("gzip, deflate, br;q=1.0, zstd;q=0"))
    ['br', 'deflate', 'gzip']
    """
    out = set()
    for item in (header or "").split(","):
        name, *params = [part.strip() for part in item.split(";")]
        refused = any(p.replace(" ", "").lower() in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params)
        if name and not refused:
            out.add(name.lower())
    return out


def encoded_variant(path: Path, accept_header: str | None) -> tuple[str | None, Path]:
    """The file to send for ``path`` to a client sending ``accept_header``: its ``.br`` or
    ``.gz`` copy with that Content-Encoding when both exist and are accepted, else itself.

    >>> encoded_variant(Path("/no/such.js"), "br")
    (None, PosixPath('/no/such.js'))
    """
    codings = accepted(accept_header)
    for coding, suffix in SUFFIXES.items():
        variant = path.with_name(path.name + suffix)
        if coding in codings and variant.is_file():
            return coding, variant
    return None, path


def default_cache() -> Path:
    """Where built site pieces are kept between builds: ``$WEBGRAD_CACHE``, else
    ``$XDG_CACHE_HOME/webgrad`` (``~/.cache/webgrad``)."""
    if os.environ.get("WEBGRAD_CACHE"):
        return Path(os.environ["WEBGRAD_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "webgrad"


def digest(data: bytes) -> str:
    """The hex sha256 of ``data``: content-addressed names and cache keys."""
    return hashlib.sha256(data).hexdigest()


def place(source: Path, target: Path) -> None:
    """Put ``source``'s content at ``target``: a hard link when the file system allows, else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def cached(cache: Path, key: str, make) -> Path:
    """The cache file for ``key``, made with ``make() -> bytes`` when missing (written atomically)."""
    path = cache / key[:2] / key
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{key}.{os.getpid()}.tmp")
        tmp.write_bytes(make())
        os.replace(tmp, path)
    return path


def compress_file(path: Path, cache: Path) -> list[Path]:
    """Write ``path.gz`` (and ``path.br``) when ``path`` is worth compressing; returns what it wrote."""
    if path.suffix not in COMPRESSIBLE or path.stat().st_size < MIN_BYTES:
        return []
    data = path.read_bytes()
    key = digest(data)
    written = []
    for ext, encode in ENCODERS.items():
        blob = cached(cache / "compressed", f"{key}.{ext}", lambda: encode(data))
        if blob.stat().st_size <= (1 - MIN_SAVING) * len(data):
            place(blob, path.with_name(f"{path.name}.{ext}"))
            written.append(path.with_name(f"{path.name}.{ext}"))
    return written


def compress_tree(folder: Path, cache: Path | None = None) -> list[Path]:
    """Compress every file under ``folder`` worth it (see ``compress_file``); returns the new files."""
    cache = cache or default_cache()
    files = [p for p in sorted(Path(folder).rglob("*")) if p.is_file() and p.suffix[1:] not in ENCODERS]
    return [out for p in files for out in compress_file(p, cache)]
