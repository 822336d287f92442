"""MultiheadAttention and the Transformer family against PyTorch on every backend: with torch's
weights loaded (state_dict keys, shapes and order equal), outputs, attention weights and the
gradients of inputs, float masks and every parameter agree (float32 on each backend, float64 on
cpu) over masks (bool/float, 2-D/3-D, key padding, causal), batch_first, unbatched input, norm_first,
activations, bias, kdim/vdim, add_bias_kv/add_zero_attn; PyTorch's nested-tensor numbers in eval;
torch's exception types; a few SGD steps give torch's losses."""
import warnings

import numpy as np
import pytest

import webgrad as wg
from nn_compare import TORCH_DTYPES, Fixed, compare_modules, load_torch_weights, rand, same_error, sgd_losses

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched:UserWarning")

E, NH, L, S, N = 8, 2, 4, 5, 2
DTYPES = ["float32", "float64"]


def make_pair(make, dtype="float32"):
    """``make(nn)`` built with torch.nn and webgrad.nn, torch's weights loaded into webgrad's module."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # torch's "enable_nested_tensor is True, but ..." notice
        tm, wm = make(torch.nn).to(TORCH_DTYPES[dtype]), make(wg.nn).to(getattr(wg, dtype))
    load_torch_weights(tm, wm)
    return tm, wm


def causal(n, dtype="float32", rows=None):
    """The causal float mask, as an input without grad: PyTorch's stacks detect a causal mask and
    use the is_causal path instead, so the mask gets no gradient there (webgrad uses the mask)."""
    return Fixed(np.triu(np.full((n, n), -np.inf, dtype=dtype), 1)[:rows])


PAD_S = np.array([[False] * (S - 1) + [True], [False] * S])          # [N, S] key padding
PAD_L = np.array([[False] * L, [False] * (L - 2) + [True] * 2])      # [N, L]


def seq(n, batch_first=False, seed=0, dtype="float32", dim=E):
    return rand(*((N, n, dim) if batch_first else (n, N, dim)), seed=seed, dtype=dtype)


MHA = [  # (id, make, args(dtype), kwargs(dtype))
    ("self_attention", lambda nn: nn.MultiheadAttention(E, NH),
     lambda d: [seq(L, dtype=d)] * 3, lambda d: {}),
    ("batch_first_key_padding", lambda nn: nn.MultiheadAttention(E, NH, batch_first=True),
     lambda d: [seq(L, True, dtype=d), seq(S, True, 1, d), seq(S, True, 2, d)],
     lambda d: dict(key_padding_mask=PAD_S)),
    ("bool_mask_per_head_weights", lambda nn: nn.MultiheadAttention(E, NH),
     lambda d: [seq(L, dtype=d), seq(S, seed=1, dtype=d), seq(S, seed=2, dtype=d)],
     lambda d: dict(attn_mask=rand(L, S, seed=3) > 0.8, average_attn_weights=False)),
    ("float_masks_3d", lambda nn: nn.MultiheadAttention(E, NH),
     lambda d: [seq(L, dtype=d), seq(S, seed=1, dtype=d), seq(S, seed=2, dtype=d)],
     lambda d: dict(attn_mask=rand(N * NH, L, S, seed=3, dtype=d), key_padding_mask=rand(N, S, seed=4, dtype=d))),
    ("kdim_vdim_no_weights", lambda nn: nn.MultiheadAttention(E, NH, kdim=3, vdim=5),
     lambda d: [seq(L, dtype=d), seq(S, seed=1, dtype=d, dim=3), seq(S, seed=2, dtype=d, dim=5)],
     lambda d: dict(need_weights=False, key_padding_mask=PAD_S)),
    ("bias_kv_zero_attn", lambda nn: nn.MultiheadAttention(E, NH, add_bias_kv=True, add_zero_attn=True),
     lambda d: [seq(L, dtype=d), seq(S, seed=1, dtype=d), seq(S, seed=2, dtype=d)],
     lambda d: dict(attn_mask=rand(L, S, seed=3) > 0.8, key_padding_mask=PAD_S)),
    ("no_bias_unbatched_3d_mask", lambda nn: nn.MultiheadAttention(E, NH, bias=False),
     lambda d: [rand(L, E, dtype=d), rand(S, E, seed=1, dtype=d), rand(S, E, seed=2, dtype=d)],
     lambda d: dict(attn_mask=rand(NH, L, S, seed=3) > 0.8, key_padding_mask=np.array([False] * 4 + [True]))),
    ("is_causal_hint", lambda nn: nn.MultiheadAttention(E, NH, batch_first=True),
     lambda d: [seq(L, True, dtype=d)] * 3, lambda d: dict(attn_mask=causal(L, d), is_causal=True,
                                                           need_weights=False)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,args,kwargs", MHA, ids=[c[0] for c in MHA])
def test_multihead_attention_matches_torch(backend, name, make, args, kwargs, dtype):
    tm, wm = make_pair(make, dtype)
    compare_modules(tm, wm, args(dtype), kwargs(dtype), dtype=dtype)


ENCODER_LAYERS = [  # (id, make, args(dtype), kwargs(dtype))
    ("post_norm_relu_causal", lambda nn: nn.TransformerEncoderLayer(E, NH, 16, 0.0),
     lambda d: [seq(L, dtype=d)], lambda d: dict(src_mask=causal(L, d))),
    ("pre_norm_gelu_batch_first_padding", lambda nn: nn.TransformerEncoderLayer(
        E, NH, 16, 0.0, activation="gelu", norm_first=True, batch_first=True),
     lambda d: [seq(L, True, dtype=d)], lambda d: dict(src_key_padding_mask=PAD_L, src_mask=causal(L, d))),
    ("callable_activation_no_bias_eps", lambda nn: nn.TransformerEncoderLayer(
        E, NH, 16, 0.0, activation=nn.functional.silu, bias=False, layer_norm_eps=1e-3),
     lambda d: [seq(L, dtype=d)], lambda d: {}),
    ("module_activation_unbatched_is_causal", lambda nn: nn.TransformerEncoderLayer(
        E, NH, 16, 0.0, activation=nn.GELU()),
     lambda d: [rand(L, E, dtype=d)], lambda d: dict(src_mask=causal(L, d), is_causal=True)),
]

DECODER_LAYERS = [
    ("post_norm_masks", lambda nn: nn.TransformerDecoderLayer(E, NH, 16, 0.0),
     lambda d: [seq(L, dtype=d), seq(S, seed=1, dtype=d)],
     lambda d: dict(tgt_mask=causal(L, d), memory_key_padding_mask=PAD_S, tgt_is_causal=True)),
    ("pre_norm_batch_first_bool_masks", lambda nn: nn.TransformerDecoderLayer(
        E, NH, 16, 0.0, activation="gelu", norm_first=True, batch_first=True),
     lambda d: [seq(L, True, dtype=d), seq(S, True, 1, d)],
     lambda d: dict(tgt_key_padding_mask=PAD_L, memory_mask=rand(L, S, seed=3) > 0.8)),
    ("unbatched_no_bias", lambda nn: nn.TransformerDecoderLayer(E, NH, 16, 0.0, bias=False),
     lambda d: [rand(L, E, dtype=d), rand(S, E, seed=1, dtype=d)], lambda d: dict(memory_mask=rand(L, S, dtype=d))),
]

STACKS = [
    ("encoder_norm_causal", lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(E, NH, 16, 0.0), 2,
                                                             norm=nn.LayerNorm(E)),
     lambda d: [seq(L, dtype=d)], lambda d: dict(mask=causal(L, d), is_causal=True, src_key_padding_mask=PAD_L)),
    ("encoder_batch_first_padding", lambda nn: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(E, NH, 16, 0.0, batch_first=True), 2, enable_nested_tensor=False),
     lambda d: [seq(L, True, dtype=d)], lambda d: dict(src_key_padding_mask=PAD_L)),
    ("decoder_norm_masks", lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(E, NH, 16, 0.0), 2,
                                                            norm=nn.LayerNorm(E)),
     lambda d: [seq(L, dtype=d), seq(S, seed=1, dtype=d)],
     lambda d: dict(tgt_mask=causal(L, d), tgt_key_padding_mask=PAD_L, memory_key_padding_mask=PAD_S)),
    ("transformer", lambda nn: nn.Transformer(E, NH, 1, 2, 16, 0.0),
     lambda d: [seq(S, dtype=d), seq(L, seed=1, dtype=d)],
     lambda d: dict(tgt_mask=causal(L, d), src_key_padding_mask=PAD_S, memory_key_padding_mask=PAD_S)),
    ("transformer_batch_first_pre_norm", lambda nn: nn.Transformer(E, NH, 2, 1, 16, 0.0, activation="gelu",
                                                                   batch_first=True, norm_first=True),
     lambda d: [seq(S, True, dtype=d), seq(L, True, 1, d)],
     lambda d: dict(src_mask=causal(S, d), tgt_mask=causal(L, d), memory_mask=causal(S, d, rows=L),
                    tgt_is_causal=True)),
    ("transformer_unbatched_no_bias", lambda nn: nn.Transformer(E, NH, 1, 1, 16, 0.0, bias=False,
                                                                layer_norm_eps=1e-3),
     lambda d: [rand(S, E, dtype=d), rand(L, E, seed=1, dtype=d)], lambda d: dict(tgt_mask=causal(L, d))),
]

MODULES = ENCODER_LAYERS + DECODER_LAYERS + STACKS


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,make,args,kwargs", MODULES, ids=[c[0] for c in MODULES])
def test_transformer_modules_match_torch(backend, name, make, args, kwargs, dtype):
    tm, wm = make_pair(make, dtype)
    compare_modules(tm, wm, args(dtype), kwargs(dtype), dtype=dtype)


@pytest.mark.parametrize("left_aligned", [True, False])
@pytest.mark.parametrize("mask_check", [True, False])
def test_encoder_in_eval_gives_torchs_nested_tensor_numbers(backend, mask_check, left_aligned):
    """PyTorch's fast path in eval without grad outputs zeros at padded positions (before norm) and,
    without mask_check, reads a row with k kept positions as its first k."""
    tm, wm = make_pair(lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(E, NH, 16, 0.0, batch_first=True),
                                                        2, mask_check=mask_check))
    tm.eval(), wm.eval()
    pad = np.array([[False] * L, [False] * (L - 1) + [True], [False] * 2 + [True] * (L - 2)])
    if not left_aligned:
        pad[1] = pad[1, ::-1]
    x = rand(3, L, E)
    for grad in (False, True):                   # with grad on (and parameters that need it): no fast path
        with torch.set_grad_enabled(grad), wg.set_grad_enabled(grad), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(pad))
            got = wm(wg.tensor(x), src_key_padding_mask=wg.tensor(pad))
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=2e-5, rtol=1e-4)
        fast_path = not grad and (left_aligned or not mask_check)
        assert (not got.detach().numpy()[2, 2:].any()) == fast_path


@pytest.mark.parametrize("size,dtype", [(3, None), (1, None), pytest.param(4, "float64", marks=pytest.mark.float64)])
def test_generate_square_subsequent_mask_matches_torch(backend, size, dtype):
    want = torch.nn.Transformer.generate_square_subsequent_mask(size, dtype=dtype and TORCH_DTYPES[dtype])
    got = wg.nn.Transformer.generate_square_subsequent_mask(size, dtype=dtype and getattr(wg, dtype))
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_state_dict_keys_and_init_match_torch():
    for make in (lambda nn: nn.Transformer(E, NH, 2, 2, 16), lambda nn: nn.MultiheadAttention(E, NH, kdim=3, vdim=5,
                                                                                           add_bias_kv=True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tm, wm = make(torch.nn), make(wg.nn)
        assert list(wm.state_dict()) == list(tm.state_dict())
    layer = wg.nn.TransformerEncoderLayer(E, NH, 16)
    enc = wg.nn.TransformerEncoder(layer, 2)
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    first, second = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
    assert first.tolist() == second.tolist() == layer.linear1.weight.tolist()
    mha = wg.nn.MultiheadAttention(E, NH)
    assert not mha.in_proj_bias.abs().sum().item() and not mha.out_proj.bias.abs().sum().item()


ERRORS = [
    ("embed_dim_not_divisible", lambda L_: L_.nn.MultiheadAttention(E, 3)),
    ("embed_dim_zero", lambda L_: L_.nn.MultiheadAttention(0, 2)),
    ("query_embed_dim", lambda L_: L_.nn.MultiheadAttention(E, NH)(*[L_.tensor(rand(L, N, E + 1))] * 3)),
    ("query_rank", lambda L_: L_.nn.MultiheadAttention(E, NH)(*[L_.tensor(rand(1, L, N, E))] * 3)),
    ("key_rank", lambda L_: L_.nn.MultiheadAttention(E, NH)(L_.tensor(rand(L, N, E)), L_.tensor(rand(S, E)),
                                                            L_.tensor(rand(S, E)))),
    ("key_value_shapes", lambda L_: L_.nn.MultiheadAttention(E, NH)(L_.tensor(rand(L, N, E)), L_.tensor(rand(S, N, E)),
                                                                    L_.tensor(rand(L, N, E)))),
    ("int_mask", lambda L_: L_.nn.MultiheadAttention(E, NH)(*[L_.tensor(rand(L, N, E))] * 3,
                                                            attn_mask=L_.tensor(np.zeros((L, L), np.int32)))),
    ("attn_mask_shape", lambda L_: L_.nn.MultiheadAttention(E, NH)(*[L_.tensor(rand(L, N, E))] * 3,
                                                                   attn_mask=L_.tensor(rand(L + 1, L)))),
    ("attn_mask_3d_shape", lambda L_: L_.nn.MultiheadAttention(E, NH)(*[L_.tensor(rand(L, N, E))] * 3,
                                                                      attn_mask=L_.tensor(rand(N, L, L)))),
    ("key_padding_shape", lambda L_: L_.nn.MultiheadAttention(E, NH)(*[L_.tensor(rand(L, N, E))] * 3,
                                                                     key_padding_mask=L_.tensor(PAD_S))),
    ("key_padding_rank", lambda L_: L_.nn.MultiheadAttention(E, NH)(*[L_.tensor(rand(L, N, E))] * 3,
                                                                    key_padding_mask=L_.tensor(PAD_S[0]))),
    ("is_causal_without_mask", lambda L_: L_.nn.MultiheadAttention(E, NH)(*[L_.tensor(rand(L, N, E))] * 3,
                                                                          is_causal=True)),
    ("encoder_is_causal_without_mask", lambda L_: L_.nn.TransformerEncoderLayer(E, NH, 16)(
        L_.tensor(rand(L, N, E)), is_causal=True)),
    ("bad_activation", lambda L_: L_.nn.TransformerDecoderLayer(E, NH, 16, activation="tanh")),
    ("transformer_batch", lambda L_: L_.nn.Transformer(E, NH, 1, 1, 16)(L_.tensor(rand(S, N, E)),
                                                                        L_.tensor(rand(L, N + 1, E)))),
    ("transformer_d_model", lambda L_: L_.nn.Transformer(E, NH, 1, 1, 16)(L_.tensor(rand(S, N, E + 2)),
                                                                          L_.tensor(rand(L, N, E + 2)))),
]


@pytest.mark.parametrize("name,call", ERRORS, ids=[c[0] for c in ERRORS])
def test_bad_input_raises_torchs_exception_type(backend, name, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(call)


def seq2seq(nn):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(7, E, padding_idx=0)
            self.transformer = nn.Transformer(E, NH, 1, 1, 16, dropout=0.0, batch_first=True)
            self.head = nn.Linear(E, 7)

        def forward(self, src, tgt):
            mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
            return self.head(self.transformer(self.embed(src), self.embed(tgt), tgt_mask=mask,
                                              src_key_padding_mask=src == 0))
    return Model()


def test_sgd_training_matches_torch(backend):
    tm, wm = make_pair(seq2seq)
    src = np.array([[1, 2, 3, 0], [4, 5, 6, 2]], np.int32)
    tgt, out = np.array([[1, 3, 5], [2, 4, 6]], np.int32), np.array([3, 5, 1, 4, 6, 2], np.int32)

    def loss(lib, long):
        return lambda m: lib.nn.functional.cross_entropy(
            m(lib.tensor(src, dtype=long), lib.tensor(tgt, dtype=long)).reshape(-1, 7), lib.tensor(out, dtype=long))
    t_losses = sgd_losses(tm, loss(torch, torch.long), 5, 0.1, torch.optim)
    w_losses = sgd_losses(wm, loss(wg, wg.long), 5, 0.1, wg.optim)
    assert t_losses[-1] < t_losses[0]
    np.testing.assert_allclose(w_losses, t_losses, rtol=1e-4)
