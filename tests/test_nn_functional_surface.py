"""torch.nn.functional names filled in from docs/porting.md's "not yet": grid_sample and
affine_grid, group_norm, pdist, gumbel_softmax, celu_/selu_, the deprecated upsample names and
multi_head_attention_forward, against torch (forward, finite differences in float64 on cpu, backend
agreement in float32, torch's gradients)."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg
import webgrad.nn.functional as F
from nn_compare import load_torch_weights
from opinfo import OpCase, op_tests, torch_reference

TF = torch.nn.functional
rng = np.random.default_rng(0)
IMAGE, IMAGE3 = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((1, 2, 3, 4, 3))
GRID, GRID3 = rng.uniform(-1.3, 1.3, (2, 3, 6, 2)), rng.uniform(-1.2, 1.2, (1, 2, 2, 3, 3))


def _grid_case(mode, padding, align, image=IMAGE, grid=GRID):
    return OpCase(f"grid_sample-{mode}-{padding}-{align}",
                  lambda x, g: F.grid_sample(x, g, mode, padding, align),
                  torch_reference(lambda x, g: TF.grid_sample(x, g, mode, padding, align)), [image, grid],
                  atol=1e-5, grad_atol=1e-4, id=f"grid_sample-{mode}-{padding}-{align}-{image.ndim}d")


CASES = [_grid_case(m, p, a) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
         for a in (False, True)]
CASES += [_grid_case("bilinear", p, False, IMAGE3, GRID3) for p in ("zeros", "reflection")]
CASES += [
    OpCase("affine_grid", lambda t: F.affine_grid(t, [2, 3, 4, 5], False),
           torch_reference(lambda t: TF.affine_grid(t, [2, 3, 4, 5], False)), [rng.standard_normal((2, 2, 3))]),
    OpCase("affine_grid3d", lambda t: F.affine_grid(t, [1, 1, 2, 3, 4], True),
           torch_reference(lambda t: TF.affine_grid(t, [1, 1, 2, 3, 4], True)), [rng.standard_normal((1, 3, 4))]),
    OpCase("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b),
           torch_reference(lambda x, w, b: TF.group_norm(x, 2, w, b)),
           [rng.standard_normal((2, 4, 3)), rng.standard_normal(4), rng.standard_normal(4)], atol=1e-5),
    OpCase("pdist", lambda x: F.pdist(x), torch_reference(TF.pdist), [rng.standard_normal((4, 3))]),
    OpCase("pdist-p1.5", lambda x: F.pdist(x, 1.5), torch_reference(lambda x: TF.pdist(x, 1.5)),
           [rng.standard_normal((5, 2))]),
]
globals().update(op_tests(CASES))


def test_grid_sample_gradients_match_torch(backend):
    for mode, padding in (("bilinear", "zeros"), ("bilinear", "reflection"), ("nearest", "border")):
        tx, tg = (torch.tensor(a, dtype=torch.float32, requires_grad=True) for a in (IMAGE, GRID))
        wx, wgr = (wg.tensor(a.astype("float32"), requires_grad=True) for a in (IMAGE, GRID))
        weights = rng.standard_normal((2, 3, 3, 6)).astype("float32")
        (TF.grid_sample(tx, tg, mode, padding, False) * torch.tensor(weights)).sum().backward()
        (F.grid_sample(wx, wgr, mode, padding, False) * wg.tensor(weights)).sum().backward()
        np.testing.assert_allclose(np.asarray(wx.grad.tolist()), tx.grad.numpy(), atol=1e-4)
        np.testing.assert_allclose(np.asarray(wgr.grad.tolist()), tg.grad.numpy(), atol=1e-4)


def test_spatial_transformer_pair_and_errors(backend):
    theta = wg.tensor([[[0.5, 0.1, 0.2], [-0.1, 0.8, 0.0]]])
    x = wg.tensor(IMAGE[:1].astype("float32"))
    with pytest.warns(UserWarning, match="align_corners=False"):
        grid = F.affine_grid(theta, list(x.shape))
    with pytest.warns(UserWarning, match="align_corners=False"):
        out = F.grid_sample(x, grid)
    expected = TF.grid_sample(torch.tensor(IMAGE[:1], dtype=torch.float32),
                              TF.affine_grid(torch.tensor(theta.tolist()), list(x.shape), False), align_corners=False)
    np.testing.assert_allclose(np.asarray(out.tolist()), expected.numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(x, grid, mode="cubic", align_corners=False)
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(x, grid, padding_mode="wrap", align_corners=False)
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.grid_sample(x, grid, mode="bicubic", align_corners=False)
    with pytest.raises(RuntimeError, match="grid_sampler"):
        F.grid_sample(x, grid[..., :1], align_corners=False)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(wg.ones(1, 3, 3), [1, 1, 2, 2], align_corners=False)
    with pytest.raises(NotImplementedError, match="4D and 5D"):
        F.affine_grid(theta, [1, 2, 2], align_corners=False)
    with pytest.raises(ValueError, match="floating point"):
        F.affine_grid(wg.ones(1, 2, 3, dtype=wg.long), [1, 1, 2, 2], align_corners=False)


def test_group_norm_errors_and_module_shares_it(backend):
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(wg.ones(2, 3, 4), 2)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.group_norm(wg.ones(3), 1)
    with pytest.raises(RuntimeError, match="weight"):
        F.group_norm(wg.ones(2, 4, 3), 2, wg.ones(3))
    m = wg.nn.GroupNorm(2, 4)
    x = wg.tensor(rng.standard_normal((2, 4, 3)).astype("float32"))
    assert m(x).tolist() == F.group_norm(x, 2, m.weight, m.bias).tolist()


def test_pdist_errors():
    with pytest.raises(RuntimeError, match="2D"):
        F.pdist(wg.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="non-negative"):
        F.pdist(wg.ones(2, 2), -1.0)


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_draws_as_torch(backend, hard):
    logits = rng.standard_normal((3, 4)).astype("float32")
    wl, tl = wg.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    wg.manual_seed(11); torch.manual_seed(11)
    wy, ty = F.gumbel_softmax(wl, tau=0.7, hard=hard, dim=0), TF.gumbel_softmax(tl, tau=0.7, hard=hard, dim=0)
    np.testing.assert_allclose(np.asarray(wy.tolist()), ty.detach().numpy(), atol=1e-5)
    weights = rng.standard_normal((3, 4)).astype("float32")
    (wy * wg.tensor(weights)).sum().backward(); (ty * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(np.asarray(wl.grad.tolist()), tl.grad.numpy(), atol=1e-5)
    with pytest.warns(UserWarning, match="eps"):
        F.gumbel_softmax(wl, eps=1e-5)


def test_inplace_celu_selu(backend):
    values = [-1.5, 0.0, 2.0]
    for w_fn, t_fn, args in ((F.celu_, TF.celu_, (0.7,)), (F.selu_, TF.selu_, ())):
        w, t = wg.tensor(values), torch.tensor(values)
        assert w_fn(w, *args) is w
        t_fn(t, *args)
        np.testing.assert_allclose(np.asarray(w.tolist()), t.numpy(), atol=1e-6)


@pytest.mark.parametrize("name,kwargs", [("upsample", dict(scale_factor=2, mode="bilinear", align_corners=False)),
                                         ("upsample_nearest", dict(size=(3, 5))),
                                         ("upsample_bilinear", dict(scale_factor=2))])
def test_deprecated_upsample_names(backend, name, kwargs):
    x = rng.standard_normal((1, 2, 2, 3)).astype("float32")
    with pytest.warns(UserWarning, match=f"nn.functional.{name}` is deprecated"):
        out = getattr(F, name)(wg.tensor(x), **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(TF, name)(torch.tensor(x), **kwargs)
    np.testing.assert_allclose(np.asarray(out.tolist()), expected.numpy(), atol=1e-5)


@pytest.mark.parametrize("kw", [{}, dict(add_bias_kv=True, add_zero_attn=True), dict(kdim=3, vdim=5)])
def test_multi_head_attention_forward_against_torch(backend, kw):
    torch.manual_seed(0)
    tm, wm = torch.nn.MultiheadAttention(4, 2, **kw), wg.nn.MultiheadAttention(4, 2, **kw)
    load_torch_weights(tm, wm)
    arrays = [rng.standard_normal((n, 2, d)).astype("float32")
              for n, d in ((3, 4), (5, kw.get("kdim", 4)), (5, kw.get("vdim", 4)))]
    mask = rng.standard_normal((3, 5)).astype("float32")

    def run(f, m, tensor):
        q, k, v = (tensor(a) for a in arrays)
        return f(q, k, v, 4, 2, m.in_proj_weight, m.in_proj_bias, m.bias_k, m.bias_v, m.add_zero_attn, 0.0,
                 m.out_proj.weight, m.out_proj.bias, attn_mask=tensor(mask), use_separate_proj_weight="kdim" in kw,
                 q_proj_weight=m.q_proj_weight, k_proj_weight=m.k_proj_weight, v_proj_weight=m.v_proj_weight,
                 average_attn_weights=False)
    (wo, ww), (to, tw) = run(F.multi_head_attention_forward, wm, wg.tensor), run(TF.multi_head_attention_forward, tm,
                                                                                  torch.tensor)
    np.testing.assert_allclose(np.asarray(wo.tolist()), to.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(np.asarray(ww.tolist()), tw.detach().numpy(), atol=1e-5)
    with pytest.raises(AssertionError, match="embedding dimension"):
        F.multi_head_attention_forward(wg.ones(3, 2, 4), wg.ones(3, 2, 4), wg.ones(3, 2, 4), 8, 2,
                                       wm.in_proj_weight, None, None, None, False, 0.0, wm.out_proj.weight, None)
