"""Optimizers and lr schedulers against PyTorch: parameter trajectories over several steps
(weight decay, momentum, Nesterov, AMSGrad, maximize, param groups, schedulers driving lr),
and state_dict round trips."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn as nn

torch = pytest.importorskip("torch")

W0 = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
B0 = np.random.default_rng(1).standard_normal(4).astype(np.float32)
X = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)


def loss_fn(lib, w, b):
    x = lib.tensor(X)
    return ((x @ w + b).tanh() ** 2).sum() + (w * w).sum() * 0.1


def run(lib, make_opt, steps, make_sched=None, per_group=False):
    """Parameter values after ``steps`` optimizer steps (and lr values when a scheduler runs)."""
    w = lib.tensor(W0.copy(), requires_grad=True)
    b = lib.tensor(B0.copy(), requires_grad=True)
    params = [{"params": [w]}, {"params": [b], "lr": 0.05}] if per_group else [w, b]
    opt = make_opt(lib.optim if lib is torch else wg.optim, params)
    sched = make_sched(lib.optim.lr_scheduler if lib is torch else wg.optim.lr_scheduler, opt) if make_sched \
        else None
    lrs = []
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(lib, w, b).backward()
        opt.step()
        if sched:
            sched.step()
            lrs.append(sched.get_last_lr())
    return w.detach().numpy(), b.detach().numpy(), lrs


OPTIMIZERS = {
    "sgd": lambda o, p: o.SGD(p, lr=0.1),
    "sgd_momentum_wd": lambda o, p: o.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    "sgd_dampening": lambda o, p: o.SGD(p, lr=0.1, momentum=0.5, dampening=0.3),
    "sgd_nesterov_maximize": lambda o, p: o.SGD(p, lr=0.01, momentum=0.9, nesterov=True, maximize=True),
    "adam": lambda o, p: o.Adam(p, lr=0.01),
    "adam_wd_amsgrad": lambda o, p: o.Adam(p, lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True),
    "adamw": lambda o, p: o.AdamW(p, lr=0.01, weight_decay=0.1),
    "adamw_amsgrad_maximize": lambda o, p: o.AdamW(p, lr=0.01, amsgrad=True, maximize=True),
    "rmsprop": lambda o, p: o.RMSprop(p, lr=0.01),
    "rmsprop_centered_momentum_wd": lambda o, p: o.RMSprop(p, lr=0.01, momentum=0.9, centered=True,
                                                            weight_decay=0.1),
    "adagrad": lambda o, p: o.Adagrad(p, lr=0.1),
    "adagrad_decay_wd": lambda o, p: o.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.1,
                                               initial_accumulator_value=0.1),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_trajectory_matches_torch(name):
    make = OPTIMIZERS[name]
    tw, tb, _ = run(torch, make, 8)
    ww, wb, _ = run(wg, make, 8)
    np.testing.assert_allclose(ww, tw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(wb, tb, rtol=1e-4, atol=1e-5)


def test_param_groups_match_torch():
    make = lambda o, p: o.SGD(p, lr=0.1, momentum=0.9)  # noqa: E731
    tw, tb, _ = run(torch, make, 5, per_group=True)
    ww, wb, _ = run(wg, make, 5, per_group=True)
    np.testing.assert_allclose(ww, tw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wb, tb, rtol=1e-5, atol=1e-6)


SCHEDULERS = {
    "step": (lambda o, p: o.SGD(p, lr=0.1, momentum=0.9), lambda s, o: s.StepLR(o, 3, gamma=0.5)),
    "multistep": (lambda o, p: o.SGD(p, lr=0.1), lambda s, o: s.MultiStepLR(o, [2, 5, 5], gamma=0.3)),
    "exponential": (lambda o, p: o.Adam(p, lr=0.05), lambda s, o: s.ExponentialLR(o, 0.8)),
    "cosine": (lambda o, p: o.AdamW(p, lr=0.05), lambda s, o: s.CosineAnnealingLR(o, T_max=4, eta_min=0.001)),
    "lambda": (lambda o, p: o.SGD(p, lr=0.1), lambda s, o: s.LambdaLR(o, lambda e: 0.9 ** e + 0.1)),
    "onecycle_sgd": (lambda o, p: o.SGD(p, lr=0.1, momentum=0.9),
                     lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=12)),
    "onecycle_adam_linear_3phase": (lambda o, p: o.Adam(p, lr=0.1),
                                    lambda s, o: s.OneCycleLR(o, max_lr=0.05, total_steps=12,
                                                              anneal_strategy="linear", three_phase=True)),
}


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_drives_optimizer_like_torch(name):
    make_opt, make_sched = SCHEDULERS[name]
    tw, tb, tl = run(torch, make_opt, 10, make_sched)
    ww, wb, wl = run(wg, make_opt, 10, make_sched)
    np.testing.assert_allclose(np.array(wl, dtype=np.float64), np.array(tl, dtype=np.float64), rtol=1e-9)
    np.testing.assert_allclose(ww, tw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(wb, tb, rtol=1e-4, atol=1e-5)


def test_chained_schedulers_match_torch():
    def lrs(lib):
        p = lib.tensor([1.0], requires_grad=True)
        opt = (lib.optim if lib is torch else wg.optim).SGD([p], lr=1.0)
        s = lib.optim.lr_scheduler if lib is torch else wg.optim.lr_scheduler
        a, b = s.ExponentialLR(opt, 0.9), s.StepLR(opt, 2, gamma=0.5)
        out = []
        for _ in range(6):
            opt.step(), a.step(), b.step()
            out.append(opt.param_groups[0]["lr"])
        return out
    assert lrs(wg) == pytest.approx(lrs(torch), rel=1e-12)


def test_optimizer_state_dict_round_trip():
    def make(seed=0):
        wg.manual_seed(seed)
        model = nn.Linear(3, 2)
        return model, wg.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
    x = wg.tensor(X)

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            (model(x) ** 2).sum().backward()
            opt.step()
    m1, o1 = make()
    train(m1, o1, 3)
    m2, o2 = make(seed=1)
    m2.load_state_dict(m1.state_dict())
    o2.load_state_dict(o1.state_dict())
    assert o2.state_dict()["state"][0]["step"] == 3
    train(m1, o1, 2)
    train(m2, o2, 2)
    for a, b in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    sd = o1.state_dict()
    assert sd["param_groups"][0]["params"] == [0, 1] and sd["param_groups"][0]["amsgrad"] is True
    with pytest.raises(ValueError, match="parameter groups"):
        o1.load_state_dict({"state": {}, "param_groups": []})


def test_optimizer_state_dict_loads_torch_layout():
    """A torch optimizer state dict (tensors converted) drives webgrad's optimizer on."""
    tw = torch.tensor(W0.copy(), requires_grad=True)
    topt = torch.optim.SGD([tw], lr=0.1, momentum=0.9)
    for _ in range(2):
        topt.zero_grad(), loss_fn(torch, tw, torch.tensor(B0)).backward(), topt.step()
    ww = wg.tensor(tw.detach().numpy(), requires_grad=True)
    wopt = wg.optim.SGD([ww], lr=0.1, momentum=0.9)
    sd = topt.state_dict()
    wopt.load_state_dict({"state": {k: {n: wg.tensor(v.numpy()) for n, v in s.items()}
                                    for k, s in sd["state"].items()}, "param_groups": sd["param_groups"]})
    for _ in range(2):
        topt.zero_grad(), loss_fn(torch, tw, torch.tensor(B0)).backward(), topt.step()
        wopt.zero_grad(), loss_fn(wg, ww, wg.tensor(B0)).backward(), wopt.step()
    np.testing.assert_allclose(ww.detach().numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_scheduler_state_dict_round_trip():
    p = nn.Parameter(wg.ones(1))
    opt = wg.optim.SGD([p], lr=1.0)
    s = wg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(3):
        s.step()
    sd = s.state_dict()
    opt2 = wg.optim.SGD([p], lr=1.0)
    s2 = wg.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=10)
    s2.load_state_dict(sd)
    opt2.param_groups[0]["lr"] = s.get_last_lr()[0]
    s.step(), s2.step()
    assert s2.get_last_lr() == pytest.approx(s.get_last_lr())


