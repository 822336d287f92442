"""scaled_dot_product_attention as the fused Attention kernel and its fused backward AttentionGrad
(whose own gradient is written with ops): against PyTorch with bool and float masks (broadcast over
batch and heads, and needing a gradient), causal cuts, scales, grouped-query attention, batch
broadcasting, rows that see no key, dtypes; finite differences to second order; the GPU's tiled
kernels agreeing with cpu, also when the work is split over several dispatches."""
import math

import numpy as np
import pytest

import webgrad as wg
import webgrad.nn.functional as F
from opinfo import OpCase, gradcheck, op_tests

torch = pytest.importorskip("torch")
TF = torch.nn.functional
K = wg.kernel_names

rng = np.random.default_rng(5)


def rn(*shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def sdpa(**kw):
    return lambda q, k, v, *m: F.scaled_dot_product_attention(q, k, v, *m, **kw)


def ref(**kw):
    def fn(q, k, v, *m):
        masks = [torch.tensor(a) for a in m]
        return TF.scaled_dot_product_attention(*[torch.tensor(a) for a in (q, k, v)], *masks, **kw).numpy()
    return fn


def padding(shape, p=0.7):
    """A bool mask with some False (masked) entries and no row that is all False."""
    m = rng.uniform(size=shape) < p
    m[..., 0] = True
    return m


CASES = [
    OpCase("sdpa", sdpa(), ref(), [rn(2, 3, 4), rn(2, 5, 4), rn(2, 5, 3)], second_order=True),
    OpCase("sdpa_4d", sdpa(), ref(), [rn(2, 2, 3, 4), rn(2, 2, 3, 4), rn(2, 2, 3, 4)]),
    OpCase("sdpa_2d", sdpa(), ref(), [rn(3, 4), rn(6, 4), rn(6, 2)]),
    OpCase("sdpa_causal", sdpa(is_causal=True), ref(is_causal=True), [rn(2, 4, 3), rn(2, 4, 3), rn(2, 4, 2)],
           second_order=True),
    OpCase("sdpa_causal_wide", sdpa(is_causal=True), ref(is_causal=True), [rn(1, 3, 4), rn(1, 6, 4), rn(1, 6, 4)]),
    OpCase("sdpa_causal_tall", sdpa(is_causal=True), ref(is_causal=True), [rn(1, 6, 4), rn(1, 3, 4), rn(1, 3, 4)]),
    OpCase("sdpa_float_mask", sdpa(), ref(), [rn(2, 3, 4), rn(2, 5, 4), rn(2, 5, 3), rn(3, 5)], second_order=True),
    OpCase("sdpa_mask_per_batch", sdpa(), ref(), [rn(2, 3, 2, 4), rn(2, 3, 3, 4), rn(2, 3, 3, 2), rn(2, 1, 2, 3)],
           second_order=True),
    OpCase("sdpa_mask_per_head", sdpa(), ref(), [rn(2, 3, 2, 4), rn(2, 3, 3, 4), rn(2, 3, 3, 2), rn(3, 1, 3)]),
    OpCase("sdpa_key_padding", sdpa(), ref(), [rn(2, 2, 3, 4), rn(2, 2, 5, 4), rn(2, 2, 5, 3),
                                               np.where(padding((2, 1, 1, 5)), 0.0, -np.inf)]),
    OpCase("sdpa_bool_mask", sdpa(), ref(), [rn(2, 3, 4), rn(2, 5, 4), rn(2, 5, 3), padding((3, 5))]),
    OpCase("sdpa_scale", sdpa(scale=0.3), ref(scale=0.3), [rn(2, 3, 4), rn(2, 5, 4), rn(2, 5, 3)]),
    OpCase("sdpa_gqa", sdpa(enable_gqa=True), ref(enable_gqa=True), [rn(1, 4, 3, 4), rn(1, 2, 5, 4), rn(1, 2, 5, 2)],
           second_order=True),
    OpCase("sdpa_gqa_causal_mask", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True,
                                                                                  is_causal=True),
           ref(enable_gqa=True, is_causal=True), [rn(2, 6, 3, 4), rn(2, 2, 3, 4), rn(2, 2, 3, 4)]),
    OpCase("sdpa_gqa_uneven_heads", sdpa(enable_gqa=True), ref(enable_gqa=True),
           [rn(1, 6, 2, 4), rn(1, 3, 3, 4), rn(1, 2, 3, 4)]),
    OpCase("sdpa_batch_broadcast", sdpa(), ref(), [rn(2, 3, 2, 4), rn(1, 3, 4, 4), rn(3, 4, 2)]),
    OpCase("sdpa_no_keys", sdpa(), ref(), [rn(2, 3, 4), np.zeros((2, 0, 4)), np.zeros((2, 0, 5))]),
    OpCase("sdpa_no_queries", sdpa(), ref(), [np.zeros((2, 0, 4)), rn(2, 3, 4), rn(2, 3, 5)]),
    OpCase("sdpa_long_rows", sdpa(is_causal=True), ref(is_causal=True), [rn(2, 70, 8), rn(2, 70, 8), rn(2, 70, 8)],
           rtol=1e-4, atol=1e-5),
    OpCase("sdpa_wide_heads", sdpa(), ref(), [rn(1, 3, 40), rn(1, 5, 40), rn(1, 5, 33)], rtol=1e-4, atol=1e-5),
]

