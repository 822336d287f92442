"""What ``python -m webgrad.web.serve`` refuses before it touches the disk: a request's path
(malformed, escaping, hidden) and its Host header (DNS rebinding). Pure functions; the server
turns a :class:`Refused` into its status code.

>>> path_segments("/pyodide/pyodide.mjs?x=1")
['pyodide', 'pyodide.mjs']
>>> try:
...     path_segments("/a/../../etc/passwd")
... except Refused as refused:
...     print(refused)
400 Bad Request: '..' in the path
>>> host_allowed("localhost:8000", LOOPBACK_HOSTS), host_allowed("evil.example:8000", LOOPBACK_HOSTS)
(True, False)
"""
from __future__ import annotations

import re
import stat
from http import HTTPStatus
from pathlib import Path
from urllib.parse import unquote

MAX_PATH = 2048                              # characters of the request's path (before decoding)
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
CONTROL = frozenset(map(chr, [*range(0x20), 0x7F]))
# characters no path of ours holds, each of which could change what the path names on some system
FORBIDDEN = {"\\": "a backslash (a separator on Windows)", ":": "a colon (a drive on Windows)",
             **{c: f"control character {ord(c):#04x}" for c in CONTROL}}
BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
PORT = re.compile(r"(:[0-9]{1,5})?")


class Refused(Exception):
    """A request the server answers with ``status`` (400, 403, 404, 414) and ``reason``."""

    def __init__(self, status: int, reason: str):
        super().__init__(status, reason)
        self.status, self.reason = status, reason

    def __str__(self):
        return f"{self.status} {HTTPStatus(self.status).phrase}: {self.reason}"


def path_segments(target: str) -> list[str]:
    """The decoded segments of a request target's path (query and fragment dropped); a path
    naming a folder ends in an empty segment. Raises :class:`Refused` (400, or 414 when longer
    than ``MAX_PATH``) for anything but a plain ``/a/b/c`` of percent-encoded UTF-8: no ``..``
    or ``.`` segment, no empty segment (``//`` is an absolute path, and an open redirect), no
    control character, backslash or colon.

    >>> path_segments("/"), path_segments("/a%20b/")
    ([''], ['a b', ''])
    """
    path = target.split("?", 1)[0].split("#", 1)[0]
    if len(path) > MAX_PATH:
        raise Refused(414, f"the path is longer than {MAX_PATH} characters")
    if not path.startswith("/") or not path.isascii():
        raise Refused(400, "the path must start with '/' and be ASCII (percent-encoded)")
    if BAD_ESCAPE.search(path):
        raise Refused(400, "a '%' not followed by two hex digits")
    try:
        text = unquote(path, errors="strict")
    except UnicodeDecodeError:
        raise Refused(400, "the percent-encoded path is not UTF-8") from None
    bad = next((FORBIDDEN[c] for c in text if c in FORBIDDEN), None)
    if bad:
        raise Refused(400, f"{bad} in the path")
    segments = text[1:].split("/")
    dots = next((s for s in segments if s in (".", "..")), None)
    if dots:
        raise Refused(400, f"{dots!r} in the path")
    if "" in segments[:-1]:
        raise Refused(400, "an empty segment ('//') in the path")
    return segments


def inside(root: Path, parts: list[str]) -> Path:
    """``root/parts...`` with every symlink resolved; :class:`Refused` (403) when that lands
    outside ``root`` (itself resolved), 404 when it cannot be resolved (a symlink loop).

    >>> inside(Path("/usr"), ["lib"]) == Path("/usr/lib").resolve()
    True
    """
    try:
        real = root.joinpath(*parts).resolve()
    except (OSError, RuntimeError):
        raise Refused(404, "the path does not resolve") from None
    if not real.is_relative_to(root.resolve()):
        raise Refused(403, "the path leads outside the served folder (a symlink)")
    return real


def kind(path: Path) -> str | None:
    """``"folder"``, ``"file"`` or None (missing, unreadable, a name too long, a device or a pipe).

    >>> kind(Path("/")), kind(Path("/no/such/file"))
    ('folder', None)
    """
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    return "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else None


def host_allowed(host: str | None, allowed) -> bool:
    """Whether a Host header names one of ``allowed`` (lower-case names, IPv6 in brackets), with
    or without a port. A page on another name that resolves to 127.0.0.1 (DNS rebinding) is not.

    >>> host_allowed("[::1]:8000", LOOPBACK_HOSTS), host_allowed("LOCALHOST", LOOPBACK_HOSTS)
    (True, True)
    """
    if not host:
        return False
    end = host.find("]") + 1 if host.startswith("[") else (host.rfind(":") if ":" in host else len(host))
    name, port = host[:end].lower(), host[end:]
    return name in allowed and PORT.fullmatch(port) is not None
