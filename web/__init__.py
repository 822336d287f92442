"""webgrad's browser side: the pages (the demo, the playground with its ``examples.js``, the
benchmark, the start-up page; ``page.js``, ``plot.js`` and ``site.js`` are what they share), the JS
loader (``webgrad.js``, ``worker.js``; ``tracebacks`` shortens the tracebacks it reports), the WebGPU
helpers of the ``webgpu`` device (``gpu.js``), ``python -m webgrad.web.site`` (the static site:
hashed assets, ``compress``, ``bytecode``/``pycompile``, the start-up ``snapshot``) and ``python -m webgrad.web.serve``
(``serve_checks``: what it refuses).

From Python code running in the page (Pyodide, in webgrad's Web Worker):

>>> from webgrad.web import post, in_browser
>>> in_browser()
False
>>> post({"loss": 0.25})       # in the page: wg.onMessage gets {type: "post", data: {loss: 0.25}}
False
"""
from __future__ import annotations

import sys


def in_browser() -> bool:
    """True when running in a browser under Pyodide (``sys.platform == "emscripten"``)."""
    return sys.platform == "emscripten"


def post(obj) -> bool:
    """Send ``obj`` (dicts, lists, numbers, strings, bools, None) to the page: in webgrad's
    worker, ``wg.onMessage`` receives ``{type: "post", data: obj}``; on a page's main thread it
    arrives as a ``webgrad`` CustomEvent (``event.detail``). Returns whether it was sent: off the
    browser it does nothing and returns False.

    >>> post([1, 2, 3])
    False
    """
    if not in_browser():
        return False
    import js
    from pyodide.ffi import to_js
    if hasattr(js, "WorkerGlobalScope"):
        js.postMessage(to_js({"type": "post", "data": obj}, dict_converter=js.Object.fromEntries))
    else:
        js.dispatchEvent(js.CustomEvent.new("webgrad", to_js({"detail": obj}, dict_converter=js.Object.fromEntries)))
    return True


__all__ = ["in_browser", "post"]
