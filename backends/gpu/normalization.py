"""LayerNorm and LayerNormGrad over rows of the trailing ``ndim`` dims: a workgroup or a thread per
row (see rows.py), then for the weight and bias gradients a workgroup per column (its rows split
over dispatches). Rows too long for one kernel's loops take their statistics from the backend's
(multi-pass) reductions and their values from elementwise maps."""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.dtypes import float32
from webgrad.shapes import reduced_shape

from .elementwise import View, elementwise, fill
from .program import Program, kernel_source
from .reduce import reduction
from .rows import WG, fits, row_groups, row_variant, spans
from .runtime import GpuArray

_SUM = reduction(K.SUM)

_AFFINE = {(False, False): "", (True, False): "* w[k]", (False, True): "+ b[k]", (True, True): "* w[k] + b[k]"}


def _rows(x, ndim):
    n = 1
    for d in x.shape[len(x.shape) - ndim:]:
        n *= d
    return (x.size // n if n else 0), n


def _row_subs(n):
    """The row kernels' substitutions for rows of n (rows.py), with the shared row statistics."""
    return {**row_variant(n), "STATS": kernel_source("layer_norm_stats")}


def layer_norm(be, x, *params, ndim, eps, has_weight, has_bias):
    rows, n = _rows(x, ndim)
    if rows and not fits(n):
        return _long_layer_norm(be, x, params, rows, n, eps, has_weight, has_bias, ndim)
    out = be.alloc(x.shape, x.dtype)
    stat = reduced_shape(x.shape, range(len(x.shape) - ndim, len(x.shape)), keepdim=True)   # PyTorch's
    mean, rstd = be.alloc(stat, float32), be.alloc(stat, float32)
    if rows == 0 or n == 0:
        return out, mean, rstd
    long = _row_subs(n)
    names = [name for name, has in (("w", has_weight), ("b", has_bias)) if has]

    def build():
        return Program(K.LAYER_NORM, "layer_norm", inputs=[("x", "f32")] + [(v, "f32") for v in names],
                       outputs=[("y", "f32"), ("mean_out", "f32"), ("rstd_out", "f32")], wg=WG,
                       uniforms=[("rows", "u32", 1), ("n", "u32", 1), ("eps", "f32", 1)],
                       subs={**long, "AFFINE": _AFFINE[has_weight, has_bias]})
    be.run(("layer_norm", has_weight, has_bias, long["LANES"]), build, [x, *params], [out, mean, rstd],
           [rows, n, eps], row_groups(rows, n))
    return out, mean, rstd


def layer_norm_grad(be, dy, x, mean, rstd, *params, ndim, eps, has_weight, has_bias):
    rows, n = _rows(x, ndim)
    pshape = x.shape[len(x.shape) - ndim:]
    if rows and not fits(n):
        return _long_layer_norm_grad(be, dy, x, mean, rstd, params, rows, n, pshape, has_weight, has_bias)
    dx = be.alloc(x.shape, x.dtype)
    grads = [dx]
    if rows and n:
        long = _row_subs(n)

        def build():
            return Program(K.LAYER_NORM_GRAD, "layer_norm_grad",
                           inputs=[("dy", "f32"), ("x", "f32"), ("mean", "f32"), ("rstd", "f32")]
                           + ([("w", "f32")] if has_weight else []),
                           outputs=[("dx", "f32")], wg=WG, uniforms=[("rows", "u32", 1), ("n", "u32", 1)],
                           subs={**long, "WEIGHT": "* w[k]" if has_weight else ""})
        be.run(("layer_norm_grad", has_weight, long["LANES"]), build, [dy, x, mean, rstd, *params], [dx], [rows, n],
               row_groups(rows, n))
    if has_weight or has_bias:
        if rows and n:
            dweight, dbias = _params_grad(be, dy, x, mean, rstd, rows, n, pshape)
        else:
            dweight = dbias = fill(be, shape=pshape, value=0.0, dtype=x.dtype)
        grads += [dweight] if has_weight else []
        grads += [dbias] if has_bias else []
    return tuple(grads)


def _params_grad(be, dy, x, mean, rstd, rows, n, pshape):
    """(dweight, dbias), a workgroup per column, its rows in spans of dispatches."""
    dweight, dbias = be.alloc(pshape, x.dtype), be.alloc(pshape, x.dtype)

    def build():
        return Program(K.LAYER_NORM_GRAD, "layer_norm_params",
                       inputs=[("dy", "f32"), ("x", "f32"), ("mean", "f32"), ("rstd", "f32")],
                       outputs=[("dweight", "f32"), ("dbias", "f32")], wg=WG,
                       uniforms=[("n", "u32", 1), ("r0", "u32", 1), ("r1", "u32", 1)],
                       subs={"REDUCE": kernel_source("row_reduce")})
    for r0, r1 in spans(rows):
        be.run(("layer_norm_params",), build, [dy, x, mean, rstd], [dweight, dbias], [n, r0, r1], n)
    return dweight, dbias


# ---------------------------------------------------------------- rows too long for a row kernel

def _ew(be, expr, inputs, shape, n=1, eps=0.0):
    """An elementwise map (float32) with ``p0`` = n and ``p1`` = eps."""
    return elementwise(be, K.LAYER_NORM, expr, inputs, shape, float32, params=(float(n), eps))


def _per_row(t):
    """A [rows, 1] statistic read across each row of [rows, n]."""
    return View(t, 0, (1, 0))


def _long_stats(be, x2, n, eps):
    """(centred [rows, n], mean [rows, 1], rstd [rows, 1]) by the reductions: the mean, then the biased
    variance around it."""
    rows = x2.shape[0]
    mean = _ew(be, "x0 / p0", [_SUM(be, x2, axes=(1,), keepdim=True)], (rows, 1), n)
    centred = _ew(be, "x0 - x1", [x2, _per_row(mean)], x2.shape)
    square = _ew(be, "x0 * x0", [centred], x2.shape)
    rstd = _ew(be, "1.0 / sqrt(x0 / p0 + p1)", [_SUM(be, square, axes=(1,), keepdim=True)], (rows, 1), n, eps)
    return centred, mean, rstd


def _as(t, shape):
    return GpuArray(t.storage, tuple(shape), t.dtype)


def _long_layer_norm(be, x, params, rows, n, eps, has_weight, has_bias, ndim):
    centred, mean, rstd = _long_stats(be, _as(x, (rows, n)), n, eps)
    expr = "x0 * x1" + (" * x2" if has_weight else "") + (f" + x{len(params) + 1}" if has_bias else "")
    across = [View(_as(p, (n,)), 0, (0, 1)) for p in params]      # weight and bias read down each column
    y = _ew(be, expr, [centred, _per_row(rstd), *across], (rows, n))
    stat = reduced_shape(x.shape, range(len(x.shape) - ndim, len(x.shape)), keepdim=True)
    return _as(y, x.shape), _as(mean, stat), _as(rstd, stat)


def _long_layer_norm_grad(be, dy, x, mean, rstd, params, rows, n, pshape, has_weight, has_bias):
    """dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dy * weight; dweight and dbias summed down the
    columns, all by the reductions and elementwise maps."""
    d2 = _as(dy, (rows, n))
    mean, rstd = _as(mean, (rows, 1)), _as(rstd, (rows, 1))
    xhat = _ew(be, "(x0 - x1) * x2", [_as(x, (rows, n)), _per_row(mean), _per_row(rstd)], (rows, n))
    g = _ew(be, "x0 * x1", [d2, View(_as(params[0], (n,)), 0, (0, 1))], (rows, n)) if has_weight else d2
    sg = _SUM(be, g, axes=(1,), keepdim=True)
    sgx = _SUM(be, _ew(be, "x0 * x1", [g, xhat], (rows, n)), axes=(1,), keepdim=True)
    t = _ew(be, "x0 - x1 * x2 / p0", [g, xhat, _per_row(sgx)], (rows, n), n)     # (elementwise takes 3 inputs)
    dx = _ew(be, "x2 * (x0 - x1 / p0)", [t, _per_row(sg), _per_row(rstd)], (rows, n), n)
    grads = [_as(dx, x.shape)]
    if has_weight:
        grads.append(_as(_SUM(be, _ew(be, "x0 * x1", [d2, xhat], (rows, n)), axes=(0,), keepdim=False), pshape))
    if has_bias:
        grads.append(_as(_SUM(be, d2, axes=(0,), keepdim=False), pshape))
    return tuple(grads)


KERNELS = {K.LAYER_NORM: layer_norm, K.LAYER_NORM_GRAD: layer_norm_grad}
