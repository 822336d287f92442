"""Python bytecode made ahead of time, so the page's Python does not compile sources at start-up.

Pyodide's npm package carries its standard library as ``.py`` sources, which every start compiles
again (more than half of Pyodide's start-up here); its CDN release compiles them at build time
(``pyodide py-compile``). These functions do the same with the Python that runs them, so the site
build runs them *inside* Pyodide (under Node, ``webgrad.web.bytecode``) to get Pyodide's own
bytecode version; run by CPython they give that CPython's (the tests use it). Pure standard library.

* ``compile_zip(data, prefix)``: a zip of ``.py`` files (Pyodide's ``python_stdlib.zip``) as one of
  ``.pyc`` files, sources dropped, entries stored (the server compresses the transfer), as Pyodide's
  release does;
* ``add_bytecode(wheel, site_packages)``: a wheel with ``__pycache__/*.pyc`` next to its sources
  (kept: tracebacks show source lines) and its RECORD updated, entries stored (as above).

The ``.pyc`` files are unchecked-hash ones (PEP 552): Python uses them without comparing with the
source's timestamp, which the files unpacked in the page do not keep.

>>> import io, zipfile
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w") as z:
...     z.writestr("answer.py", "VALUE = 42\\n")
>>> names = zipfile.ZipFile(io.BytesIO(compile_zip(buf.getvalue(), "/lib/std.zip/"))).namelist()
>>> names
['answer.pyc']
"""
from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc


def bytecode(source: bytes, filename: str) -> bytes | None:
    """``source`` compiled as an unchecked-hash ``.pyc``, or None when it does not compile here
    (e.g. a test file written for another Python)."""
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False))


def _copy(info: zipfile.ZipInfo, name: str) -> zipfile.ZipInfo:
    out = zipfile.ZipInfo(name, date_time=info.date_time)
    out.external_attr = info.external_attr
    return out


def compile_zip(data: bytes, prefix: str) -> bytes:
    """The zip ``data`` with every ``.py`` that compiles replaced by its ``.pyc`` (the others
    kept); ``prefix`` is the path Python will import it from (``/lib/python314.zip/``), which
    tracebacks show. Entries are stored, not deflated."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            body = src.read(info)
            pyc = bytecode(body, prefix + info.filename) if info.filename.endswith(".py") else None
            if pyc is None:
                dst.writestr(_copy(info, info.filename), body)
            else:
                dst.writestr(_copy(info, info.filename[:-3] + ".pyc"), pyc)
    return out.getvalue()


def _record_line(name: str, body: bytes) -> list:
    digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(body))]


def add_bytecode(data: bytes, site_packages: str) -> bytes:
    """The wheel ``data`` with a ``__pycache__/NAME.<tag>.pyc`` for each of its ``.py`` files
    (``<tag>`` this Python's cache tag), listed in its RECORD; ``site_packages`` is where it will
    be unpacked (tracebacks show the paths under it)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        rows = [row for row in csv.reader(io.StringIO(src.read(record_name).decode())) if row and row[0] != record_name]
        for info in src.infolist():
            if info.filename == record_name:
                continue
            body = src.read(info)
            dst.writestr(_copy(info, info.filename), body)
            pyc = bytecode(body, f"{site_packages.rstrip('/')}/{info.filename}") if info.filename.endswith(".py") else None
            if pyc is not None:
                name = importlib.util.cache_from_source(info.filename)
                dst.writestr(_copy(info, name), pyc)
                rows.append(_record_line(name, pyc))
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows([*rows, [record_name, "", ""]])
        dst.writestr(record_name, text.getvalue())
    return out.getvalue()
