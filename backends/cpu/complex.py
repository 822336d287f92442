"""cpu kernels of complex numbers: numpy's complex64/complex128 (a float32/float64 pair each)."""
import numpy as np

from webgrad import kernel_names as K

from .registry import register_table


def _complex(real, imag):
    """``real + 1j * imag`` (one float dtype) in the matching complex dtype, broadcasting."""
    out = np.empty(np.broadcast_shapes(real.shape, imag.shape), np.result_type(real.dtype, np.complex64))
    out.real, out.imag = real, imag
    return out


def _part(which):
    return lambda z: np.ascontiguousarray(getattr(np.asarray(z), which))


def _math(z, *, fn):
    """numpy's complex ``fn`` (one of COMPLEX_FUNCTIONS, which the op checked), in z's dtype."""
    return getattr(np, fn)(np.asarray(z))


register_table({
    K.COMPLEX_MATH: _math,
    K.COMPLEX: _complex,
    K.REAL: _part("real"),
    K.IMAG: _part("imag"),
    K.CONJ: lambda z: np.conjugate(np.asarray(z)),
})
