"""The WebGPU backend (shared by the native ``wgpu`` device and the browser ``webgpu`` device).

``register_native()`` makes the ``wgpu`` backend (wgpu-py) available; its priority is above
``cpu`` only on a real GPU adapter. Nothing here loads wgpu-native until the backend starts or a
default backend is chosen on a machine where GPU hardware is reachable (``host``).
"""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.registry import register_backend, register_kernel

from .device import GpuError, GpuLimitError, device_failure, is_lost
from .half import in_float32
from .host import hardware_gpu_possible
from .runtime import GpuArray, GpuBackend

CPU_PRIORITY = 0
# kernels that only copy elements run on float16 storage as it is; the rest compute float16 in float32
# (see half.py), as the elementwise kernels do in their shader
HALF_COPIES = (K.GATHER, K.IM2COL, K.INDEX_COPY)


def register_kernels(backend_name: str) -> None:
    """Register every WGSL kernel for the GPU backend called ``backend_name``."""
    from webgrad import registry

    from . import (activations, attention, complex, elementwise, factorizations, index_copy, indexing, linalg, losses,
                   movement, nonzero, normalization, optim, reduce, sort, special, spectral, views, windows)
    native_half = {*elementwise.KERNELS, *movement.KERNELS, *views.KERNELS, *HALF_COPIES}
    for module in (elementwise, reduce, linalg, movement, views, indexing, windows, losses, sort, nonzero, index_copy,
                   activations, normalization, attention, optim, factorizations, spectral, special, complex):
        for name, fn in module.KERNELS.items():
            fn = fn if name in native_half else in_float32(fn, name)
            register_kernel(name, backend_name, _bind(fn, backend_name, registry, name))


def _bind(fn, backend_name, registry, kernel_name="kernel"):
    """The registered kernel: finds the backend object at call time, and turns the runtime's
    errors (validation, a lost device) into a GpuError, and a size beyond the device's limits
    into a GpuLimitError, that name the kernel."""
    instances = registry._backend_instances

    def kernel(*args, **attrs):
        be = instances.get(backend_name) or registry.backend(backend_name)
        try:
            return fn(be, *args, **attrs)
        except be.device.errors() as e:
            raise device_failure(f"{backend_name}: kernel {kernel_name!r}", e) from None
        except GpuLimitError as e:   # a uniform too large for 32 bits: the output's size says why, when it is that
            why = "shape" in attrs and be.oversize(attrs["shape"]) or e
            raise GpuLimitError(f"{backend_name}: kernel {kernel_name!r}{_operands(args)}: {why}") from None
        except GpuError as e:
            if not is_lost(e) or not hasattr(e, "runtime_error"):
                raise
            raise device_failure(f"{backend_name}: kernel {kernel_name!r}", e) from None  # e.g. in its upload
    kernel.__name__ = kernel.__qualname__ = getattr(fn, "__name__", "kernel")
    return kernel


def _operands(args) -> str:
    """`` on float32 (2, 3), int32 (4,)``: the shapes of a kernel's arrays, for errors."""
    shapes = [f"{a.dtype.name} {a.shape}" for a in args if isinstance(a, GpuArray)]
    return f" on {', '.join(shapes)}" if shapes else ""


def _native_priority() -> int:
    """Above cpu on a real GPU, below it on a software adapter (lavapipe, SwiftShader), without
    asking wgpu where no GPU hardware is reachable, and below it where wgpu-py is missing or fails."""
    if not hardware_gpu_possible():
        return CPU_PRIORITY - 1
    try:
        from .native import NativeDevice
        return CPU_PRIORITY - 1 if NativeDevice.probe_is_cpu() else CPU_PRIORITY + 1
    except Exception:   # wgpu-py missing or its driver failing: the backend may still be asked for by name
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


__all__ = ["GpuArray", "GpuBackend", "GpuError", "GpuLimitError", "register_kernels", "register_native"]
