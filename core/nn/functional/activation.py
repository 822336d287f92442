"""Activations: the elementwise ones are webgrad's own ops, re-exported under torch's names;
softmax and log_softmax run one fused kernel each (``Softmax``/``LogSoftmax``, whose gradients
are the fused ``SoftmaxGrad``/``LogSoftmaxGrad``: core/gradients/activations.py)."""
from __future__ import annotations

from ... import kernel_names as K
from ...dtypes import to_dtype
from ...engine import run_kernel
from ...ops.common import check_tensor
from ...ops.unary import elu, gelu, leaky_relu, relu, sigmoid, silu, softplus, tanh  # noqa: F401
from ...shapes import normalize_axis


def _along(op, kernel, input, dim, dtype):
    """``kernel`` along ``dim`` of ``input`` (first cast to ``dtype``; an integer input becomes float32)."""
    check_tensor(op, input)
    if dim is None:
        raise TypeError(f"{op}: pass the dimension to normalise over, e.g. {op}(x, dim=-1)")
    dim = normalize_axis(dim, input.ndim, op)
    x = input if dtype is None else input.to(to_dtype(dtype))
    if not x.dtype.is_floating:
        x = x.to("float32")
    if x.ndim == 0:                               # a 0-d tensor is one row of one element
        return run_kernel(kernel, x.reshape(1), axis=0).reshape(())
    return run_kernel(kernel, x, axis=dim)


def softmax(input, dim=None, dtype=None):
    """exp(x) / exp(x).sum(dim), computed stably (shifted by the row's max) in one kernel.

    >>> import webgrad as wg
    >>> softmax(wg.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    return _along("softmax", K.SOFTMAX, input, dim, dtype)


def log_softmax(input, dim=None, dtype=None):
    """log(softmax(x, dim)), computed stably as z - log(exp(z).sum(dim)) with z = x - max(x), in one kernel.

    >>> import webgrad as wg
    >>> round(log_softmax(wg.tensor([0.0, 0.0]), dim=0)[0].item(), 4)
    -0.6931
    """
    return _along("log_softmax", K.LOG_SOFTMAX, input, dim, dtype)


__all__ = ["relu", "leaky_relu", "elu", "gelu", "silu", "softplus", "sigmoid", "tanh", "softmax", "log_softmax"]
