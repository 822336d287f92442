"""Gradients of LayerNorm (its fused backward kernel, LayerNormGrad) and of LayerNormGrad (with
ops, so that gradients of any order exist)."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..registry import register_gradient


@register_gradient(K.LAYER_NORM, inputs_to_save=True, output_values=[1, 2], non_differentiable=[1, 2])
def _layer_norm(dys, saved, attrs):
    """LayerNormGrad from the forward's mean and rstd (not differentiable, as in PyTorch's native_layer_norm)."""
    x, *params = saved[:-2]
    mean, rstd = saved[-2:]
    weight = params[:1] if attrs["has_weight"] else []
    return run_kernel(K.LAYER_NORM_GRAD, dys[0], x, mean, rstd, *weight, **attrs)


def _row_stats(x, dims, eps):
    """(xhat, rstd) of ``x`` over ``dims``, with ops."""
    centred = x - x.mean(dims, keepdim=True)
    rstd = ((centred * centred).mean(dims, keepdim=True) + eps).rsqrt()
    return centred * rstd, rstd


@register_gradient(K.LAYER_NORM_GRAD, inputs_to_save=True)
def _layer_norm_grad(us, saved, attrs):
    """The gradient of (dx, dweight, dbias) = LayerNormGrad(dy, x, mean, rstd, weight). Per row, with n elements,
    r = rstd, xhat, g = dy * weight and P(v) = v - mean(v) - xhat mean(v xhat) (so dx = r P(g)), for
    upstream gradients a (of dx), bw (of dweight) and bb (of dbias), <.,.> summed over the row:
      d g   = r P(a)                  -> d dy = d g * weight + bw * xhat + bb,  d weight = sum_rows(d g * dy)
      d x   = r P(bw * dy) - r^2 / n (<a, P(g)> xhat + P(a <g, xhat> + g <a, xhat>))
    (dx is r P(g); r and xhat depend on x with d xhat / dx = r P and d r / dx = -r^2 xhat / n)."""
    dy, x, _mean, _rstd, *weight = saved      # (mean and rstd are x's: recomputed with ops, to differentiate)
    a, *rest = us if isinstance(us, tuple) else (us,)     # (one output: the node hands its gradient alone)
    bw = rest.pop(0) if attrs["has_weight"] else None
    bb = rest.pop(0) if attrs["has_bias"] else None
    ndim = attrs["ndim"]
    dims = tuple(range(x.ndim - ndim, x.ndim))
    rows = tuple(range(x.ndim - ndim))
    n = 1
    for d in x.shape[x.ndim - ndim:]:
        n *= d
    xhat, r = _row_stats(x, dims, attrs["eps"])

    def dot(p, q):
        return (p * q).sum(dims, keepdim=True)

    def project(v):
        return v - v.mean(dims, keepdim=True) - xhat * (dot(v, xhat) / n)

    g = dy * weight[0] if weight else dy
    d_g = r * project(a)
    d_dy = d_g * weight[0] if weight else d_g
    d_x = -(r * r / n) * (dot(a, project(g)) * xhat + project(a * dot(g, xhat) + g * dot(a, xhat)))
    if bw is not None:
        d_dy = d_dy + bw * xhat
        d_x = d_x + r * project(bw * dy)
    if bb is not None:
        d_dy = d_dy + bb
    grads = [d_dy, d_x, None, None]
    if weight:
        grads.append((d_g * dy).sum(rows) if rows else d_g * dy)
    return tuple(grads)