globals().update(op_tests(CASES))


def _grads_against_torch(arrays, dtype=np.float32, rtol=1e-4, atol=1e-5, **kw):
    """Forward and every input's gradient (a float mask's too) against PyTorch."""
    ours = [wg.tensor(a.astype(dtype) if a.dtype.kind == "f" else a, requires_grad=a.dtype.kind == "f")
            for a in arrays]
    theirs = [torch.tensor(a.astype(dtype) if a.dtype.kind == "f" else a, requires_grad=a.dtype.kind == "f")
              for a in arrays]
    y, yt = F.scaled_dot_product_attention(*ours, **kw), TF.scaled_dot_product_attention(*theirs, **kw)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=rtol, atol=atol)
    dy = rn(*yt.shape).astype(dtype)
    y.backward(wg.tensor(dy))
    yt.backward(torch.tensor(dy))
    for k, (a, t) in enumerate(zip(ours, theirs)):
        if t.requires_grad:
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=rtol * 10, atol=atol * 10,
                                       err_msg=f"gradient of input {k}")


@pytest.mark.parametrize("L,S,E,Ev", [(1, 1, 1, 1), (5, 7, 8, 3), (64, 64, 32, 32), (65, 130, 16, 24), (3, 200, 4, 4)])
@pytest.mark.parametrize("variant", ["plain", "causal", "bool_mask", "float_mask_grad", "gqa"])
def test_matches_torch(backend, L, S, E, Ev, variant):
    heads, kv_heads = (4, 2) if variant == "gqa" else (2, 2)
    arrays = [rn(2, heads, L, E), rn(2, kv_heads, S, E), rn(2, kv_heads, S, Ev)]
    kw = {"is_causal": True} if variant == "causal" else {"enable_gqa": True} if variant == "gqa" else {}
    if variant == "bool_mask":
        arrays.append(padding((L, S)))
    if variant == "float_mask_grad":
        arrays.append(rn(2, 1, L, S))
    _grads_against_torch(arrays, **kw)


@pytest.mark.parametrize("q_scale", [0.5, 30.0])
def test_large_scores_as_torch(backend, q_scale):
    """Scores from a few to hundreds (the cpu kernel skips softmax's max shift only where the
    Cauchy-Schwarz bound keeps exp in range): PyTorch's values and gradients, no inf or NaN."""
    _grads_against_torch([rn(2, 3, 6, 4, scale=q_scale), rn(2, 3, 7, 4), rn(2, 3, 7, 5)], is_causal=True)
    _grads_against_torch([rn(2, 5, 4, scale=q_scale), rn(2, 5, 4), rn(2, 5, 3)])


