"""PyTorch's top-level ATen names made from webgrad's ops by table (``webgrad.ops.aten``): the ``*_copy``
views in new storage, ``torch.abs_(x)``-style in-place functions, and ``nn.functional``'s ops under ATen's
positional signatures: each against torch on every backend."""
import inspect
import math

import numpy as np
import pytest
import torch

import webgrad as wg
from webgrad.ops import aten

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10

COPY_CALLS = {
    "view_copy": lambda m, x: m.view_copy(x, (6, 4)),
    "permute_copy": lambda m, x: m.permute_copy(x, (2, 0, 1)),
    "transpose_copy": lambda m, x: m.transpose_copy(x, 0, 2),
    "t_copy": lambda m, x: m.t_copy(x[0]),
    "expand_copy": lambda m, x: m.expand_copy(x[:, :1], (2, 5, 4)),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x[:1]),
    "squeeze_copy_dim": lambda m, x: m.squeeze_copy(x[:, :1], 1),
    "unsqueeze_copy": lambda m, x: m.unsqueeze_copy(x, -1),
    "select_copy": lambda m, x: m.select_copy(x, 1, -1),
    "slice_copy": lambda m, x: m.slice_copy(x, 2, 1, None, 2),
    "slice_copy_defaults": lambda m, x: m.slice_copy(x),
    "split_copy": lambda m, x: m.split_copy(x, 2, 2)[1],
    "split_with_sizes_copy": lambda m, x: m.split_with_sizes_copy(x, [1, 2], 1)[1],
    "unbind_copy": lambda m, x: m.unbind_copy(x, 2)[3],
    "diagonal_copy": lambda m, x: m.diagonal_copy(x, 1, 1, 2),
    "detach_copy": lambda m, x: m.detach_copy(x),
    "narrow_copy": lambda m, x: m.narrow_copy(x, 2, 1, 2),
    "narrow_copy_method": lambda m, x: x.narrow_copy(1, 0, 2),
    "alias_copy": lambda m, x: m.alias_copy(x),
    "as_strided_copy": lambda m, x: m.as_strided_copy(x, (3, 3), (1, 4), 2),
    "unfold_copy": lambda m, x: m.unfold_copy(x, 2, 2, 1),
}


def test_every_copy_is_tested():
    assert {name.replace("_method", "").replace("_dim", "").replace("_defaults", "") for name in COPY_CALLS} \
        == set(aten.COPIES)


@pytest.mark.parametrize("name", COPY_CALLS)
def test_copies_as_torch(name, backend):
    results = {}
    for lib, dev in ((torch, "cpu"), (wg, backend)):
        x = lib.tensor(X, device=dev, requires_grad=name != "detach_copy")   # (torch refuses detach_copy's grad)
        y = COPY_CALLS[name](lib, x * 1)
        values = np.asarray(y.tolist())
        if y.requires_grad:
            (y * 2).sum().backward()
        with lib.no_grad():
            y.fill_(-1)                       # a copy: the input keeps its values
        results[lib] = (values, None if x.grad is None else np.asarray(x.grad.tolist()), y.requires_grad,
                        x.tolist() == X.tolist() or np.allclose(x.detach().numpy(), X))
    (tv, tg, tr, tk), (wv, wgr, wr, wk) = results[torch], results[wg]
    np.testing.assert_allclose(wv, tv, rtol=1e-6)
    assert (wr, wk) == (tr, tk) == (name != "detach_copy", True)
    assert not wg.detach_copy(wg.ones(1, requires_grad=True) * 2).requires_grad
    if tg is not None:
        np.testing.assert_allclose(wgr, tg, rtol=1e-6)


def test_copies_refuse_what_torch_refuses(backend):
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'dims'"):
        wg.transpose_copy(wg.ones(2, 2), 0, 1, dims=(0, 1))
    with pytest.raises(TypeError, match="missing a required argument: 'dim1'"):
        wg.transpose_copy(wg.ones(2, 2), 0)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        wg.view_copy(wg.ones(2, 3).t(), (6,))


