"""``python -m webgrad.web.serve`` refuses what a dev server on 127.0.0.1 must not serve: malformed
paths (400), paths a symlink leads out of their folder (403), folder listings (404), requests for
other Host names (403, DNS rebinding); and it never answers with a traceback or a 500. It sends the
site's pre-compressed files to clients that accept them, caches the hashed assets for good and the
rest never without revalidating (304). Raw requests over a socket, to a server in a thread with a
stand-in wheel and a folder of symlinks mounted."""
import gzip
import re
import socket
import struct
import subprocess
import sys
import time

import pytest

from webgrad.web import compress
from webgrad.web.serve import ISOLATION, WEB, Server
from webgrad.web.serve_checks import MAX_PATH
from webgrad.web.site import CACHE_FOREVER


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """A folder beside the served ones, with a file the server must never give out."""
    folder = tmp_path_factory.mktemp("outside")
    (folder / "secret.txt").write_text("secret")
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory, outside):
    """The port of a server with two mounted folders: /m/ (files, folders, symlinks in and out) and /n/."""
    m, n = tmp_path_factory.mktemp("m"), tmp_path_factory.mktemp("n")
    (m / "a.txt").write_text("hello")
    (m / "sub").mkdir()
    (m / "sub" / "b.txt").write_text("in a folder")
    (m / "site").mkdir()
    (m / "site" / "index.html").write_text("<p>index</p>")
    (m / ".hidden").write_text("dotfile")
    (n / "other.txt").write_text("in n")
    (m / "big.bin").write_bytes(bytes(16 << 20))
    links = {"alias.txt": m / "a.txt", "etc": "/etc", "passwd": "/etc/passwd", "secret.txt": outside / "secret.txt",
             "out": outside, "to_n.txt": n / "other.txt", "to_web.html": WEB / "index.html", "loop": m / "loop"}
    for name, target in links.items():
        (m / name).symlink_to(target)
    (m / "site-out").mkdir()
    (m / "site-out" / "index.html").symlink_to(outside / "secret.txt")
    wheel = tmp_path_factory.mktemp("wheel") / "webgrad-0.0.0-py3-none-any.whl"
    wheel.write_bytes(b"PK stand-in")
    with Server(port=0, wheel=str(wheel), mounts={"m": m, "n": n}, allow_hosts=["Dev.Example"], bytecode=False,
                snapshot=False) as server:
        yield server.httpd.server_address[1]


@pytest.fixture(scope="module")
def site(served):
    """site.js of the served site: the hashed wheel's path (and Pyodide's, with a local copy)."""
    text = request(served, "/site.js")[2].decode()
    return dict(re.findall(r'"(pyodide|wheel)": "\.(/[^"]+)"', text))


@pytest.fixture(autouse=True)
def no_traceback(capfd):
    """No test's request makes the server print a traceback (it logs refusals on one line)."""
    yield
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception" not in err, err


def request(port, target, host="auto", method="GET", extra=b""):
    """Send one raw HTTP/1.1 request (bytes or str target) -> (status, headers, body)."""
    target = target.encode("latin-1") if isinstance(target, str) else target
    lines = [method.encode() + b" " + target + b" HTTP/1.1"]
    if host is not None:
        lines.append(b"Host: " + (f"127.0.0.1:{port}" if host == "auto" else host).encode())
    raw = b"\r\n".join(lines) + b"\r\n" + extra + b"Connection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(raw)
        data = b"".join(iter(lambda: s.recv(65536), b""))
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines)}
    return int(status_line.split()[1]), headers, body


def status(port, target, **kw):
    return request(port, target, **kw)[0]


MALFORMED = ["/%00", "/index.html%00.txt", "/m/a.txt%00", "/%zz", "/%4", "/m/%", "/%ff%fe", "/%c0%ae%c0%ae/",
             "/a/../../etc/passwd", "/m/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/m/%2e%2e/%2e%2e/",
             "/m%2f..%2f..%2fetc%2fpasswd", "/./index.html", "/m/sub/./b.txt", "/m//a.txt", "/m/%2fetc/passwd",
             "/a\\b", "/m/..\\..\\etc\\passwd", "/%5c..%5cetc%5cpasswd", "/C:/Windows/win.ini", "/m/c%3a%5cx",
             "/m/a%0d%0aSet-Cookie:%20x=1", "/%7f", "/é", "index.html", "*", "http://evil.example/index.html"]


