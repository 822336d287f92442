"""Gradients of the complex-number kernels, and the helpers the other rules use on complex tensors.

PyTorch's convention: the gradient of a real loss L with respect to a complex z = x + iy is
``dL/dx + i dL/dy`` (the conjugate Wirtinger derivative, doubled), so a holomorphic f passes back
``dy * conj(f'(z))`` (mul: ``grad_a = dy * conj(b)``)."""
import math

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


# numpy's name -> f'(z, y) (y = f(z)), PyTorch's formulas (tools/autograd/derivatives.yaml), so the
# branches of the square roots are PyTorch's; the rule passes back dy * conj(f'(z))
_DERIVATIVES = {
    "sinh": lambda z, y: z.cosh(), "cosh": lambda z, y: z.sinh(),
    "arcsin": lambda z, y: (1 - z * z).rsqrt(), "arccos": lambda z, y: -(1 - z * z).rsqrt(),
    "arctan": lambda z, y: (z * z + 1).reciprocal(), "arcsinh": lambda z, y: (z * z + 1).rsqrt(),
    "arccosh": lambda z, y: ((z - 1).sqrt() * (z + 1).sqrt()).reciprocal(),
    "arctanh": lambda z, y: (1 - z * z).reciprocal(),
    "exp2": lambda z, y: y * math.log(2), "sinc": lambda z, y: _sinc_derivative(z),
}


def _sinc_derivative(z):
    """``(pi z cos(pi z) - sin(pi z)) / (pi z^2)``, 0 at z = 0 (PyTorch's sinc_backward)."""
    import webgrad as wg
    zero = z == 0
    z = wg.where(zero, wg.ones_like(z), z)
    scaled = z * math.pi
    return wg.where(zero, wg.zeros_like(z), (scaled * scaled.cos() - scaled.sin()) / (scaled * z))


@register_gradient(K.COMPLEX_MATH, inputs_to_save=True, outputs_to_save=[0])
def _complex_math(dy, saved, attrs):
    return (dy * conj(_DERIVATIVES[attrs["fn"]](*saved)),)
