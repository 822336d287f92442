"""Build webgrad's pages as a static site, ready for a browser cache and a compressing host.

    python -m webgrad.web.site OUT [--wheel PATH] [--pyodide DIR] [--no-bytecode] [--no-snapshot]

What OUT holds (``python -m webgrad.web.serve`` builds one into a temporary folder and serves it):

* the pages and their scripts (``*.html``, ``*.js``, ``*.css``, ``demo.py``): small, to be
  revalidated on every visit (``Cache-Control: no-cache``);
* ``assets/``: files named by a hash of their content, to be cached for good (``Cache-Control:
  public, max-age=31536000, immutable``): the wheel (``assets/webgrad-<hash>/webgrad-*.whl``) and,
  with a local Pyodide (``web/node_modules/pyodide`` after ``npm install`` in web/, or
  ``--pyodide DIR``), the five files of it the page loads (``assets/pyodide-<version>-<hash>/``:
  no source maps, type declarations or consoles);
* ``assets/snapshot-<hash>/webgrad.snapshot``: with a local Pyodide and a Chromium to make it in
  (``webgrad.web.snapshot``), Pyodide's memory right after ``import webgrad``, which every visit
  restores instead of starting Python (``--no-snapshot``: none; the pages then keep one in the
  browser's Cache Storage on a first visit);
* ``site.js``: the hashed addresses, which the pages start from (``SITE.pyodide``, ``SITE.wheel``,
  ``SITE.snapshot``: ``{url, stdlib}`` or null); without a local Pyodide the pages use the public CDN;
* ``webgrad.whl``: the wheel under its stable name, for pages that ask for ``./webgrad.whl``;
* ``NAME.gz`` and ``NAME.br`` beside each file worth compressing (``webgrad.web.compress``);
* ``_headers``: the response headers the site needs, in the format of Netlify and Cloudflare Pages
  (COOP/COEP for cross-origin isolation, the assets' caching); docs/hosting.md gives them for
  other hosts.

The Python it ships is compiled ahead of time where ``node`` can run the local Pyodide
(``webgrad.web.bytecode``): Pyodide's standard library as ``.pyc`` files and the wheel with
``__pycache__``, so the page does not compile sources at every start. ``--no-bytecode`` ships
them as they are.

>>> from webgrad.web.site import build_site          # doctest: +SKIP
>>> build_site(Path("public"), wheel=Path("dist/webgrad-0.1.0-py3-none-any.whl"))["wheel"]  # doctest: +SKIP
'./assets/webgrad-3f2a9c01b7de/webgrad-0.1.0-py3-none-any.whl'
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from webgrad.web import bytecode, snapshot
from webgrad.web.compress import compress_tree, default_cache, digest, place

WEB = Path(__file__).resolve().parent
PAGES = ("*.html", "*.js", "*.css", "demo.py")           # what the pages load from web/ (not gpu.js: the wheel's)
NOT_PAGES = ("gpu.js",)
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "pyodide-lock.json", "python_stdlib.zip")
ASSETS = "assets"
HASH_CHARS = 12
CACHE_FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
ISOLATION = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}


def cache_control(path: str) -> str:
    """The Cache-Control a site path gets: hashed assets forever, everything else revalidated.

    >>> cache_control("/assets/webgrad-0123456789ab/webgrad-0.1.0-py3-none-any.whl")
    'public, max-age=31536000, immutable'
    >>> cache_control("/index.html"), cache_control("./assets/pyodide-314.0.7-0123456789ab/pyodide.mjs")
    ('no-cache', 'public, max-age=31536000, immutable')
    """
    relative = path[2:] if path.startswith("./") else path.lstrip("/")     # a URL path or a site.js address
    return CACHE_FOREVER if relative.startswith(ASSETS + "/") else REVALIDATE


def hashed_folder(kind: str, files: dict[str, bytes]) -> str:
    """``assets/<kind>-<hash>``, the hash over the files' names and contents."""
    h = digest(b"".join(name.encode() + b"\0" + digest(data).encode() for name, data in sorted(files.items())))
    return f"{ASSETS}/{kind}-{h[:HASH_CHARS]}"


