"""Attention layers: MultiheadAttention, TransformerEncoderLayer, TransformerEncoder
(parameter names as in PyTorch, so its state dicts load)."""
from __future__ import annotations

import copy

from .. import functional as F
from .. import init
from ...ops.creation import empty
from ..attention import additive_mask, attention, causal_mask
from ..module import Module
from ..parameter import Parameter
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm


class MultiheadAttention(Module):
    """Multi-head attention: ``num_heads`` scaled dot-product attentions over projections of
    query/key/value, concatenated and projected. Inputs are [L, N, E] (``batch_first``: [N, L, E]).
    A bool ``attn_mask``/``key_padding_mask`` is True where attention is *not* allowed.

    >>> import webgrad as wg
    >>> mha = MultiheadAttention(8, 2, batch_first=True)
    >>> x = wg.randn(3, 5, 8)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    ((3, 5, 8), (3, 5, 5))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, batch_first=False, dtype=None, device=None):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=dtype, device=device))
        self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype, device=device)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype, device=device)
        init.xavier_uniform_(self.in_proj_weight)
        if bias:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def _heads(self, x, w, b):
        n, length = x.shape[0], x.shape[1]
        return F.linear(x, w, b).reshape(n, length, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        n, length, e = query.shape
        s = key.shape[1]
        ws = self.in_proj_weight.chunk(3)
        bs = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None,) * 3
        q, k, v = (self._heads(x, w, b) for x, w, b in zip((query, key, value), ws, bs))
        if is_causal and attn_mask is None:
            attn_mask = causal_mask(length, s, q).logical_not()
        mask = additive_mask(attn_mask, q, False)
        if mask is not None and mask.ndim == 3:
            mask = mask.reshape(n, self.num_heads, length, s)
        if key_padding_mask is not None:
            pad = additive_mask(key_padding_mask, q, False).reshape(n, 1, 1, s)
            mask = pad if mask is None else mask + pad
        out, weights = attention(q, k, v, mask, self.dropout if self.training else 0.0)
        out = self.out_proj(out.transpose(1, 2).reshape(n, length, e))
        out = out.squeeze(0) if unbatched else (out if self.batch_first else out.transpose(0, 1))
        if not need_weights:
            return out, None
        weights = weights.mean(1) if average_attn_weights else weights
        return out, (weights.squeeze(0) if unbatched else weights)

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"


_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a residual and LayerNorm
    (post-norm by default, pre-norm with ``norm_first``), as PyTorch's layer.

    >>> import webgrad as wg
    >>> layer = TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    >>> layer(wg.randn(2, 5, 8), is_causal=True).shape
    (2, 5, 8)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, dtype=None, device=None):
        super().__init__()
        kw = dict(dtype=dtype, device=device)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias, batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, bias=bias, **kw)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        if isinstance(activation, str) and activation not in _ACTIVATIONS:
            raise ValueError(f"TransformerEncoderLayer: activation should be relu/gelu or a callable, "
                             f"not {activation!r}")
        self.activation = _ACTIVATIONS[activation] if isinstance(activation, str) else activation

    def _sa(self, x, mask, padding, is_causal):
        out = self.self_attn(x, x, x, key_padding_mask=padding, need_weights=False, attn_mask=mask,
                             is_causal=is_causal)[0]
        return self.dropout1(out)

    def _ff(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self._sa(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff(x))


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` applied in turn, then an optional ``norm``.

    >>> import webgrad as wg
    >>> enc = TransformerEncoder(TransformerEncoderLayer(8, 2, 16, dropout=0.0), num_layers=2)
    >>> enc(wg.randn(5, 2, 8)).shape
    (5, 2, 8)
    """

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([clone_module(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=False):
        for layer in self.layers:
            src = layer(src, mask, src_key_padding_mask, is_causal)
        return src if self.norm is None else self.norm(src)


def clone_module(module):
    """A deep copy of ``module`` with fresh parameters of equal value (backend objects are shared)."""
    memo = {id(t._backend): t._backend for t in list(module.parameters()) + list(module.buffers())}
    return copy.deepcopy(module, memo)


__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder"]
