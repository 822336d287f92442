"""Gradients of the special-function kernels (PyTorch's derivative formulas), written with ops."""
import math

from .. import kernel_names as K
from ..engine import run_kernel
from ..registry import register_gradient
from .unary import _IN, _OUT, _rule

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

_rule(K.ERFC, _IN)(lambda dy, x: dy * -_TWO_OVER_SQRT_PI * (-x * x).exp())
_rule(K.ERFINV, outputs=_OUT)(lambda dy, y: dy * (math.sqrt(math.pi) / 2) * (y * y).exp())


@_rule(K.ERFCX, _IN, outputs=_OUT)
def _erfcx(dy, x, y):
    return dy * (2 * x * y - _TWO_OVER_SQRT_PI)
_rule(K.NDTRI, outputs=_OUT)(lambda dy, y: dy * math.sqrt(2 * math.pi) * (y * y / 2).exp())


def _polygamma(x, n):
    return run_kernel(K.POLYGAMMA, x, n=n)


_rule(K.LGAMMA, _IN)(lambda dy, x: dy * _polygamma(x, 0))
_rule(K.DIGAMMA, _IN)(lambda dy, x: dy * _polygamma(x, 1))


@register_gradient(K.POLYGAMMA, inputs_to_save=True)
def _polygamma_rule(dy, saved, attrs):
    return (dy * _polygamma(saved[0], attrs["n"] + 1),)


@register_gradient(K.ZETA, inputs_to_save=True)
def _zeta(dy, saved, attrs):
    """PyTorch's: no derivative in x (it raises, as PyTorch's NotImplementedError); -x zeta(x + 1, q) in q."""
    x, q = saved
    if saved.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'zeta' is not implemented (with respect to its first "
                                  "argument, x; PyTorch has none either): detach x")
    return None, dy * -x * run_kernel(K.ZETA, x + 1, q)


@_rule(K.BESSEL_I0E, _IN, outputs=_OUT)
def _i0e(dy, x, y):
    return dy * (run_kernel(K.BESSEL_I1E, x) - x.sign() * y)


@_rule(K.BESSEL_I1E, _IN, outputs=_OUT)
def _i1e(dy, x, y):
    """PyTorch's: i0e(x) - i1e(x) (sign(x) + 1 / x), 1/2 at 0."""
    zero = x == 0
    safe = zero.logical_not() * x + zero   # 1 where x is 0: no 1 / 0 in the value or its gradient
    slope = run_kernel(K.BESSEL_I0E, x) - y * (x.sign() + 1 / safe)
    return dy * slope.masked_fill(zero, 0.5)


@register_gradient(K.COPYSIGN, inputs_to_save=[0], outputs_to_save=[0])
def _copysign(dy, saved, attrs):
    """PyTorch's: result / a where a is nonzero, else 0, for a; zeros for b (only its sign matters)."""
    a, y = saved
    zero = a == 0
    return dy * (y / (a + zero)).masked_fill(zero, 0.0), dy * 0


register_gradient(K.NEXTAFTER, lambda dy, saved, attrs: (dy, dy * 0))   # PyTorch's: the step counts as the identity
register_gradient(K.FREXP, lambda dy, saved, attrs: (dy[0] / saved[0].to(dy[0].dtype).exp2(),),
                  outputs_to_save=[1], non_differentiable=[1])


def _igamma_rule(sign, name):
    def rule(dy, saved, attrs):
        """PyTorch's: no derivative in a (NotImplementedError, as PyTorch's); +- x^(a-1) e^-x / Gamma(a) in x."""
        a, x = saved
        if saved.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented (with respect to a, "
                                      f"its first argument; PyTorch has none either): detach it")
        density = ((a - 1) * x.log() - x - run_kernel(K.LGAMMA, a)).exp()
        return None, dy * density * sign
    return rule


register_gradient(K.IGAMMA, _igamma_rule(1.0, "igamma"), inputs_to_save=True)
register_gradient(K.IGAMMAC, _igamma_rule(-1.0, "igammac"), inputs_to_save=True)
