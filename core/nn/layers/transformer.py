"""Attention layers: MultiheadAttention and the Transformer family (encoder/decoder layers and
stacks, and ``Transformer``), with PyTorch's parameter names, order, init, masks and errors, so
its state dicts load and its programs give its numbers.

Masks follow PyTorch: a bool mask is True where attention is *not* allowed, a float mask is added
to the scores. ``is_causal`` is a hint that the given mask is causal; as in PyTorch, it needs the
mask (MultiheadAttention raises without one) and, where PyTorch trusts it (no key padding mask,
no weights asked for), a causal mask is applied in place of the given one.
"""
from __future__ import annotations

import copy

from .. import functional as F
from .. import init
from ...engine import is_grad_enabled
from ...ops.binary import where
from ...dtypes import int32
from ...ops.creation import arange, empty, full, zeros
from ...ops.movement import cat, clone
from ..attention import additive_mask, attention, causal_mask
from ..module import Module
from ..parameter import Parameter
from .activation import GELU, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear, NonDynamicallyQuantizableLinear
from .normalization import LayerNorm


# ------------------------------------------------------------------ masks and shape checks


def _float_mask(mask, name, like):
    """A bool or float mask as an additive float mask in ``like``'s dtype (PyTorch's ``_canonical_mask``)."""
    if mask is None:
        return None
    if mask.dtype.name != "bool" and not mask.dtype.is_floating:
        raise AssertionError(f"MultiheadAttention: only bool and floating types of {name} are supported, got "
                             f"{mask.dtype.name}")
    return additive_mask(mask, like, False)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's rank checks (AssertionError, as there); returns whether the input is batched."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"MultiheadAttention: query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    batched, kind = query.ndim == 3, ("batched (3-D)" if query.ndim == 3 else "unbatched (2-D)")
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"MultiheadAttention: For {kind} `query`, expected `key` and `value` to be "
                             f"{query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"MultiheadAttention: For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"MultiheadAttention: For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"MultiheadAttention: Expected `attn_mask` shape to be {expected} but got "
                                 f"{tuple(attn_mask.shape)}")
    return batched


def _check_attn_mask(mask, n, heads, length, source):
    want = (length, source) if mask.ndim == 2 else (n * heads, length, source)
    if tuple(mask.shape) != want:
        raise RuntimeError(f"MultiheadAttention: The shape of the {mask.ndim}D attn_mask is {tuple(mask.shape)}, "
                           f"but should be {want}.")


def _append_key(k, v, attn_mask, padding, extra_k, extra_v):
    """Keys/values [N, S, E] with one more position (bias_k/bias_v or zeros); masks padded to match."""
    k, v = cat([k, extra_k], 1), cat([v, extra_v], 1)
    grow = (lambda m: m if m is None else F.pad(m, (0, 1)))
    return k, v, grow(attn_mask), grow(padding)


def _merged_mask(attn_mask, padding, n, heads, length, source):
    """The float attn_mask ([L, S] or [N * heads, L, S]) plus the float key padding mask, as one additive
    mask that broadcasts to the scores [N, heads, L, S] (None if neither)."""
    mask = attn_mask if attn_mask is None or attn_mask.ndim == 2 else attn_mask.reshape(n, heads, length, source)
    if padding is not None:
        pad = padding.reshape(n, 1, 1, source)
        mask = pad if mask is None else mask + pad
    return mask