UNIT = np.array([0.2, 0.5, 0.7], np.float32)
IN_PLACE_ARGS = {   # name: (input, arguments) for those that need more than the default ones
    "acosh_": (UNIT + 1, ()), "arccosh_": (UNIT + 1, ()), "clamp_": (UNIT, (0.3, 0.6)), "clip_": (UNIT, (0.3, 0.6)),
    "clamp_max_": (UNIT, (0.4,)), "clamp_min_": (UNIT, (0.4,)), "fill_": (UNIT, (2.5,)), "xlogy_": (UNIT, (3.0,)),
    "round_": (UNIT * 10, ()), "logit_": (UNIT, (1e-3,)),
    # a tensor argument, made by each library: lib -> arguments
    "gcd_": (np.array([4, 6, 9]), lambda lib: (lib.tensor([6, 4, 3]),)),
    "lcm_": (np.array([4, 6, 9]), lambda lib: (lib.tensor([6, 4, 3]),)),
    "ldexp_": (UNIT, lambda lib: (lib.tensor([1, 2, 3]),)),
}


@pytest.mark.parametrize("name", [n for n in aten.IN_PLACE if hasattr(wg, n) and n != "addmv_"])
def test_in_place_functions_as_torch(name, backend):
    data, args = IN_PLACE_ARGS.get(name, (UNIT, ()))
    t, w = torch.tensor(data), wg.tensor(data, device=backend)
    ours, theirs = (args(wg), args(torch)) if callable(args) else (args, args)
    assert getattr(wg, name)(w, *ours) is w
    getattr(torch, name)(t, *theirs)
    np.testing.assert_allclose(np.asarray(w.tolist()), t.numpy(), rtol=1e-5, atol=1e-6)


def test_in_place_function_signatures_and_addmv(backend):
    assert list(inspect.signature(wg.clamp_).parameters)[:3] == ["input", "min", "max"]
    y = wg.ones(2, device=backend)
    wg.addmv_(y, wg.ones(2, 3), wg.arange(3.0), beta=2, alpha=0.5)
    assert y.tolist() == [3.5, 3.5]
    with pytest.raises(TypeError, match="unexpected keyword argument 'minimum'"):
        wg.clamp_(y, minimum=0)
    y = wg.ones(2, requires_grad=True) * 2
    assert wg.detach_(y) is y and not y.requires_grad      # a non-leaf, detached in place
    grads = []
    for lib in (torch, wg):
        x = lib.ones(2, requires_grad=True)
        filled = lib.fill(x, 3.0)
        assert filled.tolist() == [3.0, 3.0] and x.tolist() == [1.0, 1.0]
        filled.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [0.0, 0.0]


R = np.random.default_rng(0)
IMG = R.standard_normal((2, 4, 6, 6)).astype(np.float32)
SEQ = R.standard_normal((2, 4, 8)).astype(np.float32)
VOL = R.standard_normal((1, 2, 4, 4, 4)).astype(np.float32)
P = (R.random((3, 5)) * 0.8 + 0.1).astype(np.float32)
Q = R.standard_normal((3, 5)).astype(np.float32)
SIGNS = np.array([1.0, -1.0, 1.0], np.float32)

