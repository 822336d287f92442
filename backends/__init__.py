"""Backends: each registers itself with a priority; none is started until first use.

``cpu`` (numpy) is always registered; it starts only where numpy imports.
``wgpu`` (WebGPU through wgpu-py) is registered off emscripten; its priority is above
``cpu`` only on a real GPU adapter, asked for when a default backend is first chosen and only
where GPU hardware is reachable (``gpu/host.py``: elsewhere wgpu-native is not even loaded).
``webgpu`` (the browser's WebGPU, through Pyodide) is registered on emscripten, above ``cpu``.
"""
import sys
import types

from webgrad import flags, registry
from webgrad.registry import register_backend


class _CallableModule(types.ModuleType):
    """``webgrad.backends`` is this package and, called, ``registry.backends()``: the names of
    the registered backends that start here, highest priority first (``wg.backends()``)."""

    def __call__(self) -> list:
        return registry.backends()


sys.modules[__name__].__class__ = _CallableModule
flags.install(sys.modules[__name__])   # torch.backends.cudnn & co., accepted without effect


def _cpu():
    from .cpu import CpuBackend
    return CpuBackend()


register_backend("cpu", _cpu, priority=0)


if sys.platform == "emscripten":
    from .gpu.browser import register_browser

    register_browser()
else:
    from .gpu import register_native

    register_native()
