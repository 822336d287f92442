"""torch.nn.utils's reparametrizations, pruning, fusion and norm helpers against torch, from the
same weights and seeds: parametrize, parametrizations.weight_norm/spectral_norm, the older
weight_norm/spectral_norm hooks, prune, fuse_*_bn_*, get_total_norm/clip_grads_with_norm_,
clip_grad_norm (deprecated), stateless.functional_call, skip_init, convert_conv*_weight_memory_format."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (torch does not import it with torch.nn.utils)

import webgrad as wg
from nn_compare import load_torch_weights

P, TP = wg.nn.utils.parametrize, torch.nn.utils.parametrize


def close(w, t, atol=1e-5):
    np.testing.assert_allclose(np.asarray(w.tolist()), t.detach().numpy(), atol=atol, rtol=1e-4)


def pair(make_torch, make_wg, seed=0):
    torch.manual_seed(seed)
    tm = make_torch()
    wm = make_wg()
    load_torch_weights(tm, wm)
    return tm, wm


class Symmetric(wg.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


class TSymmetric(torch.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


def test_parametrize_register_forward_backward_remove(backend):
    tm, wm = pair(lambda: torch.nn.Linear(3, 3), lambda: wg.nn.Linear(3, 3))
    TP.register_parametrization(tm, "weight", TSymmetric())
    P.register_parametrization(wm, "weight", Symmetric())
    assert type(wm).__name__ == "ParametrizedLinear" and P.is_parametrized(wm) and P.is_parametrized(wm, "weight")
    assert not P.is_parametrized(wm, "bias")
    assert [n for n, _ in wm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert list(wm.state_dict()) == list(tm.state_dict())
    close(wm.weight, tm.weight)
    x = np.random.default_rng(1).standard_normal((2, 3)).astype("float32")
    tm(torch.tensor(x)).square().sum().backward()
    wm(wg.tensor(x)).square().sum().backward()
    close(wm.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad)
    P.remove_parametrizations(wm, "weight")
    TP.remove_parametrizations(tm, "weight")
    assert type(wm) is wg.nn.Linear and not hasattr(wm, "parametrizations")
    assert isinstance(wm.weight, wg.nn.Parameter)
    close(wm.weight, tm.weight)


def test_parametrize_assignment_runs_right_inverse_and_chains():
    m = P.register_parametrization(wg.nn.Linear(3, 3), "weight", Symmetric())
    target = wg.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    m.weight = target
    assert m.weight.tolist() == target.tolist()
    assert m.parametrizations.weight.original.tolist() == target.triu().tolist()

    class Scale(wg.nn.Module):
        def forward(self, X):
            return 2 * X
    P.register_parametrization(m, "weight", Scale())
    assert len(m.parametrizations.weight) == 2 and m.weight.tolist() == (2 * target).tolist()
    with pytest.raises(RuntimeError, match="Scale does not implement right_inverse"):
        m.weight = target


def test_parametrize_errors_and_unsafe():
    class Shrink(wg.nn.Module):
        def forward(self, X):
            return X[0]
    m = wg.nn.Linear(3, 2)
    with pytest.raises(ValueError, match="shape"):
        P.register_parametrization(m, "weight", Shrink())
    assert type(m) is wg.nn.Linear and isinstance(m.weight, wg.nn.Parameter)   # nothing half-done
    P.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert m.weight.shape == (3,)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(m, "nothing", Shrink())
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        P.remove_parametrizations(m, "bias")


def test_parametrize_cached_and_leave_unparametrized():
    m = P.register_parametrization(wg.nn.Linear(2, 2), "weight", Symmetric())
    assert m.weight is not m.weight
    with P.cached():
        assert m.weight is m.weight
    original = m.parametrizations.weight.original.tolist()
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert m.weight.tolist() == original
    assert P.type_before_parametrizations(m) is wg.nn.Linear


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm_against_torch(backend, dim):
    tm, wm = pair(lambda: torch.nn.Conv2d(2, 3, 2), lambda: wg.nn.Conv2d(2, 3, 2))
    torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
    wg.nn.utils.parametrizations.weight_norm(wm, dim=dim)
    assert list(wm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        close(wm.state_dict()[k], v)
    x = np.random.default_rng(2).standard_normal((1, 2, 4, 4)).astype("float32")
    tm(torch.tensor(x)).sum().backward()
    wm(wg.tensor(x)).sum().backward()
    for i in (0, 1):
        close(getattr(wm.parametrizations.weight, f"original{i}").grad,
              getattr(tm.parametrizations.weight, f"original{i}").grad, atol=1e-4)
    assert repr(wm) == repr(tm)


def test_parametrizations_spectral_norm_against_torch(backend):
    tm, wm = pair(lambda: torch.nn.ConvTranspose2d(3, 4, 2), lambda: wg.nn.ConvTranspose2d(3, 4, 2))
    torch.manual_seed(5); torch.nn.utils.parametrizations.spectral_norm(tm)
    wg.manual_seed(5); wg.nn.utils.parametrizations.spectral_norm(wm)
    x = np.random.default_rng(3).standard_normal((1, 3, 3, 3)).astype("float32")
    for _ in range(2):   # training mode: one power-iteration step per access
        t_out, w_out = tm(torch.tensor(x)), wm(wg.tensor(x))
        close(w_out, t_out, atol=1e-4)
    for k in ("_u", "_v"):
        close(getattr(wm.parametrizations.weight[0], k), getattr(tm.parametrizations.weight[0], k), atol=1e-4)
    tm.eval(); wm.eval()
    close(wm.weight, tm.weight, atol=1e-4)
    with pytest.raises(ValueError, match="n_power_iterations"):
        wg.nn.utils.parametrizations.spectral_norm(wg.nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="no parameter or buffer"):
        wg.nn.utils.parametrizations.spectral_norm(wg.nn.Linear(2, 2), name="nope")


def test_old_weight_norm_hooks_against_torch(backend):
    tm, wm = pair(lambda: torch.nn.Linear(4, 3), lambda: wg.nn.Linear(4, 3))
    with pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(tm)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        wg.nn.utils.weight_norm(wm)
    assert list(wm.state_dict()) == list(tm.state_dict()) == ["bias", "weight_g", "weight_v"]
    x = np.random.default_rng(4).standard_normal((2, 4)).astype("float32")
    tm(torch.tensor(x)).sum().backward()
    wm(wg.tensor(x)).sum().backward()
    close(wm.weight_g.grad, tm.weight_g.grad, atol=1e-4)
    close(wm.weight_v.grad, tm.weight_v.grad, atol=1e-4)
    with pytest.raises(RuntimeError, match="two weight_norm"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wg.nn.utils.weight_norm(wm)
    wg.nn.utils.remove_weight_norm(wm); torch.nn.utils.remove_weight_norm(tm)
    assert list(wm.state_dict()) == ["bias", "weight"]
    close(wm.weight, tm.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        wg.nn.utils.remove_weight_norm(wm)


def test_old_spectral_norm_hooks_against_torch(backend):
    tm, wm = pair(lambda: torch.nn.Linear(4, 3), lambda: wg.nn.Linear(4, 3))
    torch.manual_seed(7); torch.nn.utils.spectral_norm(tm, n_power_iterations=2)
    wg.manual_seed(7); wg.nn.utils.spectral_norm(wm, n_power_iterations=2)
    assert list(wm.state_dict()) == list(tm.state_dict())
    x = np.random.default_rng(5).standard_normal((2, 4)).astype("float32")
    for _ in range(2):
        close(wm(wg.tensor(x)), tm(torch.tensor(x)), atol=1e-4)
    close(wm.weight_u, tm.weight_u, atol=1e-4)
    wg.nn.utils.remove_spectral_norm(wm); torch.nn.utils.remove_spectral_norm(tm)
    close(wm.weight, tm.weight, atol=1e-4)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        wg.nn.utils.remove_spectral_norm(wm)


def test_total_norm_and_clipping_against_torch(backend):
    grads = [np.random.default_rng(i).standard_normal(n).astype("float32") for i, n in enumerate((3, 5))]
    for norm_type in (2.0, 1.0, float("inf"), "inf"):
        close(wg.nn.utils.get_total_norm([wg.tensor(g) for g in grads], norm_type),
              torch.nn.utils.get_total_norm([torch.tensor(g) for g in grads], norm_type))
    assert wg.nn.utils.get_total_norm([]).item() == 0.0
    with pytest.raises(RuntimeError, match="non-finite"):
        wg.nn.utils.get_total_norm([wg.tensor([float("nan")])], error_if_nonfinite=True)
    wp, tp = wg.nn.Parameter(wg.tensor(grads[0])), torch.nn.Parameter(torch.tensor(grads[0]))
    wp.grad, tp.grad = wg.tensor(grads[1][:3]), torch.tensor(grads[1][:3])
    wg.nn.utils.clip_grads_with_norm_([wp], 0.5, wg.tensor(3.0))
    torch.nn.utils.clip_grads_with_norm_([tp], 0.5, torch.tensor(3.0))
    close(wp.grad, tp.grad)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        norm = wg.nn.utils.clip_grad_norm([wp], 0.1)
    close(norm, torch.nn.utils.clip_grad_norm_([tp], 0.1))
    close(wp.grad, tp.grad)


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_against_torch(backend, transpose):
    tcls, wcls = (torch.nn.ConvTranspose2d, wg.nn.ConvTranspose2d) if transpose else (torch.nn.Conv2d, wg.nn.Conv2d)
    tc, wc = pair(lambda: tcls(2, 3, 2), lambda: wcls(2, 3, 2))
    tb, wb = torch.nn.BatchNorm2d(3), wg.nn.BatchNorm2d(3)
    state = {"weight": torch.rand(3), "bias": torch.rand(3), "running_mean": torch.rand(3),
             "running_var": torch.rand(3) + 0.5}
    tb.load_state_dict(state, strict=False)
    wb.load_state_dict({k: wg.tensor(v.numpy()) for k, v in state.items()}, strict=False)
    tc.eval(); tb.eval(); wc.eval(); wb.eval()
    t_fused = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose)
    w_fused = wg.nn.utils.fuse_conv_bn_eval(wc, wb, transpose)
    close(w_fused.weight, t_fused.weight); close(w_fused.bias, t_fused.bias)
    assert isinstance(w_fused.weight, wg.nn.Parameter) and w_fused is not wc
    with pytest.raises(AssertionError, match="eval"):
        wg.nn.utils.fuse_conv_bn_eval(wc.train(), wb)


def test_fuse_linear_bn_against_torch(backend):
    tl, wl = pair(lambda: torch.nn.Linear(4, 3), lambda: wg.nn.Linear(4, 3))
    tb, wb = torch.nn.BatchNorm1d(3), wg.nn.BatchNorm1d(3)
    state = {"running_mean": torch.rand(3), "running_var": torch.rand(3) + 0.5}
    tb.load_state_dict(state, strict=False)
    wb.load_state_dict({k: wg.tensor(v.numpy()) for k, v in state.items()}, strict=False)
    for m in (tl, tb, wl, wb):
        m.eval()
    t_fused, w_fused = torch.nn.utils.fuse_linear_bn_eval(tl, tb), wg.nn.utils.fuse_linear_bn_eval(wl, wb)
    close(w_fused.weight, t_fused.weight); close(w_fused.bias, t_fused.bias)
    with pytest.raises(AssertionError, match="num_features"):
        wg.nn.utils.fuse_linear_bn_eval(wl, wg.nn.BatchNorm1d(2).eval())


def _prune_pair(seed=0):
    return pair(lambda: torch.nn.Linear(5, 4), lambda: wg.nn.Linear(5, 4), seed)


def test_prune_methods_against_torch(backend):
    tm, wm = _prune_pair()
    torch.nn.utils.prune.l1_unstructured(tm, "weight", amount=0.3)
    wg.nn.utils.prune.l1_unstructured(wm, "weight", amount=0.3)
    close(wm.weight_mask, tm.weight_mask)
    torch.manual_seed(3); torch.nn.utils.prune.random_unstructured(tm, "weight", amount=4)
    wg.manual_seed(3); wg.nn.utils.prune.random_unstructured(wm, "weight", amount=4)
    close(wm.weight_mask, tm.weight_mask)   # the container prunes among the entries still kept
    torch.nn.utils.prune.ln_structured(tm, "weight", amount=1, n=2, dim=0)
    wg.nn.utils.prune.ln_structured(wm, "weight", amount=1, n=2, dim=0)
    close(wm.weight_mask, tm.weight_mask)
    assert isinstance(wm._forward_pre_hooks[next(iter(wm._forward_pre_hooks))], wg.nn.utils.prune.PruningContainer)
    x = np.random.default_rng(6).standard_normal((2, 5)).astype("float32")
    close(wm(wg.tensor(x)), tm(torch.tensor(x)))
    assert wg.nn.utils.prune.is_pruned(wg.nn.Sequential(wm))
    wg.nn.utils.prune.remove(wm, "weight"); torch.nn.utils.prune.remove(tm, "weight")
    assert list(wm.state_dict()) == list(tm.state_dict()) and not wg.nn.utils.prune.is_pruned(wm)
    close(wm.weight, tm.weight)
    with pytest.raises(ValueError, match="has to be pruned"):
        wg.nn.utils.prune.remove(wm, "weight")


def test_prune_global_and_errors_against_torch(backend):
    (ta, wa), (tb, wb) = _prune_pair(1), _prune_pair(2)
    torch.nn.utils.prune.global_unstructured([(ta, "weight"), (tb, "weight")], torch.nn.utils.prune.L1Unstructured,
                                             amount=0.4)
    wg.nn.utils.prune.global_unstructured([(wa, "weight"), (wb, "weight")], wg.nn.utils.prune.L1Unstructured,
                                          amount=0.4)
    close(wa.weight_mask, ta.weight_mask); close(wb.weight_mask, tb.weight_mask)
    with pytest.raises(ValueError, match="amount=-1"):
        wg.nn.utils.prune.l1_unstructured(wg.nn.Linear(2, 2), "weight", amount=-1)
    m = wg.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="smaller than the number"):
        wg.nn.utils.prune.l1_unstructured(m, "weight", amount=9)
    assert isinstance(m.weight, wg.nn.Parameter) and "weight_orig" not in m._parameters   # put back


def test_stateless_functional_call_warns_and_delegates(backend):
    lin = wg.nn.Linear(1, 1)
    with pytest.warns(FutureWarning, match="func.functional_call"):
        out = wg.nn.utils.stateless.functional_call(lin, {"weight": wg.tensor([[2.0]]), "bias": wg.tensor([1.0])},
                                                    wg.ones(1, 1))
    assert out.tolist() == [[3.0]]


def test_skip_init_and_memory_format():
    assert wg.nn.utils.skip_init(wg.nn.Linear, 6, out_features=2).weight.shape == (2, 6)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        wg.nn.utils.skip_init(int)
    with pytest.raises(RuntimeError, match="'device' arg"):
        wg.nn.utils.skip_init(wg.nn.ReLU)
    conv = wg.nn.Conv2d(1, 1, 1)
    before = conv.weight.tolist()
    assert wg.nn.utils.convert_conv2d_weight_memory_format(conv, wg.channels_last) is conv
    assert conv.weight.tolist() == before
    with pytest.raises(TypeError, match="memory_format"):
        wg.nn.utils.convert_conv3d_weight_memory_format(conv, "channels_last")
