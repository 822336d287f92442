"""Every optimizer against PyTorch's: the same parameters fed the same gradients (a fixed sequence
plus a term in the parameters) for several steps, comparing the parameters and every state entry
after each step: float64 on cpu to rounding, float32 on every backend within 1e-5 relative.
Then whole training loops (backward-made gradients, zero_grad, param groups) on every backend.

LBFGS is in test_optim_lbfgs.py; state dicts, hooks and argument errors in test_optim_state.py;
schedulers in test_optim_lr_scheduler.py."""
import numpy as np
import pytest

import webgrad as wg

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,)]
P0 = [np.random.default_rng(i).standard_normal(s) for i, s in enumerate(SHAPES)]
GRADS = [[np.random.default_rng(10 + 7 * k + i).standard_normal(s) for i, s in enumerate(SHAPES)]
         for k in range(10)]

OPTIMIZERS = {
    "sgd": lambda o, p: o.SGD(p, lr=0.1),
    "sgd_momentum_wd": lambda o, p: o.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01, foreach=False),
    "sgd_dampening": lambda o, p: o.SGD(p, lr=0.1, momentum=0.5, dampening=0.3),
    "sgd_nesterov_maximize": lambda o, p: o.SGD(p, lr=0.01, momentum=0.9, nesterov=True, maximize=True, fused=True),
    "adam": lambda o, p: o.Adam(p, lr=0.01),
    "adam_wd_amsgrad": lambda o, p: o.Adam(p, lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True),
    "adam_decoupled_maximize": lambda o, p: o.Adam(p, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                                                   maximize=True, capturable=False, foreach=None),
    "adamw": lambda o, p: o.AdamW(p, lr=0.01, weight_decay=0.1),
    "adamw_amsgrad_maximize": lambda o, p: o.AdamW(p, lr=0.01, amsgrad=True, maximize=True, betas=(0.3, 0.5)),
    "rmsprop": lambda o, p: o.RMSprop(p, lr=0.01),
    "rmsprop_centered_momentum_wd": lambda o, p: o.RMSprop(p, lr=0.01, momentum=0.9, centered=True,
                                                            weight_decay=0.1, maximize=True),
    "adagrad": lambda o, p: o.Adagrad(p, lr=0.1),
    "adagrad_decay_wd": lambda o, p: o.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.1,
                                               initial_accumulator_value=0.1, maximize=True),
    "adadelta": lambda o, p: o.Adadelta(p),
    "adadelta_wd_maximize": lambda o, p: o.Adadelta(p, lr=0.5, rho=0.7, eps=1e-4, weight_decay=0.1, maximize=True),
    "nadam": lambda o, p: o.NAdam(p, lr=0.01),
    "nadam_wd": lambda o, p: o.NAdam(p, lr=0.01, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01),
    "nadamw_maximize": lambda o, p: o.NAdam(p, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                                            maximize=True),
    "radam": lambda o, p: o.RAdam(p, lr=0.01),
    "radam_rectified_wd": lambda o, p: o.RAdam(p, lr=0.01, betas=(0.9, 0.8), weight_decay=0.1),
    "radam_decoupled_maximize": lambda o, p: o.RAdam(p, lr=0.01, betas=(0.5, 0.7), weight_decay=0.1,
                                                     decoupled_weight_decay=True, maximize=True),
    "adamax": lambda o, p: o.Adamax(p, lr=0.01),
    "adamax_wd_maximize": lambda o, p: o.Adamax(p, lr=0.01, betas=(0.7, 0.9), weight_decay=0.1, maximize=True),
    "asgd": lambda o, p: o.ASGD(p, lr=0.05),
    "asgd_averaging_wd": lambda o, p: o.ASGD(p, lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1),
    "rprop": lambda o, p: o.Rprop(p, lr=0.05),
    "rprop_bounds_maximize": lambda o, p: o.Rprop(p, lr=0.05, etas=(0.3, 1.5), step_sizes=(0.01, 0.1),
                                                  maximize=True),
}


def trajectory(lib, make, dtype, steps=8):
    """[(parameters, state per parameter)] after each step; the gradient at step k is
    ``GRADS[k] + 0.5 * p`` (so it depends on where the parameters are)."""
    params = [lib.tensor(p.astype(dtype), requires_grad=True) for p in P0]
    opt = make(lib.optim, params)
    out = []
    for k in range(steps):
        for p, g in zip(params, GRADS[k]):
            p.grad = lib.tensor(g.astype(dtype)) + 0.5 * p.detach()
        opt.step()
        out.append(([_np(p) for p in params], [{key: _np(v) for key, v in opt.state[p].items()} for p in params]))
    return out


def _np(v):
    if isinstance(v, (torch.Tensor, wg.Tensor)):
        return np.array(v.detach().numpy(), dtype=np.float64)   # a copy: torch updates in place
    return np.float64(v)