class MultiheadAttention(Module):
    """Multi-head attention: ``num_heads`` scaled dot-product attentions over projections of
    query/key/value, concatenated and projected (PyTorch's parameters: ``in_proj_weight``, or
    ``q/k/v_proj_weight`` when ``kdim``/``vdim`` differ from ``embed_dim``; ``in_proj_bias``;
    ``bias_k``/``bias_v`` with ``add_bias_kv``; ``out_proj``). Inputs are [L, N, E]
    (``batch_first``: [N, L, E]; unbatched: [L, E]). Returns (output, weights averaged over heads,
    per head without ``average_attn_weights``, None without ``need_weights``).

    >>> import webgrad as wg
    >>> mha = MultiheadAttention(8, 2, batch_first=True)
    >>> x = wg.randn(3, 5, 8)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    ((3, 5, 8), (3, 5, 5))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                                 f"({num_heads})")
        kw = dict(device=device, dtype=dtype)
        separate = not self._qkv_same_embed_dim
        for name, cols in (("q_proj_weight", embed_dim), ("k_proj_weight", self.kdim), ("v_proj_weight", self.vdim)):
            self.register_parameter(name, Parameter(empty(embed_dim, cols, **kw)) if separate else None)
        self.register_parameter("in_proj_weight", None if separate else Parameter(empty(3 * embed_dim, embed_dim,
                                                                                        **kw)))
        self.register_parameter("in_proj_bias", Parameter(empty(3 * embed_dim, **kw)) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        for name in ("bias_k", "bias_v"):
            self.register_parameter(name, Parameter(empty(1, 1, embed_dim, **kw)) if add_bias_kv else None)
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if w is not None:
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                init.xavier_normal_(b)

    def _project(self, query, key, value):
        """The query/key/value projections, each [N, L or S, E]."""
        biases = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None,) * 3
        weights = self.in_proj_weight.chunk(3) if self._qkv_same_embed_dim else \
            (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        return tuple(F.linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))

    def _check_inputs(self, query, key, value):
        e = query.shape[-1]
        if e != self.embed_dim:
            raise AssertionError(f"MultiheadAttention: was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {e}")
        same = key.shape[:-1] == value.shape[:-1] if not self._qkv_same_embed_dim else key.shape == value.shape
        if not same:
            raise AssertionError(f"MultiheadAttention: key shape {tuple(key.shape)} does not match value shape "
                                 f"{tuple(value.shape)}")
        if key.shape[0] != query.shape[0]:
            raise RuntimeError(f"MultiheadAttention: query {tuple(query.shape)} and key {tuple(key.shape)} must "
                               f"have the same batch size")

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, self.num_heads)
        padding = _float_mask(key_padding_mask, "key_padding_mask", query)
        attn_mask = _float_mask(attn_mask, "attn_mask", query)
        if is_causal and attn_mask is None:
            raise RuntimeError("MultiheadAttention: Need attn_mask if specifying the is_causal hint. You may use the "
                               "Transformer module method `generate_square_subsequent_mask` to create this mask.")
        trust_causal = is_causal and padding is None and not need_weights
        attn_mask = None if trust_causal else attn_mask
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            padding = None if padding is None else padding.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        self._check_inputs(query, key, value)
        n, length, e = query.shape
        q, k, v = self._project(query, key, value)
        if attn_mask is not None:
            _check_attn_mask(attn_mask, n, self.num_heads, length, k.shape[1])
        if self.bias_k is not None and self.bias_v is not None:
            k, v, attn_mask, padding = _append_key(k, v, attn_mask, padding, self.bias_k.expand(n, 1, e),
                                                   self.bias_v.expand(n, 1, e))
        if self.add_zero_attn:
            none = zeros(n, 1, e, dtype=k.dtype, backend=k._backend)
            k, v, attn_mask, padding = _append_key(k, v, attn_mask, padding, none, none)
        if padding is not None and tuple(padding.shape) != (n, k.shape[1]):
            raise AssertionError(f"MultiheadAttention: Expected key_padding_mask of shape {(n, k.shape[1])}, but "
                                 f"got {tuple(padding.shape)}")
        out, weights = self._attend(q, k, v, attn_mask, padding, trust_causal, need_weights)
        out = self.out_proj(out)
        out = out.squeeze(0) if not batched else (out if self.batch_first else out.transpose(0, 1))
        if not need_weights:
            return out, None
        weights = weights.mean(1) if average_attn_weights else weights
        return out, (weights if batched else weights.squeeze(0))

    def _attend(self, q, k, v, attn_mask, padding, causal, need_weights):
        """Attention over heads: ([N, L, E], weights [N, heads, L, S]). Without ``need_weights`` it is
        ``F.scaled_dot_product_attention`` (the fused kernel; weights None), as in PyTorch, where a query
        that may see no key then gets zeros (with weights, NaN)."""
        n, length, e = q.shape
        source, heads = k.shape[1], self.num_heads
        split = (lambda x: x.reshape(n, x.shape[1], heads, self.head_dim).transpose(1, 2))
        dropout_p = self.dropout if self.training else 0.0
        if not need_weights:
            mask = _merged_mask(attn_mask, padding, n, heads, length, source)
            out = F.scaled_dot_product_attention(split(q), split(k), split(v), None if causal else mask, dropout_p,
                                                 is_causal=causal)
            return out.transpose(1, 2).reshape(n, length, e), None
        if causal:
            mask = causal_mask(length, source, q).logical_not()
            mask = additive_mask(mask, q, False)
        else:
            mask = _merged_mask(attn_mask, padding, n, heads, length, source)
        out, weights = attention(split(q), split(k), split(v), mask, dropout_p)
        return out.transpose(1, 2).reshape(n, length, e), weights


# ------------------------------------------------------------------ encoder and decoder layers

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation(activation):
    if not isinstance(activation, str):
        return activation
    if activation not in _ACTIVATIONS:
        raise RuntimeError(f"Transformer layer: activation should be relu/gelu, not {activation}")
    return _ACTIVATIONS[activation]


def _add_feed_forward_and_norms(layer, count, d_model, dim_feedforward, dropout, activation, eps, norm_first, bias,
                                kw):
    """What follows the attentions of an encoder or decoder layer, registered in PyTorch's order:
    linear1, dropout, linear2, norm1..norm{count}, dropout1..dropout{count}, activation."""
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
    layer.norm_first = norm_first
    for i in range(1, count + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps=eps, bias=bias, **kw))
    for i in range(1, count + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout))
    layer.activation = _activation(activation)


def _relu_or_gelu(activation):
    """PyTorch's ``activation_relu_or_gelu``: 1 for relu, 2 for gelu, 0 for anything else."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    return 2 if activation is F.gelu or isinstance(activation, GELU) else 0


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a residual and LayerNorm
    (post-norm by default, pre-norm with ``norm_first``), as PyTorch's layer. ``activation`` is
    'relu', 'gelu' or a callable.

    >>> import webgrad as wg
    >>> layer = TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    >>> layer(wg.randn(2, 5, 8), src_mask=Transformer.generate_square_subsequent_mask(5)).shape
    (2, 5, 8)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        _add_feed_forward_and_norms(self, 2, d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                                    norm_first, bias, kw)
        self.activation_relu_or_gelu = _relu_or_gelu(self.activation)

    def _sa_block(self, x, mask, padding, is_causal):
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                             is_causal=is_causal)[0]
        return self.dropout1(out)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention over the encoder's ``memory``, then a feed-forward
    block; each with dropout, a residual and LayerNorm (post-norm, or pre-norm with ``norm_first``).

    >>> import webgrad as wg
    >>> layer = TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    >>> layer(wg.randn(4, 2, 8), wg.randn(6, 2, 8)).shape
    (4, 2, 8)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                                 **kw)
        _add_feed_forward_and_norms(self, 3, d_model, dim_feedforward, dropout, activation, layer_norm_eps,
                                    norm_first, bias, kw)

    def _sa_block(self, x, mask, padding, is_causal):
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding, is_causal=is_causal,
                             need_weights=False)[0]
        return self.dropout1(out)

    def _mha_block(self, x, memory, mask, padding, is_causal):
        out = self.multihead_attn(x, memory, memory, attn_mask=mask, key_padding_mask=padding, is_causal=is_causal,
                                  need_weights=False)[0]
        return self.dropout2(out)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._ff_block(x))


