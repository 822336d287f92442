"""Scaled dot-product attention (PyTorch's ``F.scaled_dot_product_attention``), composed from ops.

``attention`` is the shared core: it also returns the attention weights, which
``MultiheadAttention`` reports; masks reach it as one additive float mask.
"""
from __future__ import annotations

import math


def causal_mask(L: int, S: int, like):
    """[L, S] bool mask, True where query i may attend to key j (j <= i), on ``like``'s backend.

    >>> import webgrad as wg
    >>> causal_mask(2, 2, wg.ones(1)).tolist()
    [[True, False], [True, True]]
    """
    from ..ops.creation import arange
    rows = arange(L, backend=like._backend).unsqueeze(1)
    return rows >= arange(S, backend=like._backend).unsqueeze(0)


def additive_mask(mask, like, allowed_when_true: bool):
    """A float mask to add to attention scores: bool masks become 0 / -inf (True means *may attend*
    when ``allowed_when_true``, as in SDPA, or *masked out* otherwise, as in MultiheadAttention)."""
    if mask is None or mask.dtype.is_floating:
        return mask if mask is None else mask.to(like.dtype)
    from ..ops.binary import where
    keep = mask if allowed_when_true else mask.logical_not()
    return where(keep, 0.0, float("-inf")).to(like.dtype)


def attention(query, key, value, mask=None, dropout_p=0.0, scale=None):
    """(softmax(q @ k^T * scale + mask) @ v, the attention weights); ``mask`` is additive (float) or None."""
    from . import functional as F
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(f"scaled_dot_product_attention: query {tuple(query.shape)}, key {tuple(key.shape)} and "
                         f"value {tuple(value.shape)} must be [..., L, E], [..., S, E] and [..., S, Ev]")
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores + mask
    weights = F.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p)
    return weights @ value, weights


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """softmax(q @ k^T / sqrt(E) + mask) @ v over [..., L, E] queries and [..., S, E] keys.
    A bool ``attn_mask`` is True where attention is allowed; a float one is added to the scores;
    ``is_causal`` lets query i see keys j <= i only.

    >>> import webgrad as wg
    >>> q = wg.randn(2, 4, 8)
    >>> scaled_dot_product_attention(q, q, q, is_causal=True).shape
    (2, 4, 8)
    """
    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: pass either attn_mask or is_causal=True, not both")
    mask = causal_mask(query.shape[-2], key.shape[-2], query) if is_causal else attn_mask
    return attention(query, key, value, additive_mask(mask, query, True), dropout_p, scale)[0]


__all__ = ["scaled_dot_product_attention"]
