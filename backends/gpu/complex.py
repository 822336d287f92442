"""The complex-number kernels on the GPU backends: refused. WGSL has no complex type and webgrad's GPU
backends hold no complex dtypes (a complex64 upload or cast raises the same TypeError): these kernels
say so, and what to do, where a real input would otherwise make a complex result (``complex``,
``polar``, ``view_as_complex``) or a complex one reach them."""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.dtypes import complex64


def _refuse(name: str):
    def kernel(be, *arrays, **attrs):
        try:
            be._check_dtype(complex64)
        except TypeError as e:   # (always: the backend's TypeError for complex dtypes, naming the kernel)
            raise TypeError(f"kernel {name!r}: {e}") from None
        raise AssertionError(f"{be.name} holds complex64")   # pragma: no cover - cannot happen
    kernel.__name__ = f"refuse_{name}"
    return kernel


KERNELS = {name: _refuse(name) for name in (K.COMPLEX, K.REAL, K.IMAG, K.CONJ, K.COMPLEX_MATH)}
