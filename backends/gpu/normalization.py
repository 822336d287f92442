"""LayerNorm and LayerNormGrad over rows of the trailing ``ndim`` dims: a workgroup or a thread per
row (see rows.py), then for the weight and bias gradients a workgroup per column."""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.dtypes import float32

from .elementwise import fill
from .program import Program, kernel_source
from .rows import WG, row_groups, row_variant

_AFFINE = {(False, False): "", (True, False): "* w[k]", (False, True): "+ b[k]", (True, True): "* w[k] + b[k]"}


def _rows(x, ndim):
    n = 1
    for d in x.shape[len(x.shape) - ndim:]:
        n *= d
    return (x.size // n if n else 0), n


def layer_norm(be, x, *params, ndim, eps, has_weight, has_bias):
    out = be.alloc(x.shape, x.dtype)
    rows, n = _rows(x, ndim)
    if rows == 0 or n == 0:
        return out
    long = row_variant(n)
    names = [name for name, has in (("w", has_weight), ("b", has_bias)) if has]

    def build():
        return Program(K.LAYER_NORM, "layer_norm", inputs=[("x", "f32")] + [(v, "f32") for v in names],
                       outputs=[("y", "f32")], wg=WG, uniforms=[("rows", "u32", 1), ("n", "u32", 1), ("eps", "f32", 1)],
                       subs={**long, "AFFINE": _AFFINE[has_weight, has_bias]})
    be.run(("layer_norm", has_weight, has_bias, long["LANES"]), build, [x, *params], [out], [rows, n, eps],
           row_groups(rows, n))
    return out


def layer_norm_grad(be, dy, x, *params, ndim, eps, has_weight, has_bias):
    dx = be.alloc(x.shape, x.dtype)
    rows, n = _rows(x, ndim)
    pshape = x.shape[len(x.shape) - ndim:]
    grads = [dx]
    if rows and n:
        stats = be.alloc((rows, 2), float32)
        long = row_variant(n)

        def build():
            return Program(K.LAYER_NORM_GRAD, "layer_norm_grad",
                           inputs=[("dy", "f32"), ("x", "f32")] + ([("w", "f32")] if has_weight else []),
                           outputs=[("dx", "f32"), ("stats", "f32")], wg=WG,
                           uniforms=[("rows", "u32", 1), ("n", "u32", 1), ("eps", "f32", 1)],
                           subs={**long, "WEIGHT": "* w[k]" if has_weight else ""})
        be.run(("layer_norm_grad", has_weight, long["LANES"]), build, [dy, x, *params], [dx, stats], [rows, n, eps],
               row_groups(rows, n))
    if has_weight or has_bias:
        if rows and n:
            dweight, dbias = _params_grad(be, dy, x, stats, rows, n, pshape)
        else:
            dweight = dbias = fill(be, shape=pshape, value=0.0, dtype=x.dtype)
        grads += [dweight] if has_weight else []
        grads += [dbias] if has_bias else []
    return tuple(grads)


def _params_grad(be, dy, x, stats, rows, n, pshape):
    """(dweight, dbias), a workgroup per column."""
    dweight, dbias = be.alloc(pshape, x.dtype), be.alloc(pshape, x.dtype)

    def build():
        return Program(K.LAYER_NORM_GRAD, "layer_norm_params", inputs=[("dy", "f32"), ("x", "f32"), ("stats", "f32")],
                       outputs=[("dweight", "f32"), ("dbias", "f32")], wg=WG,
                       uniforms=[("rows", "u32", 1), ("n", "u32", 1)], subs={"REDUCE": kernel_source("row_reduce")})
    be.run(("layer_norm_params",), build, [dy, x, stats], [dweight, dbias], [rows, n], n)
    return dweight, dbias


KERNELS = {K.LAYER_NORM: layer_norm, K.LAYER_NORM_GRAD: layer_norm_grad}
