"""Gradients of the complex-number kernels, and the helpers the other rules use on complex tensors.

PyTorch's convention: the gradient of a real loss L with respect to a complex z = x + iy is
``dL/dx + i dL/dy`` (the conjugate Wirtinger derivative, doubled), so a holomorphic f passes back
``dy * conj(f'(z))`` (mul: ``grad_a = dy * conj(b)``)."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..registry import register_gradient


def conj(t):
    """``t``'s complex conjugate; ``t`` itself when real."""
    return run_kernel(K.CONJ, t) if t._dtype.is_complex else t


def _zeros(t):
    return run_kernel(K.FILL, backend=t._backend, shape=tuple(t._data.shape), value=0, dtype=t._dtype)


@register_gradient(K.COMPLEX)
def _complex(dy, saved, attrs):
    return run_kernel(K.REAL, dy), run_kernel(K.IMAG, dy)


@register_gradient(K.REAL)
def _real(dy, saved, attrs):
    return (run_kernel(K.COMPLEX, dy, _zeros(dy)),)


@register_gradient(K.IMAG)
def _imag(dy, saved, attrs):
    return (run_kernel(K.COMPLEX, _zeros(dy), dy),)


register_gradient(K.CONJ, lambda dy, saved, attrs: (run_kernel(K.CONJ, dy),))
