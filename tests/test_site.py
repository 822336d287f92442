"""The static site's build (``webgrad.web.site``, issue 20 item 6) off the browser: hashed asset
folders named by their content, site.js pointing at them, the host's ``_headers``, pre-compressed
copies that decompress to the originals, and ahead-of-time bytecode (``webgrad.web.pycompile``, run
here by this CPython: the site build runs the same code inside Pyodide) that Python really uses."""
import base64
import csv
import gzip
import hashlib
import importlib
import io
import json
import re
import sys
import zipfile
from pathlib import Path

import pytest

from webgrad.web import compress
from webgrad.web.pycompile import add_bytecode, compile_zip
from webgrad.web.site import CACHE_FOREVER, PYODIDE_FILES, build_site, cache_control, headers_file


def make_wheel(path: Path, files: dict) -> Path:
    """A minimal wheel holding ``files`` ({name: text}) and a RECORD listing them."""
    info = "pkg-1.0.dist-info"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        rows = []
        for name, text in {**files, f"{info}/METADATA": "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"}.items():
            z.writestr(name, text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
            rows.append(f"{name},sha256={digest},{len(text.encode())}")
        z.writestr(f"{info}/RECORD", "\n".join([*rows, f"{info}/RECORD,,"]) + "\n")
    return path


@pytest.fixture
def built(tmp_path):
    """A site built from a stand-in wheel and a stand-in Pyodide folder (no bytecode: no node)."""
    wheel = make_wheel(tmp_path / "pkg-1.0-py3-none-any.whl", {"pkg/__init__.py": "VALUE = 1\n" * 300})
    pyodide = tmp_path / "pyodide"
    pyodide.mkdir()
    for name in PYODIDE_FILES:
        (pyodide / name).write_bytes(f"// {name}\n".encode() * 500)
    (pyodide / "package.json").write_text(json.dumps({"version": "314.0.7"}))
    (pyodide / "pyodide.js.map").write_text("not shipped")
    out = tmp_path / "site"
    site = build_site(out, wheel, pyodide, cache=tmp_path / "cache", compile_bytecode=False, make_snapshot=False)
    return out, site, wheel, pyodide


def test_assets_live_in_folders_named_by_their_content(built, tmp_path):
    out, site, wheel, pyodide = built
    assert re.fullmatch(r"\./assets/webgrad-[0-9a-f]{12}/pkg-1\.0-py3-none-any\.whl", site["wheel"]), site
    assert re.fullmatch(r"\./assets/pyodide-314\.0\.7-[0-9a-f]{12}/", site["pyodide"]), site
    assert (out / site["wheel"]).read_bytes() == wheel.read_bytes() == (out / "webgrad.whl").read_bytes()
    shipped = {p.name for p in (out / site["pyodide"]).iterdir() if p.suffix not in (".gz", ".br")}
    assert shipped == set(PYODIDE_FILES)            # no source maps, package.json, consoles
    # other content, other folder; the same content, the same folder
    (pyodide / "pyodide.asm.wasm").write_bytes(b"changed")
    again = build_site(tmp_path / "site2", wheel, pyodide, cache=tmp_path / "cache", compile_bytecode=False,
                       make_snapshot=False)
    assert again["pyodide"] != site["pyodide"] and again["wheel"] == site["wheel"]


def test_site_js_names_the_assets_and_pages_are_copied(built):
    out, site, _, _ = built
    text = (out / "site.js").read_text()
    assert json.loads(text.split("SITE = ", 1)[1].rstrip(";\n")) == {"pyodide": site["pyodide"], "wheel": site["wheel"],
                                                                   "snapshot": None}
    assert site["snapshot"] is None                       # make_snapshot=False
    web = Path(compress.__file__).parent
    assert (out / "index.html").read_bytes() == (web / "index.html").read_bytes()
    assert (web / "site.js").read_text() != text          # the checkout's default is left alone
    assert not (out / "gpu.js").exists() and not (out / "serve.py").exists()


def test_headers_file_isolates_and_caches_assets(built):
    out, _, _, _ = built
    text = (out / "_headers").read_text()
    assert text == headers_file()
    assert "Cross-Origin-Opener-Policy: same-origin" in text and "Cross-Origin-Embedder-Policy: require-corp" in text
    assert text.split("/assets/*\n", 1)[1] == f"  Cache-Control: {CACHE_FOREVER}\n"
    assert cache_control("/assets/x/y") == CACHE_FOREVER and cache_control("/assetsx") == "no-cache"


def test_compressed_copies_decompress_to_the_originals(built):
    out, site, _, _ = built
    copies = sorted(out.rglob("*.gz"))
    assert out / "index.html.gz" in copies and out / site["pyodide"] / "pyodide.asm.wasm.gz" in copies
    for copy in copies:
        original = copy.with_name(copy.name[:-3])
        assert gzip.decompress(copy.read_bytes()) == original.read_bytes(), copy
        assert copy.stat().st_size <= 0.9 * original.stat().st_size
    assert not (out / "site.js.gz").exists()          # too small to be worth it
    if compress.brotli is not None:
        for copy in out.rglob("*.br"):
            assert compress.brotli.decompress(copy.read_bytes()) == copy.with_name(copy.name[:-3]).read_bytes()
        assert (out / "index.html.br").exists()


def test_compression_is_cached_by_content(tmp_path, monkeypatch):
    (tmp_path / "a.js").write_text("let x = 1;\n" * 500)
    compress.compress_tree(tmp_path, cache=tmp_path / "cache")
    monkeypatch.setitem(compress.ENCODERS, "gz", lambda data: pytest.fail("compressed again"))
    (tmp_path / "a.js.gz").unlink()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "c.js").write_text("let x = 1;\n" * 500)   # the same content elsewhere
    expected = [tmp_path / "b" / f"c.js.{ext}" for ext in compress.ENCODERS]
    assert compress.compress_tree(tmp_path / "b", cache=tmp_path / "cache") == expected