def test_rows_that_see_no_key_give_zeros(backend):
    """As PyTorch's SDPA: 0 out and 0 gradient where a query may attend to nothing (not NaN)."""
    mask = padding((4, 5))
    mask[1] = False
    _grads_against_torch([rn(2, 4, 3), rn(2, 5, 3), rn(2, 5, 2), mask])
    out = F.scaled_dot_product_attention(wg.ones(1, 4, 3), wg.ones(1, 5, 3), wg.ones(1, 5, 2),
                                         attn_mask=wg.tensor(mask))
    assert out[0, 1].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])   # where the backend holds it
def test_other_dtypes_as_torch(backend, dtype):
    arrays = [rn(2, 2, 5, 8).astype(np.float32), rn(2, 2, 6, 8).astype(np.float32), rn(2, 2, 6, 4).astype(np.float32)]
    ours = [wg.tensor(a, backend=backend).to(dtype).requires_grad_() for a in arrays]
    theirs = [torch.tensor(a).to(getattr(torch, dtype)).requires_grad_() for a in arrays]
    y = F.scaled_dot_product_attention(*ours, is_causal=True)
    yt = TF.scaled_dot_product_attention(*theirs, is_causal=True)
    assert y.dtype.name == dtype
    tol = {"float16": 4e-3, "bfloat16": 3e-2, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(y.detach().numpy().astype(np.float64), yt.double().detach().numpy(), rtol=tol, atol=tol)
    y.sum().backward()
    yt.sum().backward()
    for a, t in zip(ours, theirs):
        assert a.grad.dtype.name == dtype
        np.testing.assert_allclose(a.grad.numpy().astype(np.float64), t.grad.double().numpy(),
                                   rtol=tol * 4, atol=tol * 4)


def test_dropout(backend):
    q, k, v = (wg.tensor(rn(2, 4, 3).astype(np.float32), requires_grad=True) for _ in range(3))
    wg.manual_seed(3)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    wg.manual_seed(3)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    plain = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert not np.allclose(a.detach().numpy(), plain.detach().numpy())
    a.sum().backward()
    assert np.isfinite(q.grad.numpy()).all() and np.abs(v.grad.numpy()).sum() > 0
    assert F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).abs().sum().item() == 0.0


def test_dropout_keeps_masks_causal_and_empty_rows():
    mask = padding((4, 4))
    mask[2] = False
    q, k, v = (rn(1, 4, 3).astype(np.float32) for _ in range(3))
    for kw in ({"attn_mask": mask}, {"is_causal": True}):
        wg.manual_seed(0)
        out = F.scaled_dot_product_attention(*map(wg.tensor, (q, k, v)), dropout_p=0.3,
                                             **{n: wg.tensor(m) if n == "attn_mask" else m for n, m in kw.items()})
        torch.manual_seed(0)        # the same seed drops the same weights as PyTorch's (an empty row stays 0)
        expected = torch.nn.functional.scaled_dot_product_attention(
            *map(torch.tensor, (q, k, v)), dropout_p=0.3,
            **{n: torch.tensor(m) if n == "attn_mask" else m for n, m in kw.items()})
        assert np.isfinite(out.numpy()).all() and (out.numpy() != 0).any()
        np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_errors_as_torch(backend):
    q = wg.ones(2, 3, 4)
    cases = [
        (RuntimeError, "not both", dict(attn_mask=wg.ones(3, 3, dtype=wg.bool), is_causal=True)),
        (RuntimeError, "attn_mask must be bool or the query's dtype", dict(attn_mask=wg.ones(3, 3, dtype=wg.int64))),
        (RuntimeError, "cannot be broadcast", dict(attn_mask=wg.ones(5, 3))),
        (RuntimeError, "dropout_p must be between 0 and 1", dict(dropout_p=1.5)),
    ]
    for error, message, kw in cases:
        with pytest.raises(error, match=message):
            F.scaled_dot_product_attention(q, q, q, **kw)
    with pytest.raises(RuntimeError, match="must be .*L, E"):
        F.scaled_dot_product_attention(q, wg.ones(2, 3, 5), q)
    with pytest.raises(RuntimeError, match="at least 2-D"):
        F.scaled_dot_product_attention(wg.ones(4), wg.ones(4), wg.ones(4))
    with pytest.raises(RuntimeError, match="one floating dtype"):
        F.scaled_dot_product_attention(q, q, wg.ones(2, 3, 4, dtype=wg.int64))
    with pytest.raises(RuntimeError, match="must divide the number of heads"):
        F.scaled_dot_product_attention(wg.ones(1, 6, 2, 4), wg.ones(1, 4, 2, 4), wg.ones(1, 4, 2, 4), enable_gqa=True)
    with pytest.raises(TypeError):
        F.scaled_dot_product_attention(q, q, q, None, 0.0, False, 0.5)      # scale is keyword-only, as in PyTorch
    with pytest.raises(TypeError, match="bogus"):
        F.scaled_dot_product_attention(q, q, q, bogus=1)