def test_updates_stay_on_the_parameters_backend_without_graph():
    w = nn.Parameter(wg.ones(3))
    opt = wg.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * 2).sum().backward()
    opt.step()
    assert w.is_leaf and w.grad_fn is None and w.requires_grad and w._version == 1
    assert opt.state[w]["momentum_buffer"].requires_grad is False


def test_bad_arguments():
    p = [nn.Parameter(wg.ones(1))]
    with pytest.raises(ValueError, match="SGD"):
        wg.optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        wg.optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Adam"):
        wg.optim.Adam(p, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="empty"):
        wg.optim.Adam([])
    with pytest.raises(TypeError, match="iterable"):
        wg.optim.Adam(p[0])
    with pytest.raises(ValueError, match="more than one"):
        wg.optim.SGD([{"params": p}, {"params": p}])
    with pytest.raises(ValueError, match="total_steps"):
        wg.optim.lr_scheduler.OneCycleLR(wg.optim.SGD(p, momentum=0.9), max_lr=1.0)


@pytest.mark.parametrize("make", [lambda ps: wg.optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: wg.optim.AdamW(ps, lr=0.1)], ids=["SGD", "AdamW"])
def test_step_updates_parameters_in_their_own_buffers_and_snapshots_keep_their_values(make):
    model = wg.nn.Linear(64, 64)                        # a 16 KiB weight: the cpu backend donates it
    weight = model.weight
    opt = make(list(model.parameters()))
    snapshot, alias = weight.detach().clone(), weight.detach()
    before = snapshot.numpy().copy()
    for step in range(3):
        if step == 2:
            del alias                                   # the last view of the weight goes
        opt.zero_grad()
        model(wg.ones(2, 64)).sum().backward()
        buffer = id(weight._data)
        opt.step()
        if step < 2:                                    # a view sees every update, as in PyTorch
            np.testing.assert_array_equal(alias.numpy(), weight.detach().numpy())
    np.testing.assert_array_equal(snapshot.numpy(), before)
    assert not np.array_equal(weight.detach().numpy(), before)
    assert id(weight._data) == buffer                   # with no view left, the step wrote in place (cpu)