# ------------------------------------------------------------------ stacks


def clone_module(module):
    """A deep copy of ``module`` (PyTorch's ``_get_clones`` item) whose parameters and buffers are
    fresh copies made on their backend: the copy never reaches into a tensor's storage, which on a
    GPU backend holds device objects that cannot be copied."""
    memo = {id(p): Parameter(clone(p.detach()), requires_grad=p.requires_grad) for p in module.parameters()}
    memo.update({id(b): clone(b.detach()) for b in module.buffers()})
    return copy.deepcopy(module, memo)


def _nested_tensor_capable(layer):
    """PyTorch's conditions (checked at construction) for its nested-tensor fast path."""
    attn = getattr(layer, "self_attn", None)
    return (isinstance(layer, TransformerEncoderLayer) and not layer.norm_first and attn.batch_first
            and attn._qkv_same_embed_dim and attn.in_proj_bias is not None and layer.activation_relu_or_gelu
            and layer.norm1.eps == layer.norm2.eps and attn.num_heads % 2 == 0)


def _is_left_aligned(padded):
    """Whether each row of the bool ``padded`` [N, S] is all kept positions, then all padding."""
    return not padded[:, :-1].logical_and(padded[:, 1:].logical_not()).any().item()


def _as_left_aligned(padded):
    """The padding a nested tensor made from ``padded`` has: each row keeps its first k positions,
    k the row's count of kept ones (PyTorch builds it so, and unchecked, from any mask)."""
    kept = padded.logical_not().to(int32).sum(1, keepdim=True)
    return arange(padded.shape[1], backend=padded._backend).unsqueeze(0) >= kept


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` applied in turn, then an optional ``norm``.

    PyTorch's nested-tensor fast path changes results in one case, and webgrad gives its numbers
    there too: in eval mode without gradients, with a ``src_key_padding_mask`` (left-aligned when
    ``mask_check``), no ``mask`` and a layer it accepts (batch_first, post-norm, relu/gelu, an even
    number of heads), the padded positions come out as zeros before ``norm`` (and with
    ``mask_check=False`` a row with k kept positions is read as its first k positions, as there).

    >>> import webgrad as wg
    >>> enc = TransformerEncoder(TransformerEncoderLayer(8, 2, 16, dropout=0.0), num_layers=2)
    >>> enc(wg.randn(5, 2, 8)).shape
    (5, 2, 8)
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = ModuleList([clone_module(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check
        self.use_nested_tensor = enable_nested_tensor and _nested_tensor_capable(encoder_layer)

    def _zeroes_padding(self, src, mask, padding):
        """Whether PyTorch would run its nested-tensor path (which outputs zeros at padded positions)."""
        if not self.use_nested_tensor or self.layers[0].training or src.ndim != 3 or padding is None:
            return False
        if mask is not None or (is_grad_enabled() and (src.requires_grad or any(
                p.requires_grad for p in self.layers[0].parameters()))):
            return False
        return not self.mask_check or _is_left_aligned(padding)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        padded = None if src_key_padding_mask is None else (
            src_key_padding_mask if src_key_padding_mask.dtype.name == "bool" else src_key_padding_mask != 0)
        if self._zeroes_padding(src, mask, padded):
            src_key_padding_mask = padded = _as_left_aligned(padded)
        else:
            padded = None
        for layer in self.layers:
            src = layer(src, src_mask=mask, is_causal=bool(is_causal), src_key_padding_mask=src_key_padding_mask)
        if padded is not None:
            src = where(padded.unsqueeze(-1), 0.0, src)
        return src if self.norm is None else self.norm(src)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` applied in turn to the target (each attending to
    ``memory``), then an optional ``norm``.

    >>> import webgrad as wg
    >>> dec = TransformerDecoder(TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True), num_layers=2)
    >>> dec(wg.randn(2, 4, 8), wg.randn(2, 6, 8)).shape
    (2, 4, 8)
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([clone_module(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        for layer in self.layers:
            tgt = layer(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return tgt if self.norm is None else self.norm(tgt)


class Transformer(Module):
    """The encoder-decoder Transformer ("Attention Is All You Need"): ``encoder`` (a
    TransformerEncoder with a final LayerNorm) reads ``src``, ``decoder`` (a TransformerDecoder with a
    final LayerNorm) reads ``tgt`` and the encoder's output. Matrices are xavier-uniform initialised,
    as in PyTorch. ``generate_square_subsequent_mask(sz)`` gives the causal float mask.

    >>> import webgrad as wg
    >>> model = Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    >>> tgt_mask = Transformer.generate_square_subsequent_mask(4)
    >>> model(wg.randn(6, 2, 8), wg.randn(4, 2, 8), tgt_mask=tgt_mask).shape
    (4, 2, 8)
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(*layer_args, **kw), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(*layer_args, **kw), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def _reset_parameters(self):
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError(f"Transformer: the batch number of src and tgt must be equal, got src "
                               f"{tuple(src.shape)} and tgt {tuple(tgt.shape)}")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"Transformer: the feature number of src and tgt must be equal to d_model "
                               f"({self.d_model}), got src {tuple(src.shape)} and tgt {tuple(tgt.shape)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """[sz, sz] float mask: 0 where position i may attend to j (j <= i), -inf above the diagonal.

        >>> Transformer.generate_square_subsequent_mask(2).tolist()
        [[0.0, -inf], [0.0, 0.0]]
        """
        ones = full((sz, sz), 0.0, dtype=dtype, device=device)
        return where(causal_mask(sz, sz, ones), ones, float("-inf"))


__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]