def test_one_kernel_each_way():
    q, k, v = (wg.tensor(rn(2, 4, 3), requires_grad=True) for _ in range(3))
    with wg.profile() as prof:
        F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
    assert prof.stats[K.ATTENTION].calls == 1 and prof.stats[K.ATTENTION_GRAD].calls == 1
    assert not {K.MATMUL, K.SOFTMAX, K.EXP} & set(prof.stats)


def test_attention_grad_second_order_directly():
    """AttentionGrad's rule, with out and lse from the forward (its second order is the gradient of
    this composite, which the finite differences see through the recomputed forward)."""
    def backward_of(q, k, v, dout, mask):
        out, lse = wg.run_kernel(K.ATTENTION, q, k, v, mask, scale=0.7, causal=True, group=2, mask_div=1)
        dlse = wg.zeros_like(lse)
        grads = wg.run_kernel(K.ATTENTION_GRAD, dout, q, k, v, out, lse, dlse, mask, scale=0.7, causal=True,
                              group=2, mask_div=1, mask_grad=True)
        return wg.cat([g.reshape(-1) for g in grads])
    gradcheck(backward_of, rn(4, 3, 2), rn(2, 3, 2), rn(2, 3, 3), rn(4, 3, 3), rn(2, 3, 3), what="AttentionGrad")


def test_lse_gradient_is_taken():
    """A gradient reaching the kernel's lse output flows on (dS gains P * dlse)."""
    def f(q, k, v):
        out, lse = wg.run_kernel(K.ATTENTION, q, k, v, scale=0.5, causal=False, group=1, mask_div=1)
        return out.sum(-1) + 2 * lse
    gradcheck(f, rn(2, 3, 4), rn(2, 4, 4), rn(2, 4, 2), what="Attention lse")


# ---------------------------------------------------------------- the GPU's tiled kernels