FUNCTIONAL_CALLS = {   # name: fn(lib, tensors) with the tensors' arrays
    "batch_norm": (lambda m, x, rm: m.batch_norm(x, None, None, rm.detach(), rm.detach() + 1, False, 0.1,
                                                                1e-5, False),
                   [IMG, np.zeros(4, np.float32) + 0.1]),
    "batch_norm_train": (lambda m, x, w: m.batch_norm(x, w, w, None, None, True, 0.1, 1e-5, True),
                         [IMG, np.ones(4, np.float32) * 0.5]),
    "instance_norm": (lambda m, x: m.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False), [IMG]),
    "layer_norm": (lambda m, x, w: m.layer_norm(x, [6], w, None), [IMG, np.arange(6, dtype=np.float32)]),
    "embedding": (lambda m, w: m.embedding(w, m.tensor([[0, 2], [1, 1]], device=w.device)), [Q]),
    "embedding_padding": (lambda m, w: m.embedding(w, m.tensor([0, 2, 1], device=w.device), 1), [Q]),
    "conv_transpose1d": (lambda m, x, w: m.conv_transpose1d(x, w, None, 2, 1),
                         [SEQ, R.standard_normal((4, 3, 3)).astype(np.float32)]),
    "convolution": (lambda m, x, w: m.convolution(x, w, None, [2, 1], [1, 0], [1, 1], False, [0, 0], 2),
                    [IMG, R.standard_normal((6, 2, 3, 3)).astype(np.float32)]),
    "convolution_transposed": (lambda m, x, w: m.convolution(x, w, None, [2], [1], [1], True, [1], 1),
                               [SEQ, R.standard_normal((4, 3, 3)).astype(np.float32)]),
    "avg_pool1d": (lambda m, x: m.avg_pool1d(x, 3, 2, 1), [SEQ]),
    "avg_pool1d_default_stride": (lambda m, x: m.avg_pool1d(x, 2), [SEQ]),
    "max_pool1d": (lambda m, x: m.max_pool1d(x, 2), [SEQ]),
    "max_pool2d": (lambda m, x: m.max_pool2d(x, 3, 1, 1, 1, True), [IMG]),
    "max_pool3d": (lambda m, x: m.max_pool3d(x, 2), [VOL]),
    "adaptive_avg_pool1d": (lambda m, x: m.adaptive_avg_pool1d(x, 3), [SEQ]),
    "adaptive_max_pool1d": (lambda m, x: m.adaptive_max_pool1d(x, 3)[0], [SEQ]),
    "pixel_shuffle": (lambda m, x: m.pixel_shuffle(x, 2), [IMG]),
    "pixel_unshuffle": (lambda m, x: m.pixel_unshuffle(x, 2), [IMG]),
    "channel_shuffle": (lambda m, x: m.channel_shuffle(x, 2), [IMG]),
    "celu": (lambda m, x: m.celu(x, 0.5), [Q]),
    "celu_": (lambda m, x: m.celu_(x * 1), [Q]),
    "selu": (lambda m, x: m.selu(x), [Q]),
    "selu_": (lambda m, x: m.selu_(x * 1), [Q]),
    "rrelu_eval": (lambda m, x: m.rrelu(x), [Q]),
    "rrelu_eval_": (lambda m, x: m.rrelu_(x * 1, 0.1, 0.2), [Q]),
    "threshold": (lambda m, x: m.threshold(x, 0.1, -2.0), [Q]),
    "threshold_": (lambda m, x: m.threshold_(x * 1, 0.1, -2.0), [Q]),
    "hardshrink": (lambda m, x: m.hardshrink(x, 0.7), [Q]),
    "prelu": (lambda m, x, w: m.prelu(x, w), [IMG, np.array([0.1, 0.2, 0.3, 0.4], np.float32)]),
    "cosine_similarity": (lambda m, a, b: m.cosine_similarity(a, b, 0), [P, Q]),
    "pairwise_distance": (lambda m, a, b: m.pairwise_distance(a, b, 1.5, 1e-6, True), [P, Q]),
    "constant_pad_nd": (lambda m, x: m.constant_pad_nd(x, [1, 2, 0, 1], 0.5), [Q]),
    "conv3d": (lambda m, x, w: m.conv3d(x, w, None, 1, 1), [VOL, VOL[:, :, :2, :2, :2].copy()]),
    "conv_transpose3d": (lambda m, x, w: m.conv_transpose3d(x, w, None, 2),
                         [VOL, R.standard_normal((2, 1, 2, 2, 2)).astype(np.float32)]),
    "dropout_eval": (lambda m, x: m.dropout(x, 0.5, False), [Q]),
    "feature_dropout_eval": (lambda m, x: m.feature_dropout(x, 0.5, False), [IMG]),
    "alpha_dropout_eval": (lambda m, x: m.alpha_dropout(x, 0.5, False), [Q]),
    "feature_alpha_dropout_eval": (lambda m, x: m.feature_alpha_dropout(x, 0.5, False), [IMG]),
    "kl_div": (lambda m, a, b: m.kl_div(a.log(), b, 2), [P, P[::-1].copy()]),
    "kl_div_log_target": (lambda m, a, b: m.kl_div(a, b, 0, log_target=True), [Q, Q[::-1].copy()]),
    "margin_ranking_loss": (lambda m, a, b, y: m.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.3), [P, Q, SIGNS]),
    "margin_ranking_loss_mean": (lambda m, a, b, y: m.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.3, 1),
                                 [P, Q, SIGNS]),
    "kl_div_default": (lambda m, a, b: m.kl_div(a, b), [Q, P]),
    "triplet_margin_loss": (lambda m, a, b: m.triplet_margin_loss(a, b, a.flip(0), 1.0, 2, 1e-6, True, 2), [P, Q]),
    "hinge_embedding_loss": (lambda m, a, y: m.hinge_embedding_loss(a[:, 0], y, 0.5, 0), [Q, SIGNS]),
    "cosine_embedding_loss": (lambda m, a, b, y: m.cosine_embedding_loss(a, b, y, 0.1), [P, Q, SIGNS]),
    "poisson_nll_loss": (lambda m, a, b: m.poisson_nll_loss(a, b, True, True, 1e-8, 1), [Q, P]),
    "rms_norm": (lambda m, x, w: m.rms_norm(x, [6], w, 1e-5), [IMG, np.arange(6, dtype=np.float32)]),
    "max_pool1d_with_indices": (lambda m, x: m.max_pool1d_with_indices(x, 3, 2)[0], [SEQ]),
    "conv_tbc": (lambda m, x, w, b: m.conv_tbc(x, w, b, 1), [SEQ, R.standard_normal((3, 8, 2)).astype(np.float32),
                                                           np.array([0.5, -0.5], np.float32)]),
    "hardshrink_method": (lambda m, x: x.hardshrink(0.3), [Q]),
    "prelu_method": (lambda m, x, w: x.prelu(w), [IMG, np.array([0.25], np.float32)]),
    "binary_cross_entropy_with_logits": (lambda m, a, b: m.binary_cross_entropy_with_logits(a, b, None, b.detach() + 1, 2),
                                         [Q, P]),
}


