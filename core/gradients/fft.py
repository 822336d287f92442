"""Gradients of the FFT kernels, PyTorch's (``FunctionsManual.cpp``) in its conjugate convention: each
transform is linear, so an input's gradient is the adjoint transform of ``dy``.

- ``FftC2C``: the same transform in the other direction, with the same scale.
- ``FftR2C``: ``dy`` zero-padded back to the whole last dim when one-sided, transformed back, its real part.
- ``FftC2R``: the one-sided forward transform of ``dy``, with the bins whose mirror images the forward pass
  filled in (1 .. n - (n // 2 + 1) of the last dim) counted twice."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..ops import binary, creation, movement
from ..ops.fft import c2c, c2r, r2c
from ..registry import register_gradient


@register_gradient(K.FFT_C2C)
def _c2c(dy, saved, attrs):
    return (c2c(dy, attrs["dims"], attrs["norm"], not attrs["forward"]),)


@register_gradient(K.FFT_R2C)
def _r2c(dy, saved, attrs):
    dims = attrs["dims"]
    last = dims[-1]
    missing = saved.shapes[0][last] - dy.shape[last]
    if attrs["onesided"] and missing > 0:
        dy = movement.pad(dy, [0, 0] * (dy.ndim - 1 - last) + [0, missing])
    return (run_kernel(K.REAL, c2c(dy, dims, attrs["norm"], False)),)


@register_gradient(K.FFT_C2R)
def _c2r(dy, saved, attrs):
    dims = attrs["dims"]
    last = dims[-1]
    g = r2c(dy, dims, attrs["norm"], True)
    doubled = dy.shape[last] - g.shape[last]
    if doubled <= 0:
        return (g,)
    k = creation.arange(g.shape[last], dtype=dy.dtype, device=dy.device)
    twice = binary.where((k >= 1) & (k <= doubled), 2.0, 1.0).to(dy.dtype)
    return (g * movement.reshape(twice, (-1,) + (1,) * (dy.ndim - 1 - last)),)
