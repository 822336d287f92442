"""Activations: the elementwise ones are webgrad's own ops, re-exported under torch's names;
softmax and log_softmax run one fused kernel each (``Softmax``/``LogSoftmax``, whose gradients
are the fused ``SoftmaxGrad``/``LogSoftmaxGrad``: core/gradients/activations.py)."""
from __future__ import annotations

import warnings

from ... import kernel_names as K
from ...dtypes import to_dtype
from ...engine import run_kernel
from ...ops import unary
from ...ops.binary import inplace as _write
from ...ops.common import check_tensor
from ...ops.unary import gelu, sigmoid, softplus, tanh  # noqa: F401
from ...shapes import normalize_axis


def _maybe_inplace(op: str, fn, input, inplace: bool, *args):
    """``fn(input, *args)``, written into ``input`` when ``inplace`` (PyTorch's ``inplace=True``)."""
    if inplace:
        return _write(check_tensor(op, input), op + "_", fn, *args)
    return fn(input, *args)


def relu(input, inplace=False):
    """``max(input, 0)``; ``inplace=True`` writes the result into ``input``.

    >>> import webgrad as wg
    >>> relu(wg.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _maybe_inplace("relu", unary.relu, input, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where positive, else ``negative_slope * input``; ``inplace=True`` writes into ``input``.

    >>> import webgrad as wg
    >>> leaky_relu(wg.tensor([-1.0, 2.0]), 0.5).tolist()
    [-0.5, 2.0]
    """
    return _maybe_inplace("leaky_relu", unary.leaky_relu, input, inplace, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    """``input`` where positive, else ``alpha * (exp(input) - 1)``; ``inplace=True`` writes into ``input``.

    >>> import webgrad as wg
    >>> elu(wg.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _maybe_inplace("elu", unary.elu, input, inplace, alpha)


def silu(input, inplace=False):
    """``input * sigmoid(input)``; ``inplace=True`` writes into ``input``.

    >>> import webgrad as wg
    >>> silu(wg.tensor([0.0])).tolist()
    [0.0]
    """
    return _maybe_inplace("silu", unary.silu, input, inplace)


def relu_(input):
    """In-place ``relu``."""
    return relu(input, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu_(input, alpha=1.0):
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def implicit_dim(op: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's legacy choice when ``op`` gets no ``dim`` (old scripts' ``F.log_softmax(x)``): 0 for
    0-, 1- and 3-d inputs, else 1, with its deprecation warning."""
    warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call to include dim=X "
                  f"as an argument.", UserWarning, stacklevel=stacklevel + 1)
    return 0 if ndim in (0, 1, 3) else 1


def _along(op, kernel, input, dim, dtype, stacklevel):
    """``kernel`` along ``dim`` of ``input`` (first cast to ``dtype``; an integer input becomes float32)."""
    check_tensor(op, input)
    if dim is None:
        dim = implicit_dim(op, input.ndim, stacklevel + 1)
    dim = normalize_axis(dim, input.ndim, op)
    x = input if dtype is None else input.to(to_dtype(dtype))
    if not x.dtype.is_floating:
        x = unary._real(op, x).to("float32")
    if x.ndim == 0:                               # a 0-d tensor is one row of one element
        return run_kernel(kernel, x.reshape(1), axis=0).reshape(())
    return run_kernel(kernel, x, axis=dim)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / exp(x).sum(dim), computed stably (shifted by the row's max) in one kernel.

    >>> import webgrad as wg
    >>> softmax(wg.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    return _along("softmax", K.SOFTMAX, input, dim, dtype, _stacklevel)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x, dim)), computed stably as z - log(exp(z).sum(dim)) with z = x - max(x), in one kernel.

    >>> import webgrad as wg
    >>> round(log_softmax(wg.tensor([0.0, 0.0]), dim=0)[0].item(), 4)
    -0.6931
    """
    return _along("log_softmax", K.LOG_SOFTMAX, input, dim, dtype, _stacklevel)


__all__ = ["relu", "leaky_relu", "elu", "gelu", "silu", "softplus", "sigmoid", "tanh", "softmax", "log_softmax",
           "relu_", "leaky_relu_", "elu_"]
