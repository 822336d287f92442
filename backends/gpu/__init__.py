"""The WebGPU backend (shared by the native ``wgpu`` device and the browser ``webgpu`` device).

``register_native()`` makes the ``wgpu`` backend (wgpu-py) available; its priority is above
``cpu`` only on a real GPU adapter.
"""
from __future__ import annotations

from webgrad.registry import register_backend, register_kernel

from .device import GpuError
from .runtime import GpuArray, GpuBackend

CPU_PRIORITY = 0


def register_kernels(backend_name: str) -> None:
    """Register every WGSL kernel for the GPU backend called ``backend_name``."""
    from webgrad import registry

    from . import elementwise, indexing, linalg, losses, movement, reduce, sort, views, windows
    for module in (elementwise, reduce, linalg, movement, views, indexing, windows, losses, sort):
        for name, fn in module.KERNELS.items():
            register_kernel(name, backend_name, _bind(fn, backend_name, registry, name))


def _bind(fn, backend_name, registry, kernel_name="kernel"):
    """The registered kernel: finds the backend object at call time, and turns the runtime's
    errors (validation, a lost device) into a GpuError that names the kernel."""
    instances = registry._backend_instances

    def kernel(*args, **attrs):
        be = instances.get(backend_name) or registry.backend(backend_name)
        try:
            return fn(be, *args, **attrs)
        except be.device.errors() as e:
            lost = " (the GPU device was lost: restart the process to get a new one)" if "lost" in str(e) else ""
            raise GpuError(f"{backend_name}: kernel {kernel_name!r} failed{lost}: {e}") from None
    kernel.__name__ = kernel.__qualname__ = getattr(fn, "__name__", "kernel")
    return kernel


def _native_priority() -> int:
    """Above cpu on a real GPU, below it on a software adapter (lavapipe, SwiftShader)."""
    from .native import NativeDevice
    try:
        return CPU_PRIORITY - 1 if NativeDevice.probe_is_cpu() else CPU_PRIORITY + 1
    except Exception:
        return CPU_PRIORITY - 1


def register_native(priority: int | None = None) -> None:
    """Register the native ``wgpu`` backend (wgpu-py) and its kernels.

    >>> from webgrad.backends.gpu import register_native
    >>> register_native()            # doctest: +SKIP
    """
    def factory():
        from .native import NativeDevice
        return GpuBackend(NativeDevice(), "wgpu")
    register_backend("wgpu", factory, _native_priority if priority is None else priority)
    register_kernels("wgpu")


__all__ = ["GpuArray", "GpuBackend", "GpuError", "register_kernels", "register_native"]