def test_encoded_variant_follows_accept_encoding(tmp_path):
    page = tmp_path / "a.js"
    page.write_text("x")
    (tmp_path / "a.js.gz").write_bytes(b"gz")
    assert compress.encoded_variant(page, "gzip, br") == ("gzip", tmp_path / "a.js.gz")
    assert compress.encoded_variant(page, "br") == (None, page)
    assert compress.encoded_variant(page, "gzip;q=0") == (None, page)
    (tmp_path / "a.js.br").write_bytes(b"br")
    assert compress.encoded_variant(page, "gzip, br") == ("br", tmp_path / "a.js.br")


def test_compile_zip_gives_a_zip_python_imports_without_sources(tmp_path, monkeypatch):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("zpkg/__init__.py", "from .mod import f\n")
        z.writestr("zpkg/mod.py", "def f():\n    return 'from bytecode'\n")
        z.writestr("zpkg/broken.py", "def (:\n")           # kept as source: it does not compile
        z.writestr("zpkg/data.txt", "data")
    target = tmp_path / "std.zip"
    target.write_bytes(compile_zip(buf.getvalue(), f"{target}/"))
    z = zipfile.ZipFile(target)
    assert sorted(z.namelist()) == ["zpkg/__init__.pyc", "zpkg/broken.py", "zpkg/data.txt", "zpkg/mod.pyc"]
    assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
    monkeypatch.syspath_prepend(str(target))
    mod = importlib.import_module("zpkg")
    assert mod.f() == "from bytecode" and mod.f.__code__.co_filename == f"{target}/zpkg/mod.py"
    monkeypatch.delitem(sys.modules, "zpkg")
    monkeypatch.delitem(sys.modules, "zpkg.mod")


def test_add_bytecode_is_used_by_import_and_listed_in_record(tmp_path, monkeypatch):
    wheel = make_wheel(tmp_path / "w.whl", {"wpkg/__init__.py": "ANSWER = 'compiled'\n", "wpkg/data.txt": "x"})
    out = zipfile.ZipFile(io.BytesIO(add_bytecode(wheel.read_bytes(), str(tmp_path / "site"))))
    tag = sys.implementation.cache_tag
    pyc = f"wpkg/__pycache__/__init__.{tag}.pyc"
    assert pyc in out.namelist() and "wpkg/__init__.py" in out.namelist()
    rows = {row[0]: row for row in csv.reader(io.StringIO(out.read("pkg-1.0.dist-info/RECORD").decode())) if row}
    digest = base64.urlsafe_b64encode(hashlib.sha256(out.read(pyc)).digest()).rstrip(b"=").decode()
    assert rows[pyc] == [pyc, f"sha256={digest}", str(len(out.read(pyc)))]
    assert list(rows)[-1] == "pkg-1.0.dist-info/RECORD"
    out.extractall(tmp_path / "site")
    # unchecked-hash bytecode: Python uses it without looking at the source, as the page does
    (tmp_path / "site" / "wpkg" / "__init__.py").write_text("ANSWER = 'source'\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert importlib.import_module("wpkg").ANSWER == "compiled"
    monkeypatch.delitem(sys.modules, "wpkg")


def test_snapshot_pack_drops_empty_pages_and_unpacks_exactly():
    """The site's snapshot file (webgrad.web.snapshot.pack; worker.js's unpackSnapshot reads it)."""
    from webgrad.web.snapshot import PAGE, pack, unpack
    memory = bytearray(40 * PAGE + 100)
    memory[5] = 1                                          # page 0
    memory[3 * PAGE: 5 * PAGE] = b"\x07" * (2 * PAGE)      # pages 3-4: one run
    memory[-1] = 9                                         # the last, short page
    packed = pack(bytes(memory))
    assert packed[:4] == b"WGS1" and len(packed) == 12 + 3 * 8 + 3 * PAGE + 100
    assert unpack(packed) == bytes(memory)
    assert unpack(pack(bytes(3 * PAGE))) == bytes(3 * PAGE) and len(pack(bytes(3 * PAGE))) == 12
    with pytest.raises(ValueError, match="not a packed webgrad snapshot"):
        unpack(b"\x00snp" + bytes(20))