def pyodide_version(folder: Path) -> str:
    """The npm package's version (``314.0.7``), or ``local``."""
    try:
        return json.loads((folder / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "local"


def _compiled(kind: str, source: Path, pyodide: Path | None, cache: Path, notes: list) -> Path:
    """``source`` with Pyodide's bytecode, or ``source`` itself (and a note why) when none can be made."""
    if pyodide is None:
        return source
    try:
        return bytecode.compiled(kind, source, pyodide, cache)
    except bytecode.BytecodeUnavailable as why:
        notes.append(str(why))
        return source


def _write_assets(out: Path, kind: str, sources: dict[str, Path]) -> str:
    """Place ``sources`` ({name: file}) into their hashed folder under ``out``; returns the folder."""
    folder = hashed_folder(kind, {name: path.read_bytes() for name, path in sources.items()})
    for name, path in sources.items():
        place(path, out / folder / name)
    return folder


def _snapshot(out: Path, site: dict, cache: Path, notes: list) -> dict | None:
    """The start-up snapshot placed in its hashed folder: {url, stdlib}, or None (and a note why)."""
    try:
        made, stdlib = snapshot.snapshot(out, site["pyodide"], site["wheel"], cache)
    except snapshot.SnapshotUnavailable as why:
        notes.append(str(why))
        return None
    return {"url": f"./{_write_assets(out, 'snapshot', {snapshot.NAME: made})}/{snapshot.NAME}", "stdlib": stdlib}


def write_site_js(out: Path, site: dict) -> None:
    """``site.js``: the hashed addresses the pages start from."""
    addresses = {key: site.get(key) for key in ("pyodide", "wheel", "snapshot")}
    (out / "site.js").write_text("// Written by webgrad.web.site: where this site's hashed assets are.\n"
                                 f"export const SITE = {json.dumps(addresses)};\n")


def headers_file() -> str:
    """``_headers`` (Netlify, Cloudflare Pages): isolation everywhere, the hashed assets cached for
    good (the other files get the host's default, which revalidates).

    >>> print(headers_file().splitlines()[-1])
      Cache-Control: public, max-age=31536000, immutable
    """
    every = "".join(f"  {k}: {v}\n" for k, v in ISOLATION.items())
    return f"/*\n{every}/{ASSETS}/*\n  Cache-Control: {CACHE_FOREVER}\n"


def build_site(out: Path, wheel: Path, pyodide: Path | None = None, cache: Path | None = None,
               compile_bytecode: bool = True, make_snapshot: bool = True) -> dict:
    """Build the site into ``out`` (emptied first) from ``web/``, ``wheel`` and the local Pyodide
    folder ``pyodide`` (None: the pages use the CDN). Returns ``{"wheel", "pyodide", "snapshot",
    "notes"}``: the pages' addresses of the first two (``pyodide`` None without a local copy), the
    start-up snapshot's ``{url, stdlib}`` (None without a local Pyodide, ``make_snapshot`` or a
    Chromium) and why anything was left out (no bytecode without node, no snapshot without Chromium).

    >>> site = build_site(Path(tempfile.mkdtemp()), wheel=WHEEL)   # doctest: +SKIP
    >>> site["pyodide"]                                            # doctest: +SKIP
    './assets/pyodide-314.0.7-5d41402abc4b/'
    """
    out, cache, notes = Path(out), cache or default_cache(), []
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for pattern in PAGES:                # copies (not links): a page edited in `out` stays there
        for path in WEB.glob(pattern):
            if path.name not in NOT_PAGES:
                shutil.copy2(path, out / path.name)
    compile_with = pyodide if compile_bytecode else None
    wheel_file = _compiled("wheel", Path(wheel), compile_with, cache, notes)
    site = {"wheel": f"./{_write_assets(out, 'webgrad', {Path(wheel).name: wheel_file})}/{Path(wheel).name}",
            "pyodide": None, "snapshot": None}
    place(wheel_file, out / "webgrad.whl")
    if pyodide is not None:
        files = {name: Path(pyodide) / name for name in PYODIDE_FILES}
        files["python_stdlib.zip"] = _compiled("stdlib", files["python_stdlib.zip"], compile_with, cache, notes)
        site["pyodide"] = f"./{_write_assets(out, f'pyodide-{pyodide_version(Path(pyodide))}', files)}/"
    write_site_js(out, site)
    if site["pyodide"] is not None and make_snapshot:
        site["snapshot"] = _snapshot(out, site, cache, notes)
        write_site_js(out, site)
    (out / "_headers").write_text(headers_file())
    compress_tree(out, cache)
    return {**site, "notes": notes}


def main(argv=None) -> None:
    from webgrad.web.serve import build_wheel, local_pyodide
    ap = argparse.ArgumentParser(prog="python -m webgrad.web.site", description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the folder to build the site into (emptied first)")
    ap.add_argument("--wheel", help="the webgrad wheel to ship (default: built now from the checkout)")
    ap.add_argument("--pyodide", help="a local Pyodide folder (default: web/node_modules/pyodide if present, else the CDN)")
    ap.add_argument("--no-bytecode", action="store_true", help="ship Python sources only (no node needed)")
    ap.add_argument("--no-snapshot", action="store_true", help="make no start-up snapshot (no Chromium needed)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="webgrad-wheel-") as tmp:
        wheel = Path(args.wheel) if args.wheel else build_wheel(Path(tmp))
        site = build_site(Path(args.out), wheel, local_pyodide(args.pyodide), compile_bytecode=not args.no_bytecode,
                          make_snapshot=not args.no_snapshot)
    for note in site["notes"]:
        print(f"note: {note}", file=sys.stderr)
    print(f"webgrad: site in {args.out}: wheel {site['wheel']}, Pyodide {site['pyodide'] or 'from the CDN'}")


if __name__ == "__main__":
    main()
