"""cpu LayerNorm and its backward over the trailing ``ndim`` dims, as rows of a 2-d view.

Statistics are two-pass ones in the working dtype (float32 for half precision, as PyTorch's cpu
kernel), the variance biased, ``rstd = 1 / sqrt(var + eps)``; the backward recomputes them."""
import numpy as np

from webgrad import kernel_names as K

from .elementwise import _quiet
from .registry import cpu_kernel
from .softmax import _work, row_sum


def _rows(x, ndim):
    """x as [rows, n] in the working dtype, n the size of its trailing ``ndim`` dims."""
    n = 1
    for d in x.shape[x.ndim - ndim:]:
        n *= d
    return _work(x).reshape(-1, n)


def _normalised(x, eps):
    """(x - mean) * rstd per row of the 2-d ``x``, and rstd as a column."""
    n = x.shape[1]
    xc = x - row_sum(x) / n
    var = np.einsum("ij,ij->i", xc, xc)[:, None] / n
    rstd = 1 / np.sqrt(var + eps)
    xc *= rstd
    return xc, rstd


def _params(params, has_weight, has_bias):
    it = iter(params)
    return (next(it) if has_weight else None), (next(it) if has_bias else None)


@cpu_kernel(K.LAYER_NORM)
@_quiet
def layer_norm(x, *params, ndim, eps, has_weight, has_bias):
    """(x - mean) * rstd * weight + bias over the trailing ``ndim`` dims."""
    weight, bias = _params(params, has_weight, has_bias)
    if x.size == 0:
        return x.copy()
    y, _ = _normalised(_rows(x, ndim), eps)
    if weight is not None:
        y *= _work(weight).reshape(-1)
    if bias is not None:
        y += _work(bias).reshape(-1)
    return y.reshape(x.shape).astype(x.dtype, copy=False)


@cpu_kernel(K.LAYER_NORM_GRAD)
@_quiet
def layer_norm_grad(dy, x, *params, ndim, eps, has_weight, has_bias):
    """(dx[, dweight][, dbias]): dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * weight,
    dweight = sum over rows of dy * xhat, dbias = sum over rows of dy."""
    (weight,) = params if has_weight else (None,)
    rows = _rows(x, ndim)
    d = _rows(dy, ndim)
    xhat, rstd = _normalised(rows, eps)
    g = d * _work(weight).reshape(-1) if weight is not None else d
    n = rows.shape[1]
    dx = g - row_sum(g) / n
    dx -= xhat * (np.einsum("ij,ij->i", g, xhat)[:, None] / n)
    dx *= rstd
    out = [dx.reshape(x.shape).astype(x.dtype, copy=False)]
    pshape = x.shape[x.ndim - ndim:]
    if has_weight:
        out.append(np.einsum("ij,ij->j", d, xhat).reshape(pshape).astype(x.dtype, copy=False))
    if has_bias:
        out.append(np.add.reduce(d, axis=0).reshape(pshape).astype(x.dtype, copy=False))
    return tuple(out)
