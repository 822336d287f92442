"""``multi_head_attention_forward``: ``nn.MultiheadAttention``'s computation as a function of its
weights (PyTorch's ``torch.nn.functional.multi_head_attention_forward``). It runs the module's own
forward on a weight holder, so the function and the layer cannot drift apart."""
from __future__ import annotations

from ...ops.common import check_tensor
from .linear import linear


def _holder(embed_dim, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
            out_proj_weight, out_proj_bias, training, use_separate_proj_weight, q_proj_weight, k_proj_weight,
            v_proj_weight):
    """A ``MultiheadAttention`` (never initialised as a Module) whose attributes are the given weights."""
    from ..layers.transformer import MultiheadAttention   # layers import functional: the layer comes at call time
    mha = object.__new__(MultiheadAttention)
    mha.__dict__.update(
        embed_dim=embed_dim, num_heads=num_heads, head_dim=embed_dim // num_heads, dropout=dropout_p,
        training=training, batch_first=False, add_zero_attn=add_zero_attn, bias_k=bias_k, bias_v=bias_v,
        _qkv_same_embed_dim=not use_separate_proj_weight, in_proj_weight=in_proj_weight, in_proj_bias=in_proj_bias,
        q_proj_weight=q_proj_weight, k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight,
        out_proj=lambda x: linear(x, out_proj_weight, out_proj_bias), _forward_hooks={}, _forward_pre_hooks={})
    return mha


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention of ``query`` [L, N, E] over ``key``/``value`` [S, N, E] (unbatched:
    [L, E]) with the given projection weights, as ``nn.MultiheadAttention`` computes it; returns
    (output, attention weights or None). ``static_k``/``static_v`` (precomputed per-head keys and
    values) are not implemented and raise NotImplementedError.

    >>> import webgrad as wg
    >>> mha = wg.nn.MultiheadAttention(4, 2)
    >>> x = wg.randn(3, 1, 4)
    >>> out, w = multi_head_attention_forward(x, x, x, 4, 2, mha.in_proj_weight, mha.in_proj_bias, None, None,
    ...                                       False, 0.0, mha.out_proj.weight, mha.out_proj.bias)
    >>> bool(wg.allclose(out, mha(x, x, x)[0])), w.shape
    (True, webgrad.Size([1, 3, 3]))
    """
    check_tensor("multi_head_attention_forward", query, "query")
    embed_dim = query.shape[-1]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"multi_head_attention_forward: was expecting embedding dimension of "
                             f"{embed_dim_to_check}, but got {embed_dim}")
    if embed_dim % num_heads:
        raise AssertionError(f"multi_head_attention_forward: embed_dim {embed_dim} not divisible by num_heads "
                             f"{num_heads}")
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not implemented in webgrad; "
                                  "pass key and value with their projection weights instead")
    if use_separate_proj_weight and None in (q_proj_weight, k_proj_weight, v_proj_weight):
        raise AssertionError("multi_head_attention_forward: use_separate_proj_weight is True but q_proj_weight, "
                             "k_proj_weight or v_proj_weight is None")
    if not use_separate_proj_weight and in_proj_weight is None:
        raise AssertionError("multi_head_attention_forward: use_separate_proj_weight is False but in_proj_weight "
                             "is None")
    mha = _holder(embed_dim, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                  out_proj_weight, out_proj_bias, training, use_separate_proj_weight, q_proj_weight, k_proj_weight,
                  v_proj_weight)
    return type(mha).forward(mha, query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights,
                             is_causal)


__all__ = ["multi_head_attention_forward"]
