"""Gradients of the fused activation kernels. Each forward's rule calls its fused backward kernel
(Softmax -> SoftmaxGrad, ...); each backward kernel's rule is written with ops, so gradients of
any order exist."""
import math

from .. import kernel_names as K
from ..engine import run_kernel
from ..registry import register_gradient


@register_gradient(K.SOFTMAX, outputs_to_save=[0])
def _softmax(dy, saved, attrs):
    return (run_kernel(K.SOFTMAX_GRAD, dy, saved[0], axis=attrs["axis"]),)


@register_gradient(K.LOG_SOFTMAX, outputs_to_save=[0])
def _log_softmax(dy, saved, attrs):
    return (run_kernel(K.LOG_SOFTMAX_GRAD, dy, saved[0], axis=attrs["axis"]),)


@register_gradient(K.SOFTMAX_GRAD, inputs_to_save=True)
def _softmax_grad(u, saved, attrs):
    """SoftmaxGrad(dy, y) = y * (dy - <dy, y>) is linear in dy with a symmetric map, so its gradient
    for dy is SoftmaxGrad(u, y); for y: u * (dy - <dy, y>) - <u, y> dy (<.,.> summed along the axis)."""
    dy, y = saved
    axis = attrs["axis"]
    d_dy = run_kernel(K.SOFTMAX_GRAD, u, y, axis=axis)
    d_y = u * (dy - (dy * y).sum(axis, keepdim=True)) - (u * y).sum(axis, keepdim=True) * dy
    return d_dy, d_y


@register_gradient(K.LOG_SOFTMAX_GRAD, inputs_to_save=True)
def _log_softmax_grad(u, saved, attrs):
    """LogSoftmaxGrad(dy, y) = dy - exp(y) * sum(dy): for dy, u - sum(u * exp(y)); for y, -u exp(y) sum(dy)."""
    dy, y = saved
    axis = attrs["axis"]
    e = y.exp()
    return u - (u * e).sum(axis, keepdim=True), -u * e * dy.sum(axis, keepdim=True)


@register_gradient(K.GELU, inputs_to_save=True, output_values=[0])
def _gelu(dy, saved, attrs):
    """GeluGrad(dy, x, gelu(x)): the result is kept as a value, for a backend to read Phi(x) off it
    (PyTorch keeps only x, so an in-place change of the result must not stop this backward)."""
    x, y = saved
    return (run_kernel(K.GELU_GRAD, dy, x, y, approximate=attrs["approximate"]),)


_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_BETA, _KAPPA = math.sqrt(2 / math.pi), 0.044715


def _gelu_second(x, approximate):
    """gelu''(x): phi(x) (2 - x^2) for the exact form; for the tanh form, with t = tanh(beta (x + kappa x^3))
    and a = beta (1 + 3 kappa x^2): (1 - t^2) (a - x t a^2 + 3 beta kappa x^2)."""
    x2 = x * x
    if approximate == "tanh":
        t = (_BETA * (x + _KAPPA * x2 * x)).tanh()
        a = _BETA * (1 + 3 * _KAPPA * x2)
        return (1 - t * t) * (a - x * t * a * a + 3 * _BETA * _KAPPA * x2)
    return (-0.5 * x2).exp() * _INV_SQRT_2PI * (2 - x2)


@register_gradient(K.GELU_GRAD, inputs_to_save=True)
def _gelu_grad(u, saved, attrs):
    """GeluGrad(dy, x, y) = dy * gelu'(x), y = gelu(x) a copy of what x determines: for dy,
    GeluGrad(u, x, y); for x, u * dy * gelu''(x) (through y too); none for y itself."""
    dy, x, y = saved
    approximate = attrs["approximate"]
    return (run_kernel(K.GELU_GRAD, u, x, y, approximate=approximate), u * dy * _gelu_second(x, approximate),
            None)