def assert_close(ours, theirs, rtol, what):
    """Within ``rtol`` relative to the largest magnitude of ``theirs`` (entries near 0 included)."""
    scale = max(float(np.abs(theirs).max(initial=0.0)), 1e-30)
    err = float(np.abs(np.asarray(ours) - theirs).max(initial=0.0)) / scale
    assert np.shape(ours) == np.shape(theirs) and err <= rtol, f"{what}: relative error {err:.3g} > {rtol}"


def compare(make, dtype, rtol):
    theirs, ours = trajectory(torch, make, dtype), trajectory(wg, make, dtype)
    for k, ((tp, ts), (wp, ws)) in enumerate(zip(theirs, ours)):
        for i, (a, b) in enumerate(zip(wp, tp)):
            assert_close(a, b, rtol, f"step {k + 1}, parameter {i}")
        for i, (a, b) in enumerate(zip(ws, ts)):
            assert a.keys() == b.keys(), f"state keys {sorted(a)} != torch's {sorted(b)}"
            for key in b:
                assert_close(a[key], b[key], rtol, f"step {k + 1}, state[{i}][{key!r}]")


@pytest.mark.float64
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_float64_steps_and_state_match_torch(name):
    compare(OPTIMIZERS[name], np.float64, rtol=1e-12)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_float32_steps_and_state_match_torch_on_every_backend(name, backend):
    compare(OPTIMIZERS[name], np.float32, rtol=1e-5)


# ------------------------------------------------------------------ training loops
W0 = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
B0 = np.random.default_rng(1).standard_normal(4).astype(np.float32)
X = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)


def train(lib, make_opt, steps, per_group=False, set_to_none=True):
    """Parameter values after ``steps`` training steps of a small tanh regression."""
    w = lib.tensor(W0.copy(), requires_grad=True)
    b = lib.tensor(B0.copy(), requires_grad=True)
    params = [{"params": [w]}, {"params": [b], "lr": 0.05}] if per_group else [w, b]
    opt = make_opt(lib.optim if lib is torch else wg.optim, params)
    for _ in range(steps):
        opt.zero_grad(set_to_none=set_to_none)
        loss = ((lib.tensor(X) @ w + b).tanh() ** 2).sum() + (w * w).sum() * 0.1
        loss.backward()
        opt.step()
    return w.detach().numpy(), b.detach().numpy()


@pytest.mark.parametrize("name", ["sgd_nesterov_maximize", "adamw", "rmsprop_centered_momentum_wd", "nadam",
                                  "radam_rectified_wd", "adagrad_decay_wd", "asgd_averaging_wd"])
def test_training_loop_matches_torch(name, backend):
    for theirs, ours in zip(train(torch, OPTIMIZERS[name], 8), train(wg, OPTIMIZERS[name], 8)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_param_groups_match_torch(set_to_none, backend):
    make = lambda o, p: o.Adam(p, lr=0.1, weight_decay=0.01)  # noqa: E731
    theirs = train(torch, make, 5, per_group=True, set_to_none=set_to_none)
    ours = train(wg, make, 5, per_group=True, set_to_none=set_to_none)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_closure_loss_is_returned_and_run_with_grad(backend):
    w = wg.nn.Parameter(wg.tensor([1.0, -2.0]))
    opt = wg.optim.Adam([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    with wg.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 5.0 and opt.step() is None
    assert opt.state[w]["step"] == 2


def test_parameter_without_grad_is_left_alone(backend):
    a, b = wg.nn.Parameter(wg.ones(2)), wg.nn.Parameter(wg.ones(2))
    opt = wg.optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert b.tolist() == [1.0, 1.0] and b not in opt.state and opt.state[a]["step"] == 1
    assert opt.state_dict()["state"].keys() == {0}


def test_updates_stay_on_the_parameters_backend_without_graph(backend):
    w = wg.nn.Parameter(wg.ones(3))
    opt = wg.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * 2).sum().backward()
    opt.step()
    assert w.is_leaf and w.grad_fn is None and w.requires_grad and w._version == 1
    buf = opt.state[w]["momentum_buffer"]
    assert buf.requires_grad is False and buf.device == w.device


@pytest.mark.parametrize("make", [lambda ps: wg.optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: wg.optim.AdamW(ps, lr=0.1)], ids=["SGD", "AdamW"])
def test_step_updates_parameters_and_views_while_snapshots_keep_their_values(make):
    model = wg.nn.Linear(64, 64)
    weight = model.weight
    opt = make(list(model.parameters()))
    snapshot, alias = weight.detach().clone(), weight.detach()
    before = snapshot.numpy().copy()
    for step in range(3):
        if step == 2:
            del alias                                   # the last view of the weight goes
        opt.zero_grad()
        model(wg.ones(2, 64)).sum().backward()
        opt.step()
        if step < 2:                                    # a view sees every update, as in PyTorch
            np.testing.assert_array_equal(alias.numpy(), weight.detach().numpy())
    np.testing.assert_array_equal(snapshot.numpy(), before)
    assert not np.array_equal(weight.detach().numpy(), before)
