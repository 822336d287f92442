"""Scaled dot-product attention (PyTorch's ``F.scaled_dot_product_attention``): one fused kernel,
``Attention`` (on the GPU backends a tiled, memory-efficient one), with a fused backward.

``attention`` is the composed form: it also returns the attention weights, which
``MultiheadAttention`` reports, and serves dropout (which needs the generator); masks reach it as
one additive float mask.
"""
from __future__ import annotations

import math

from .. import kernel_names as K
from ..engine import run_kernel
from ..ops.binary import where
from ..ops.common import check_tensor
from ..ops.creation import arange
from ..shapes import broadcast_shapes, numel
from .functional.activation import softmax
from .functional.dropout import dropout
from ..amp import lower_precision_op


def causal_mask(L: int, S: int, like):
    """[L, S] bool mask, True where query i may attend to key j (j <= i), on ``like``'s backend.

    >>> import webgrad as wg
    >>> causal_mask(2, 2, wg.ones(1)).tolist()
    [[True, False], [True, True]]
    """
    rows = arange(L, backend=like._backend).unsqueeze(1)
    return rows >= arange(S, backend=like._backend).unsqueeze(0)


def additive_mask(mask, like, allowed_when_true: bool):
    """A float mask to add to attention scores: bool masks become 0 / -inf (True means *may attend*
    when ``allowed_when_true``, as in SDPA, or *masked out* otherwise, as in MultiheadAttention)."""
    if mask is None or mask.dtype.is_floating:
        return mask if mask is None else mask.to(like.dtype)
    keep = mask if allowed_when_true else mask.logical_not()
    return where(keep, 0.0, float("-inf")).to(like.dtype)


def attention(query, key, value, mask=None, dropout_p=0.0, scale=None, safe=False):
    """(softmax(q @ k^T * scale + mask) @ v, the attention weights); ``mask`` is additive (float) or None.
    ``safe``: a query whose scores are all -inf gets zero weights (SDPA's rule), not NaN."""
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(f"scaled_dot_product_attention: query {tuple(query.shape)}, key {tuple(key.shape)} and "
                         f"value {tuple(value.shape)} must be [..., L, E], [..., S, E] and [..., S, Ev]")
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores + mask
    if safe:
        dead = scores.amax(-1, keepdim=True) == float("-inf")
        weights = where(dead, 0.0, softmax(where(dead, 0.0, scores), dim=-1))   # no NaN, nor in its gradient
    else:
        weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights @ value, weights


@lower_precision_op
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                                 enable_gqa=False):
    """softmax(q @ k^T * scale + mask) @ v over [..., L, E] queries, [..., S, E] keys and [..., S, Ev]
    values (batch dims broadcast), ``scale`` 1/sqrt(E) by default. A bool ``attn_mask`` is True where
    attention is allowed; a float one (the query's dtype) is added to the scores; ``is_causal`` lets
    query i see keys j <= i only. A query that may see no key gets zeros, as in PyTorch. With
    ``enable_gqa``, keys and values may have fewer heads (dim -3) than queries, each serving a
    group of query heads. ``dropout_p`` drops attention weights (always, as PyTorch's function:
    pass 0.0 when evaluating).

    >>> import webgrad as wg
    >>> q = wg.randn(2, 4, 8)
    >>> scaled_dot_product_attention(q, q, q, is_causal=True).shape
    webgrad.Size([2, 4, 8])
    """
    _check_inputs(query, key, value, attn_mask, dropout_p, is_causal)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    key, value, group = _heads(query, key, value, enable_gqa)
    if dropout_p > 0.0:
        mask = causal_mask(query.shape[-2], key.shape[-2], query) if is_causal else attn_mask
        key, value = (_repeat_heads(t, group) for t in (key, value))
        return attention(query, key, value, additive_mask(mask, query, True), dropout_p, scale, safe=True)[0]
    return _fused(query, key, value, additive_mask(attn_mask, query, True), scale, is_causal, group)