def _agree(arrays, **kw):
    """wgpu against cpu (float32), forward and gradients."""
    results = []
    for be in ("cpu", "wgpu"):
        ts = [wg.tensor(a.astype(np.float32), backend=be, requires_grad=True) for a in arrays]
        y = F.scaled_dot_product_attention(*ts, **kw)
        y.backward(wg.tensor(np.random.default_rng(0).standard_normal(y.shape).astype(np.float32), backend=be))
        results.append([y.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-4)


def test_gpu_splits_long_work_over_dispatches(gpu, monkeypatch):
    """A tiny loop budget forces one tile per dispatch in every kernel: the result is the same."""
    from webgrad.backends.gpu import attention as gpu_attention
    arrays = [rn(1, 2, 70, 8), rn(1, 1, 90, 8), rn(1, 1, 90, 4), rn(2, 70, 90)]
    _agree(arrays, enable_gqa=True)
    monkeypatch.setattr(gpu_attention, "LOOP_BUDGET", 1)
    _agree(arrays, enable_gqa=True)
    _agree(arrays[:3], is_causal=True, enable_gqa=True)


def test_gpu_long_key_sequence(gpu):
    """16384 keys: more loop iterations than lavapipe lets one invocation run, so several dispatches."""
    _agree([rn(1, 3, 4), rn(1, 16384, 4), rn(1, 16384, 4)])


def test_gpu_wide_heads(gpu):
    _agree([rn(1, 3, 300), rn(1, 5, 300), rn(1, 5, 200)])
    from webgrad.backends.gpu import GpuLimitError
    q = wg.ones(1, 2, 3000, backend="wgpu")
    with pytest.raises(GpuLimitError, match="head dims E=3000 and Ev=3000"):
        F.scaled_dot_product_attention(q, q, q).tolist()


# ---------------------------------------------------------------- the modules that go through it

def _mha_pair(**kw):
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=True, **kw)
    wm = wg.nn.MultiheadAttention(8, 2, batch_first=True, **kw)
    wm.load_state_dict({k: wg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, wm


def test_multihead_attention_without_weights_is_the_fused_kernel(backend):
    """need_weights=False goes through scaled_dot_product_attention, as in PyTorch: one Attention
    kernel, and a query whose keys are all padded gets zeros there (NaN when weights are asked for)."""
    tm, wm = _mha_pair()
    x = rn(2, 3, 8).astype(np.float32)
    pad = np.array([[True, True, True], [False, True, False]])
    xs, xt = wg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with wg.profile() as prof:
        out, w = wm(xs, xs, xs, key_padding_mask=wg.tensor(pad), need_weights=False)
        out.sum().backward()
    outt, _ = tm(xt, xt, xt, key_padding_mask=torch.tensor(pad), need_weights=False)
    outt.sum().backward()
    assert w is None and prof.stats[K.ATTENTION].calls == 1 and prof.stats[K.ATTENTION_GRAD].calls == 1
    assert not np.isnan(outt.detach().numpy()).any()
    np.testing.assert_allclose(out.detach().numpy(), outt.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    ours = wm(xs, xs, xs, key_padding_mask=wg.tensor(pad))[0].detach().numpy()
    theirs = tm(xt, xt, xt, key_padding_mask=torch.tensor(pad))[0].detach().numpy()
    assert np.isnan(ours[0]).all() and np.isnan(theirs[0]).all()
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)


def test_encoder_layer_trains_through_the_fused_kernels(backend):
    """TransformerEncoderLayer (pre-norm, GELU, causal) in training: its attention, layer norms and
    GELU run the fused kernels, and the gradients are PyTorch's."""
    torch.manual_seed(0)
    make = (lambda nn: nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation="gelu", batch_first=True,
                                                  norm_first=True))
    tm, wm = make(torch.nn), make(wg.nn)
    wm.load_state_dict({k: wg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = rn(2, 5, 8).astype(np.float32)
    mask = np.triu(np.full((5, 5), -np.inf, dtype=np.float32), 1)
    with wg.profile() as prof:
        wm(wg.tensor(x), src_mask=wg.tensor(mask), is_causal=True).square().sum().backward()
    tm(torch.tensor(x), src_mask=torch.tensor(mask), is_causal=True).square().sum().backward()
    for name in (K.ATTENTION, K.ATTENTION_GRAD, K.LAYER_NORM, K.LAYER_NORM_GRAD, K.GELU, K.GELU_GRAD):
        assert prof.stats[name].calls >= 1, name
    theirs = dict(tm.named_parameters())
    for name, p in wm.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs[name].grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
