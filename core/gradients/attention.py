"""Gradients of Attention (its fused backward kernel, AttentionGrad) and of AttentionGrad (with ops,
so that gradients of any order exist).

Shapes (see kernel_names): q [N, L, E], k [N/g, S, E], v [N/g, S, Ev], mask [M, L, S]; the rule for
AttentionGrad works on the scores as [N/g, g, L, S], where keys and values broadcast over g."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..ops.binary import where
from ..ops.creation import arange
from ..registry import register_gradient


@register_gradient(K.ATTENTION, inputs_to_save=True, outputs_to_save=True)
def _attention(dys, saved, attrs):
    """AttentionGrad from the saved out and lse (a gradient reaching lse, dlse, is taken too)."""
    dout, dlse = dys
    q, k, v, *masks, out, lse = saved
    mask_grad = bool(masks) and saved.needs_input_grad[3]
    grads = run_kernel(K.ATTENTION_GRAD, dout, q, k, v, out, lse, dlse, *masks, **attrs, mask_grad=mask_grad)
    return tuple(grads[:3]) + ((grads[3] if mask_grad else None,) if masks else ())


def _softmax_grad(dy, y):
    return run_kernel(K.SOFTMAX_GRAD, dy, y, axis=y.ndim - 1)


class _Shapes:
    """The grouped views of one Attention call: [N/g, g, L, *] for queries, [N/g, 1, S, *] for keys."""

    def __init__(self, q, k, attrs):
        self.nk, self.g = k.shape[0], attrs["group"]
        self.L, self.S = q.shape[1], k.shape[1]

    def queries(self, t):
        return t.reshape(self.nk, self.g, self.L, t.shape[-1])

    def keys(self, t):
        return t.unsqueeze(1)

    def mask(self, mask, div):
        """mask [M, L, S] as seen by each query batch: [N/g, g, L, S]."""
        m = mask.shape[0]
        n = self.nk * self.g
        full = mask.reshape(1, m, 1, self.L, self.S).expand(n // (m * div), m, div, self.L, self.S)
        return full.reshape(self.nk, self.g, self.L, self.S)


def _probabilities(shapes, q, k, masks, lse, attrs):
    """softmax of the scores as [N/g, g, L, S], with ops, 0 in rows that see no key (lse -inf)."""
    s = (shapes.queries(q) @ shapes.keys(k).transpose(-1, -2)) * attrs["scale"]
    if masks:
        s = s + shapes.mask(masks[0], attrs["mask_div"])
    if attrs["causal"]:
        above = arange(shapes.S, backend=q._backend).unsqueeze(0) > arange(shapes.L, backend=q._backend).unsqueeze(1)
        s = where(above, float("-inf"), s)
    dead = shapes.queries(lse.unsqueeze(-1)) == float("-inf")
    p = run_kernel(K.SOFTMAX, where(dead, 0.0, s), axis=3)     # dead rows made finite: no NaN, nor in gradients
    return where(dead, 0.0, p)


def _fold(shapes, t, mask, div):
    """A scores-shaped [N/g, g, L, S] gradient summed to the mask's [M, L, S]."""
    m = mask.shape[0]
    n = shapes.nk * shapes.g
    return t.reshape(n // (m * div), m, div, shapes.L, shapes.S).sum((0, 2))


@register_gradient(K.ATTENTION_GRAD, inputs_to_save=True)
def _attention_grad(us, saved, attrs):
    """The gradient of AttentionGrad(dout, q, k, v, out, lse, dlse[, mask]), out and lse taken as what
    they are, functions of q, k, v and the mask (so they get none: their dependence is in the others').
    Its forward, per group of queries, with P the attention weights and c the scale:
        dP = dout v^T;  dS = SoftmaxGrad(dP, P) + P dlse;  dq = c dS k;  dk = c sum_g dS^T q;
        dv = sum_g P^T dout;  dmask = dS folded to the mask's shape.
    Here each step is taken back in reverse, from the upstream gradients uq, uk, uv (and um)."""
    dout, q, k, v, out, lse, dlse, *masks = saved
    uq, uk, uv, *um = us
    c = attrs["scale"]
    sh = _Shapes(q, k, attrs)
    p = _probabilities(sh, q, k, masks, lse, attrs)
    q4, k4, v4, do4, dl4 = sh.queries(q), sh.keys(k), sh.keys(v), sh.queries(dout), sh.queries(dlse.unsqueeze(-1))
    uq4, uk4, uv4 = sh.queries(uq), sh.keys(uk), sh.keys(uv)
    dp = do4 @ v4.transpose(-1, -2)
    ds = _softmax_grad(dp, p) + p * dl4
    # dS is used by dq, dk and dmask; P by dS and dv; dP by dS
    u_ds = c * (uq4 @ k4.transpose(-1, -2) + q4 @ uk4.transpose(-1, -2))
    if attrs["mask_grad"] and um:
        u_ds = u_ds + sh.mask(um[0], attrs["mask_div"])
    u_dp = _softmax_grad(u_ds, p)
    u_p = (do4 @ uv4.transpose(-1, -2) + u_ds * (dp - (dp * p).sum(3, keepdim=True) + dl4)
           - (u_ds * p).sum(3, keepdim=True) * dp)
    u_s = _softmax_grad(u_p, p)                               # back through P = softmax(S)
    d_dout = p @ uv4 + u_dp @ v4
    d_q = c * (ds @ uk4 + u_s @ k4)
    d_k = c * (ds.transpose(-1, -2) @ uq4 + u_s.transpose(-1, -2) @ q4).sum(1)
    d_v = (u_dp.transpose(-1, -2) @ do4).sum(1)
    d_dlse = (u_ds * p).sum(3)
    grads = [d_dout.reshape(dout.shape), d_q.reshape(q.shape), d_k, d_v, None, None, d_dlse.reshape(dlse.shape)]
    if masks:
        grads.append(_fold(sh, u_s, masks[0], attrs["mask_div"]))
    return tuple(grads)
