"""cpu LayerNorm and its backward over the trailing ``ndim`` dims, as rows of a 2-d view.

Statistics are two-pass ones in the working dtype (float32 for half precision, as PyTorch's cpu
kernel), the variance biased, ``rstd = 1 / sqrt(var + eps)``. As PyTorch's ``native_layer_norm``, the
forward also returns each row's mean and rstd, which the backward takes instead of recomputing them."""
import numpy as np

from webgrad import kernel_names as K
from webgrad.shapes import reduced_shape

from .elementwise import _quiet
from .registry import cpu_kernel
from .softmax import _work, row_sum


def _rows(x, ndim):
    """x as [rows, n] in the working dtype, n the size of its trailing ``ndim`` dims."""
    n = 1
    for d in x.shape[x.ndim - ndim:]:
        n *= d
    return _work(x).reshape(-1, n)


def _stats(x, eps):
    """(mean, rstd) of each row of the 2-d ``x``, as columns: two-pass, the variance biased."""
    n = x.shape[1]
    mean = row_sum(x) / n
    xc = x - mean
    var = np.einsum("ij,ij->i", xc, xc)[:, None] / n
    return mean, 1 / np.sqrt(var + eps), xc


def _params(params, has_weight, has_bias):
    it = iter(params)
    return (next(it) if has_weight else None), (next(it) if has_bias else None)


def _stat_shape(x, ndim):
    """mean's and rstd's shape: x's with its trailing ``ndim`` dims of size 1 (PyTorch's)."""
    return reduced_shape(x.shape, range(x.ndim - ndim, x.ndim), keepdim=True)


@cpu_kernel(K.LAYER_NORM)
@_quiet
def layer_norm(x, *params, ndim, eps, has_weight, has_bias):
    """((x - mean) * rstd * weight + bias, mean, rstd) over the trailing ``ndim`` dims."""
    weight, bias = _params(params, has_weight, has_bias)
    if x.size == 0:
        empty = np.zeros(_stat_shape(x, ndim), _work(x).dtype)
        return x.copy(), empty, empty.copy()
    mean, rstd, y = _stats(_rows(x, ndim), eps)
    y *= rstd
    if weight is not None:
        y *= _work(weight).reshape(-1)
    if bias is not None:
        y += _work(bias).reshape(-1)
    shape = _stat_shape(x, ndim)
    return y.reshape(x.shape).astype(x.dtype, copy=False), mean.reshape(shape), rstd.reshape(shape)


@cpu_kernel(K.LAYER_NORM_GRAD)
@_quiet
def layer_norm_grad(dy, x, mean, rstd, *params, ndim, eps, has_weight, has_bias):
    """(dx[, dweight][, dbias]) from the forward's mean and rstd: dx = rstd * (g - mean(g) - xhat *
    mean(g * xhat)) with g = dy * weight, dweight = sum over rows of dy * xhat, dbias = sum over rows of dy."""
    (weight,) = params if has_weight else (None,)
    rows = _rows(x, ndim)
    d = _rows(dy, ndim)
    n = rows.shape[1]
    rstd = rstd.reshape(-1, 1)
    xhat = rows - mean.reshape(-1, 1)
    xhat *= rstd
    g = d * _work(weight).reshape(-1) if weight is not None else d
    dx = g - row_sum(g) / n
    dx -= xhat * (np.einsum("ij,ij->i", g, xhat)[:, None] / n)
    dx *= rstd
    out = [dx.reshape(x.shape).astype(x.dtype, copy=False)]
    pshape = x.shape[x.ndim - ndim:]
    if has_weight:
        out.append(np.einsum("ij,ij->j", d, xhat).reshape(pshape).astype(x.dtype, copy=False))
    if has_bias:
        out.append(np.matmul(np.ones(len(d), d.dtype), d).reshape(pshape).astype(x.dtype, copy=False))
    return tuple(out)