@pytest.mark.parametrize("target", MALFORMED)
def test_malformed_paths_are_400(served, target):
    code, headers, body = request(served, target)
    assert code == 400, (target, code, body[:200])
    assert "set-cookie" not in headers


def test_a_raw_nul_byte_is_400(served):
    assert status(served, b"/index.html\x00") == 400


def test_overlong_paths_are_414(served):
    assert status(served, "/" + "a" * (MAX_PATH + 1)) == 414
    assert status(served, "/m/" + "a/" * 40000) == 414          # the request line's own limit
    assert status(served, "/" + "a" * (MAX_PATH - 10)) == 404   # long but allowed: just not there


def test_a_double_slash_is_never_a_redirect_elsewhere(served):
    """The standard library folds a leading '//' into '/' (an open redirect otherwise)."""
    for target in ("//etc/passwd", "//evil.example/m/sub", "///m/sub", "//m/sub"):
        code, headers, _ = request(served, target)
        location = headers.get("location", "/")
        assert code in (301, 400, 404) and location.startswith("/") and not location.startswith("//"), \
            (target, code, headers)


def test_files_are_served(served):
    assert request(served, "/m/a.txt")[2] == b"hello"
    assert request(served, "/m/sub/b.txt")[2] == b"in a folder"
    assert request(served, "/m/a%2Etxt?x=1#f")[2] == b"hello"
    assert request(served, "/webgrad.whl")[2] == b"PK stand-in"
    code, _, body = request(served, "/")
    assert code == 200 and body == (WEB / "index.html").read_bytes()
    assert status(served, "/m/a.txt", method="HEAD") == 200


def test_folders_are_never_listed(served):
    code, _, body = request(served, "/m/sub/")
    assert code == 404 and b"b.txt" not in body
    assert status(served, "/m/") == 404
    assert request(served, "/m/site/")[2] == b"<p>index</p>"
    code, headers, _ = request(served, "/m/sub?q=1")
    assert code == 301 and headers["location"] == "/m/sub/?q=1"
    assert status(served, "/m/a.txt/") == 404


def test_hidden_and_private_paths_are_404(served):
    for target in ("/m/.hidden", "/node_modules/", "/node_modules/pyodide/pyodide.mjs", "/__pycache__/", "/.git/config"):
        assert status(served, target) == 404, target


@pytest.mark.parametrize("target", ["/m/etc/passwd", "/m/etc/", "/m/etc", "/m/passwd", "/m/secret.txt",
                                    "/m/out/secret.txt", "/m/site-out/", "/m/to_n.txt", "/m/to_web.html"])
def test_symlinks_out_of_their_folder_are_refused(served, target):
    """Also into another served folder: a path is checked against the root it was reached through."""
    code, _, body = request(served, target)
    assert code == 403, (target, code)
    assert b"secret" not in body and b"root:" not in body


def test_symlinks_inside_their_folder_are_followed(served):
    assert request(served, "/m/alias.txt")[2] == b"hello"
    assert status(served, "/m/loop") == 404


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:8000", "127.0.0.1", "127.0.0.1:1", "[::1]",
                                  "[::1]:8000", "dev.example:8000"])
def test_loopback_hosts_and_allowed_names_are_served(served, host):
    assert status(served, "/m/a.txt", host=host) == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.2:8000",
                                  "localhost:x", "localhost:", "::1", "[::1", "0.0.0.0:8000", "", "dev.example.evil"])
def test_other_hosts_are_refused(served, host):
    code, _, body = request(served, "/m/a.txt", host=host)
    assert code in (400, 403) and b"hello" not in body, (host, code)


def test_a_request_needs_one_host_header(served):
    assert status(served, "/m/a.txt", host=None) == 400
    assert status(served, "/m/a.txt", extra=b"Host: evil.example\r\n") == 400


def test_headers_isolate_and_revalidate(served):
    for target in ("/", "/webgrad.js", "/m/a.txt", "/webgrad.whl", "/%00", "/m/sub/"):
        headers = request(served, target)[1]
        for name, value in {**ISOLATION, "Cache-Control": "no-cache"}.items():
            assert headers.get(name.lower()) == value, (target, name, headers)


