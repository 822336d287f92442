"""Gradients of the unary kernels, written with ops or kernels (so they are differentiable again)."""
import math

from .. import kernel_names as K
from ..engine import run_kernel
from ..ops.common import scalar_tensor
from ..registry import register_gradient
from ..ops.complex import sgn
from ..dtypes import bfloat16
from ..ops.opmath import opmath
from .complex import conj


def _ops():
    import webgrad as wg
    return wg


def _rule(name, inputs=(), outputs=(), kernel=None):
    """Register ``fn(dy, x_or_y)`` for a one-input kernel that saves one tensor (its input or its output).
    On complex tensors the rule gives PyTorch's ``dy * conj(f'(z))`` (these functions are holomorphic and
    ``fn`` is linear in ``dy``: that is ``conj(fn(conj(dy), z))``)."""
    def deco(fn):
        def rule(dy, saved, attrs):
            if dy._dtype.is_complex:
                return (conj(fn(conj(dy), *saved)),)
            return (fn(dy, *saved),)
        register_gradient(name, rule, inputs_to_save=inputs, outputs_to_save=outputs, kernel=kernel)
        return fn
    return deco


_IN, _OUT = True, [0]   # (True: every input, here the one)

register_gradient(K.NEG, lambda dy, saved, attrs: (run_kernel(K.NEG, dy),), kernel=K.NEG_GRAD)
register_gradient(K.IDENTITY, lambda dy, saved, attrs: (dy,))
register_gradient(K.ABS, lambda dy, saved, attrs: (dy * sgn(saved[0]),), inputs_to_save=True)


# the hottest rules call kernels directly (dy and the saved tensor share a dtype and shape)

@register_gradient(K.EXP, outputs_to_save=_OUT, kernel=K.EXP_GRAD)
def _exp(dy, saved, attrs):
    return (run_kernel(K.MUL, dy, conj(saved[0])),)


# PyTorch's tanh, silu, elu and softplus backward kernels (and bfloat16's sigmoid) compute half precision in
# float32 and round once (opmath); its other rules are compositions, rounding per step in the half dtype, as
# these do

@register_gradient(K.TANH, outputs_to_save=_OUT, kernel=K.TANH_GRAD)
def _tanh(dy, saved, attrs):
    return (_tanh_grad(dy, conj(saved[0])),)


@opmath
def _tanh_grad(dy, y):
    one = scalar_tensor(1, y._dtype, y._backend)
    return run_kernel(K.MUL, dy, run_kernel(K.SUB, one, run_kernel(K.MUL, y, y)))


@register_gradient(K.SIGMOID, outputs_to_save=_OUT, kernel=K.SIGMOID_GRAD)
def _sigmoid(dy, saved, attrs):
    return (_sigmoid_grad(dy, saved[0]),)


@opmath(dtypes=(bfloat16,))   # PyTorch's float16 sigmoid backward rounds each step, in this order
def _sigmoid_grad(dy, y):
    one = scalar_tensor(1, y._dtype, y._backend)
    return run_kernel(K.MUL, run_kernel(K.MUL, dy, run_kernel(K.SUB, one, y)), y)


@register_gradient(K.RELU, outputs_to_save=_OUT, kernel=K.RELU_GRAD)
def _relu(dy, saved, attrs):
    (y,) = saved
    zero = scalar_tensor(0, y._dtype, y._backend)   # dy passes at NaN, as PyTorch's threshold_backward
    return (run_kernel(K.WHERE, run_kernel(K.LESS_EQUAL, y, zero), zero, dy),)


_rule(K.LOG, _IN, kernel=K.LOG_GRAD)(lambda dy, x: dy / x)
_rule(K.LOG2, _IN)(lambda dy, x: dy / (x * math.log(2)))
_rule(K.LOG10, _IN)(lambda dy, x: dy / (x * math.log(10)))
_rule(K.LOG1P, _IN)(lambda dy, x: dy / (x + 1))
_rule(K.EXPM1, outputs=_OUT)(lambda dy, y: dy * (y + 1))
_rule(K.SQRT, outputs=_OUT)(lambda dy, y: dy * 0.5 / y)
_rule(K.RSQRT, outputs=_OUT)(lambda dy, y: dy * -0.5 * y * y * y)
_rule(K.SQUARE, _IN)(lambda dy, x: dy * 2 * x)
_rule(K.RECIPROCAL, outputs=_OUT)(lambda dy, y: -dy * y * y)
_rule(K.SIN, _IN)(lambda dy, x: dy * x.cos())
_rule(K.COS, _IN)(lambda dy, x: -dy * x.sin())
_rule(K.TAN, outputs=_OUT)(lambda dy, y: dy * (1 + y * y))
_rule(K.ERF, _IN)(lambda dy, x: dy * (2 / math.sqrt(math.pi)) * (-x * x).exp())


@_rule(K.SILU, _IN)
@opmath
def _silu(dy, x):
    s = x.sigmoid()
    return dy * s * (1 + x * (1 - s))


def _zeros(dy, saved, attrs):
    return (_ops().zeros_like(dy),)


for _k in (K.SIGN, K.FLOOR, K.CEIL, K.ROUND):
    register_gradient(_k, _zeros)


@register_gradient(K.LEAKY_RELU, inputs_to_save=True)
def _leaky_relu(dy, saved, attrs):
    (x,) = saved
    return (_ops().where(x > 0, dy, dy * attrs["negative_slope"]),)


@register_gradient(K.ELU, inputs_to_save=[0])
def _elu(dy, saved, attrs):
    """PyTorch's rule from the input (not the output, which may then change in place): dy * alpha * exp(x)."""
    return (_elu_grad(dy, saved[0], attrs["alpha"]),)


@opmath
def _elu_grad(dy, x, alpha):
    return _ops().where(x > 0, dy, dy * alpha * _ops().exp(x))


@register_gradient(K.SOFTPLUS, inputs_to_save=True)
def _softplus(dy, saved, attrs):
    return (_softplus_grad(dy, saved[0], attrs["beta"], attrs["threshold"]),)


@opmath
def _softplus_grad(dy, x, beta, threshold):
    bx = x * beta
    return _ops().where(bx > threshold, dy, dy * bx.sigmoid())


@register_gradient(K.CLAMP, inputs_to_save=True)
def _clamp(dy, saved, attrs):
    (x,) = saved
    lo, hi = attrs["min"], attrs["max"]
    inside = None
    for ok in ((x >= lo) if lo is not None else None, (x <= hi) if hi is not None else None):
        if ok is not None:
            inside = ok if inside is None else inside & ok
    return (_ops().where(inside, dy, 0.0),)


@register_gradient(K.CAST, kernel=K.CAST_GRAD)
def _cast(dy, saved, attrs):
    dtype = saved.dtypes[0]   # (complex to real: the real part, without the op's warning, as PyTorch's engine)
    return (run_kernel(K.CAST, dy, dtype=dtype) if dtype.differentiable else None,)