def test_every_functional_name_is_tested():
    tested = {name.replace("_eval", "").replace("_train", "").replace("_default_stride", "").replace(
        "_padding", "").replace("_log_target", "").replace("_mean", "").replace("_default", "").replace("_transposed", "").replace(
        "_method", "") for name in FUNCTIONAL_CALLS}
    untested = set(aten.FUNCTIONAL) - tested - {"dropout_", "alpha_dropout_", "feature_alpha_dropout_",
                                                 "feature_dropout_", "embedding_renorm_"}
    assert not untested


@pytest.mark.parametrize("name", FUNCTIONAL_CALLS)
def test_functional_names_as_torch(name, backend):
    fn, arrays = FUNCTIONAL_CALLS[name]
    results = {}
    for lib, dev in ((torch, "cpu"), (wg, backend)):
        ts = [lib.tensor(a, device=dev, requires_grad=True) for a in arrays]
        y = fn(lib, *ts)
        y.sum().backward()
        results[lib] = [np.asarray(y.tolist())] + [np.asarray(t.grad.tolist()) for t in ts if t.grad is not None]
    assert len(results[wg]) == len(results[torch])
    for w, t in zip(results[wg], results[torch]):
        np.testing.assert_allclose(w, t, rtol=2e-4, atol=2e-5)


def test_names_made_once_nn_functional_has_them():
    import webgrad.nn.functional as F
    for name in aten.WHEN_PRESENT:
        assert hasattr(wg, name) == hasattr(F, name), name


def test_embedding_renorm_and_pool_indices_as_torch(backend):
    results = []
    for lib, dev in ((torch, "cpu"), (wg, backend)):
        w = lib.tensor(Q * 3, device=dev)
        assert lib.embedding_renorm_(w, lib.tensor([0, 2, 2], device=dev), 1.0, 2.0) is w
        out, idx = lib.max_pool1d_with_indices(lib.tensor(SEQ, device=dev), 2)
        results.append((np.asarray(w.tolist()), idx.tolist()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    assert results[1][1] == results[0][1]


def test_in_place_dropout_names_and_reduction_ints(backend):
    x = wg.ones(2, 3, 4, device=backend)
    assert wg.dropout_(x, 1.0, True) is x and x.tolist() == wg.zeros(2, 3, 4).tolist()
    for name in ("alpha_dropout_", "feature_alpha_dropout_", "feature_dropout_"):
        y = wg.ones(2, 3, 4, device=backend)
        assert getattr(wg, name)(y, 0.5, False) is y
    wg.manual_seed(0)
    torch.manual_seed(0)
    got = wg.feature_dropout(wg.ones(4, 6, 2, device=backend), 0.5, True)
    want = torch.feature_dropout(torch.ones(4, 6, 2), 0.5, True)
    np.testing.assert_allclose(np.asarray(got.tolist()), want.numpy())
    with pytest.raises(TypeError, match="reduction"):
        wg.kl_div(wg.ones(2), wg.ones(2), "mean")
    with pytest.raises(TypeError):
        torch.kl_div(torch.ones(2), torch.ones(2), "mean")
    assert wg.hinge_embedding_loss(wg.ones(2), wg.ones(2)).tolist() == [1.0, 1.0]   # reduction 0 unless given