def test_hashed_assets_are_cached_for_good(served, site):
    assert site["wheel"].startswith("/assets/webgrad-"), site
    code, headers, body = request(served, site["wheel"])
    assert code == 200 and body == b"PK stand-in"
    assert headers["cache-control"] == CACHE_FOREVER
    assert all(headers[k.lower()] == v for k, v in ISOLATION.items())


def test_unchanged_files_are_304(served):
    headers = request(served, "/webgrad.js")[1]
    since = f"If-Modified-Since: {headers['last-modified']}\r\n".encode()
    code, headers, body = request(served, "/webgrad.js", extra=since)
    assert code == 304 and body == b"" and headers["cache-control"] == "no-cache"
    assert status(served, "/webgrad.js", extra=b"If-Modified-Since: Thu, 01 Jan 1998 00:00:00 GMT\r\n") == 200
    assert status(served, "/webgrad.js", extra=b"If-Modified-Since: not a date\r\n") == 200


@pytest.mark.parametrize("accept, encoding", [("gzip", "gzip"), ("gzip, deflate, br", "br"), ("br;q=0, gzip", "gzip"),
                                              ("identity", None), (None, None)])
def test_compressed_files_by_accept_encoding(served, accept, encoding):
    """.br where the brotli package built them (pip install brotli), else .gz."""
    if encoding == "br" and compress.brotli is None:
        encoding = "gzip"
    raw = (WEB / "webgrad.js").read_bytes()
    extra = f"Accept-Encoding: {accept}\r\n".encode() if accept else b""
    code, headers, body = request(served, "/webgrad.js", extra=extra)
    assert code == 200 and headers.get("content-encoding") == encoding, headers
    assert headers["vary"] == "Accept-Encoding" and headers["content-type"].startswith("text/javascript")
    assert int(headers["content-length"]) == len(body)
    if encoding == "gzip":
        body = gzip.decompress(body)
    elif encoding == "br":
        body = compress.brotli.decompress(body)
    assert body == raw


def test_small_files_are_sent_as_they_are(served):
    code, headers, body = request(served, "/m/a.txt", extra=b"Accept-Encoding: gzip, br\r\n")
    assert code == 200 and body == b"hello" and "content-encoding" not in headers


def test_a_dropped_download_is_not_a_traceback(served):
    """A browser closing a page mid-download resets the connection; the server says nothing."""
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", served), timeout=10) as s:
            s.sendall(f"GET /m/big.bin HTTP/1.1\r\nHost: localhost:{served}\r\n\r\n".encode())
            s.recv(1024)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))   # close with a reset
    time.sleep(0.5)                     # the handler's next write fails now, before no_traceback looks
    assert status(served, "/m/a.txt") == 200


def test_other_methods_are_not_a_500(served):
    assert status(served, "/m/a.txt", method="POST") == 501
    assert status(served, "/m/a.txt", method="DELETE") == 501


def test_the_command_line_takes_allow_host(tmp_path):
    wheel = tmp_path / "webgrad-0.0.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    cmd = [sys.executable, "-m", "webgrad.web.serve", "--port", "0", "--wheel", str(wheel), "--no-bytecode", "--no-snapshot",
           "--allow-host", "a.example", "--allow-host", "b.example"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", lines[1]).group(1))
        assert status(port, "/webgrad.whl", host=f"b.example:{port}") == 200
        assert status(port, "/webgrad.whl", host="a.example") == 200
        assert status(port, "/webgrad.whl", host="c.example") == 403
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err, err
    help_text = " ".join(subprocess.run([*cmd[:3], "--help"], capture_output=True, text=True).stdout.split())
    assert "--allow-host NAME" in help_text and "DNS rebinding" in help_text


def test_the_command_line_mounts_folders(tmp_path):
    wheel = tmp_path / "webgrad-0.0.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    lite = tmp_path / "lite"
    (lite / "lab").mkdir(parents=True)
    (lite / "lab" / "index.html").write_text("<title>lab</title>")
    cmd = [sys.executable, "-m", "webgrad.web.serve", "--port", "0", "--wheel", str(wheel), "--no-bytecode", "--no-snapshot",
           "--mount", f"lite={lite}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(4)]
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", lines[1]).group(1))
        assert f"127.0.0.1:{port}/lite/" in lines[3], lines
        assert status(port, "/lite/lab/") == 200 and status(port, "/lite/nothing.html") == 404
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err, err
    bad = subprocess.run([*cmd[:-1], "lite"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--mount wants NAME=DIR" in bad.stderr, bad.stderr