def _check_inputs(query, key, value, attn_mask, dropout_p, is_causal):
    """PyTorch's argument checks, with its error types."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor("scaled_dot_product_attention", t, name)
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"scaled_dot_product_attention: query, key and value must be at least 2-D, got "
                           f"{query.ndim}-D, {key.ndim}-D and {value.ndim}-D")
    if not (query.dtype is key.dtype is value.dtype) or not query.dtype.is_floating:
        raise RuntimeError(f"scaled_dot_product_attention: query, key and value must have one floating dtype, got "
                           f"{query.dtype.name}, {key.dtype.name} and {value.dtype.name}")
    qs, ks, vs = query._data.shape, key._data.shape, value._data.shape
    if qs[-1] != ks[-1] or ks[-2] != vs[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {tuple(query.shape)}, key {tuple(key.shape)} and "
                           f"value {tuple(value.shape)} must be [..., L, E], [..., S, E] and [..., S, Ev]")
    if attn_mask is not None:
        check_tensor("scaled_dot_product_attention", attn_mask, "attn_mask")
        if attn_mask.dtype.name != "bool" and attn_mask.dtype is not query.dtype:
            raise RuntimeError(f"scaled_dot_product_attention: attn_mask must be bool or the query's dtype "
                               f"({query.dtype.name}), got {attn_mask.dtype.name}")
        if is_causal:
            raise RuntimeError("scaled_dot_product_attention: pass either attn_mask or is_causal=True, not both")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"scaled_dot_product_attention: dropout_p must be between 0 and 1, got {dropout_p}")


def _heads(query, key, value, enable_gqa):
    """(key, value, group): with ``enable_gqa``, query heads (dim -3) per key/value head; keys and values
    whose head counts differ are repeated to the query's."""
    if not enable_gqa:
        return key, value, 1
    if query.ndim < 3:
        raise IndexError(f"scaled_dot_product_attention: enable_gqa needs a heads dim (-3); query is "
                         f"{query.ndim}-D")
    heads = query.shape[-3]
    for name, t in (("key", key), ("value", value)):
        if t.ndim < 3 or heads % t.shape[-3]:
            raise RuntimeError(f"scaled_dot_product_attention: the number of heads in {name} "
                               f"({tuple(t.shape)}) must divide the number of heads in query ({heads})")
    if key.shape[-3] != value.shape[-3]:
        return _repeat_heads(key, heads // key.shape[-3]), _repeat_heads(value, heads // value.shape[-3]), 1
    return key, value, heads // key.shape[-3]


def _repeat_heads(t, group):
    """Each head of ``t`` (dim -3) repeated ``group`` times in place (PyTorch's repeat_interleave)."""
    if group == 1:
        return t
    shape = tuple(t.shape)
    return t.unsqueeze(-3).expand(*shape[:-2], group, *shape[-2:]).reshape(
        *shape[:-3], shape[-3] * group, *shape[-2:])


def _fused(query, key, value, mask, scale, causal, group):
    """The Attention kernel on [N, L, E] queries and [N / group, S, E] keys and values; the result in
    the broadcast batch shape."""
    qs, ks, vs = query._data.shape, key._data.shape, value._data.shape
    L, E, S, Ev = qs[-2], qs[-1], ks[-2], vs[-1]
    kv_batch = _broadcast(ks[:-2], vs[:-2])
    grouped = kv_batch[:-1] + (kv_batch[-1] * group,) if group > 1 else kv_batch
    batch = _broadcast(qs[:-2], grouped)
    kv_batch = batch[:-1] + (batch[-1] // group,) if group > 1 else batch
    n = numel(batch)
    q = query.expand(*batch, L, E).reshape(n, L, E)
    k = key.expand(*kv_batch, S, E).reshape(n // group, S, E)
    v = value.expand(*kv_batch, S, Ev).reshape(n // group, S, Ev)
    masks, div = (), 1
    if mask is not None:
        mask, div = _mask_rows(mask, batch, L, S)
        masks = (mask,)
    out, _ = run_kernel(K.ATTENTION, q, k, v, *masks, scale=scale, causal=bool(causal), group=group, mask_div=div)
    return out.reshape(*batch, L, Ev)


def _broadcast(*shapes):
    """The shapes' broadcast, or PyTorch's RuntimeError."""
    try:
        return broadcast_shapes(*shapes, op="scaled_dot_product_attention")
    except ValueError as e:
        raise RuntimeError(str(e)) from None


def _mask_rows(mask, batch, L, S):
    """(mask as [M, L, S], div) such that query batch n (flat over ``batch``) adds mask (n // div) % M:
    the mask's batch dims that are not broadcast are made one contiguous run of ``batch``'s (expanding
    over any broadcast dims between them), and its L and S dims are expanded."""
    scores = tuple(batch) + (L, S)
    if mask.ndim > len(scores) or _broadcast(mask.shape, scores) != scores:
        raise RuntimeError(f"scaled_dot_product_attention: attn_mask {tuple(mask.shape)} does not broadcast to the "
                           f"scores' shape {scores}")
    own = (1,) * (len(batch) + 2 - mask.ndim) + tuple(mask.shape)
    kept = [d for d in range(len(batch)) if own[d] != 1]
    first, last = (kept[0], kept[-1] + 1) if kept else (len(batch), len(batch))
    rows = tuple(batch[first:last])
    mask = mask.reshape(own).expand(*own[:first], *rows, *own[last:len(batch)], L, S)
    return mask.reshape(numel(rows), L, S), numel(batch[last:])


__all__ = ["scaled_dot_product_attention"]
