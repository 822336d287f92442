"""The ``Optimizer`` base against PyTorch's: ``param_groups`` and ``state_dict`` layout (same keys,
same values), checkpoints that resume training exactly (through memory, through ``wg.save``, and
from a PyTorch state dict), ``add_param_group``, named parameters, ``zero_grad``, hooks, and the
exception types bad arguments raise."""
import copy

import numpy as np
import pytest

import webgrad as wg

from test_optim import OPTIMIZERS

torch = pytest.importorskip("torch")

X = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)


def model_and_opt(lib, make, seed=0):
    rng = np.random.default_rng(seed)
    params = [lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True) for s in ((3, 2), (2,))]
    return params, make(lib.optim, params)


def train(lib, params, opt, steps):
    w, b = params
    for _ in range(steps):
        opt.zero_grad()
        ((lib.tensor(X) @ w + b).tanh() ** 2).sum().backward()
        opt.step()


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_state_dict_layout_matches_torch(name):
    make = OPTIMIZERS[name]
    tp, topt = model_and_opt(torch, make)
    wp, wopt = model_and_opt(wg, make)
    train(torch, tp, topt, 2)
    train(wg, wp, wopt, 2)
    theirs, ours = topt.state_dict(), wopt.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]          # keys, values and params ids
    assert ours["state"].keys() == theirs["state"].keys()
    for i, entry in theirs["state"].items():
        assert ours["state"][i].keys() == entry.keys()
        for key, value in entry.items():
            np.testing.assert_allclose(_numbers(ours["state"][i][key]), _numbers(value), rtol=1e-5, atol=1e-6)


def _numbers(v):
    return v.detach().numpy() if isinstance(v, (wg.Tensor, torch.Tensor)) else np.float64(v)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_checkpoint_resumes_exactly(name, backend):
    """Save mid-training, load into a fresh optimizer on fresh parameters, continue: the same
    numbers as the uninterrupted run. (The state dict is copied, as in PyTorch: it holds the
    optimizer's own tensors, which its later steps update.)"""
    make = OPTIMIZERS[name]
    p1, o1 = model_and_opt(wg, make)
    train(wg, p1, o1, 3)
    checkpoint = copy.deepcopy(o1.state_dict())
    p2, o2 = model_and_opt(wg, make, seed=1)
    with wg.no_grad():
        for a, b in zip(p2, p1):
            a.copy_(b)
    o2.load_state_dict(checkpoint)
    train(wg, p1, o1, 3)
    train(wg, p2, o2, 3)
    for a, b in zip(p1, p2):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_state_is_updated_in_place_as_in_torch(name, backend):
    """A state tensor a user holds, and a state dict taken before a step, see the step's values, as
    PyTorch's (its optimizers update their state in place; ``state_dict()`` holds the live dicts)."""
    make = OPTIMIZERS[name]
    runs = {}
    for lib in (torch, wg):
        params, opt = model_and_opt(lib, make)
        train(lib, params, opt, 1)
        held = {k: v for k, v in opt.state[params[0]].items() if isinstance(v, lib.Tensor) and v.ndim}
        taken = opt.state_dict()
        train(lib, params, opt, 2)
        assert taken["state"].get(0, {}) is opt.state[params[0]] or not opt.state[params[0]]   # SGD keeps none
        assert all(held[k] is opt.state[params[0]][k] for k in held)
        runs[lib] = {k: v.detach().numpy() for k, v in held.items()}
    assert runs[wg].keys() == runs[torch].keys()
    for k, v in runs[torch].items():
        np.testing.assert_allclose(runs[wg][k], v, rtol=1e-5, atol=1e-6)


def test_checkpoint_through_a_file_resumes_exactly(tmp_path, backend):
    make = OPTIMIZERS["adam_wd_amsgrad"]
    p1, o1 = model_and_opt(wg, make)
    train(wg, p1, o1, 2)
    wg.save(o1.state_dict(), tmp_path / "opt.safetensors")
    p2, o2 = model_and_opt(wg, make)
    with wg.no_grad():
        for a, b in zip(p2, p1):
            a.copy_(b)
    o2.load_state_dict(wg.load(tmp_path / "opt.safetensors"))
    assert o2.state[p2[0]]["step"] == 2 and o2.state[p2[0]]["exp_avg"].device == p2[0].device
    train(wg, p1, o1, 2)
    train(wg, p2, o2, 2)
    np.testing.assert_array_equal(p2[0].detach().numpy(), p1[0].detach().numpy())


@pytest.mark.parametrize("name", ["sgd_momentum_wd", "adam_wd_amsgrad", "nadamw_maximize", "asgd_averaging_wd",
                                  "rmsprop_centered_momentum_wd", "adagrad_decay_wd"])
def test_torch_state_dict_drives_webgrad_on(name, backend):
    """A PyTorch checkpoint (tensors converted, ``step`` left a tensor) continues in webgrad as in PyTorch."""
    make = OPTIMIZERS[name]
    tp, topt = model_and_opt(torch, make)
    train(torch, tp, topt, 3)
    wp, wopt = model_and_opt(wg, make, seed=1)
    with wg.no_grad():
        for a, b in zip(wp, tp):
            a.copy_(wg.tensor(b.detach().numpy()))
    sd = topt.state_dict()
    wopt.load_state_dict({"state": {k: {n: wg.tensor(v.numpy()) if torch.is_tensor(v) else v for n, v in s.items()}
                                    for k, s in sd["state"].items()}, "param_groups": sd["param_groups"]})
    train(torch, tp, topt, 3)
    train(wg, wp, wopt, 3)
    for a, b in zip(wp, tp):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_loaded_groups_are_copies_and_floating_state_takes_the_parameters_dtype():
    p = wg.nn.Parameter(wg.ones(2, dtype=wg.float64))
    opt = wg.optim.Adam([p], lr=0.1)
    sd = {"state": {0: {"step": wg.tensor(4.0), "exp_avg": wg.ones(2), "exp_avg_sq": wg.ones(2)}},
          "param_groups": [dict(opt.state_dict()["param_groups"][0], lr=0.5)]}
    opt.load_state_dict(sd)
    sd["param_groups"][0]["lr"] = 9.0
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["params"] == [p]
    assert opt.state[p]["step"] == 4.0 and isinstance(opt.state[p]["step"], float)
    assert opt.state[p]["exp_avg"].dtype == wg.float64


def test_add_param_group_and_named_parameters_like_torch():
    for lib in (torch, wg):
        nn = lib.nn
        model = nn.Linear(2, 3)
        opt = lib.optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)
        assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
        extra = nn.Parameter(lib.ones(2))
        group = {"params": extra, "lr": 0.01}
        with pytest.raises(ValueError, match="names"):
            opt.add_param_group(group)
        opt.add_param_group({"params": [("extra", extra)], "lr": 0.01})
        assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["momentum"] == 0.9
        assert opt.state_dict()["param_groups"][1]["params"] == [2]
        with pytest.raises(ValueError, match="more than one"):
            opt.add_param_group({"params": [("again", extra)]})
        with pytest.raises(TypeError):
            opt.add_param_group([extra])
        with pytest.raises(TypeError):
            lib.optim.SGD([{"params": {extra}}], lr=0.1)


def test_add_param_group_keeps_the_dict_it_is_given():
    a, b = wg.nn.Parameter(wg.ones(1)), wg.nn.Parameter(wg.ones(1))
    opt = wg.optim.SGD([a], lr=1.0)
    group = {"params": [b]}
    opt.add_param_group(group)
    group["lr"] = 0.25              # as in PyTorch, the dict joined param_groups itself
    assert opt.param_groups[1]["lr"] == 0.25


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none, backend):
    p = wg.nn.Parameter(wg.ones(3))
    opt = wg.optim.SGD([p])
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=set_to_none)
    assert p.grad is None if set_to_none else p.grad.tolist() == [0.0, 0.0, 0.0]


def test_hooks_run_in_order_and_can_replace_arguments():
    p = wg.nn.Parameter(wg.ones(1))
    opt = wg.optim.SGD([p], lr=0.5)
    calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", args, kwargs)))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", args, kwargs)))
    swap = opt.register_step_pre_hook(lambda o, args, kwargs: ((), {"closure": lambda: 7}))
    assert opt.step() == 7
    assert calls == [("pre", (), {}), ("post", (), {"closure": calls[1][2]["closure"]})]
    swap.remove()
    assert opt.step() is None
    opt.register_step_pre_hook(lambda o, args, kwargs: "nonsense")
    with pytest.raises(RuntimeError, match="pre-hook"):
        opt.step()


def test_state_dict_hooks():
    p = wg.nn.Parameter(wg.ones(1))
    opt = wg.optim.SGD([p], lr=0.5)
    seen = []
    opt.register_state_dict_pre_hook(lambda o: seen.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_load_state_dict_pre_hook(lambda o, sd: {k: v for k, v in sd.items() if k != "extra"})
    opt.register_load_state_dict_post_hook(lambda o: seen.append("loaded"))
    sd = opt.state_dict()
    assert sd["extra"] == 1
    opt.load_state_dict(sd)
    assert seen == ["pre", "loaded"]


def test_a_subclass_step_gets_hooks_once():
    class Halve(wg.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.5})

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    with wg.no_grad():
                        p.mul_(group["lr"])
    p = wg.nn.Parameter(wg.ones(1))
    opt = Halve([p])
    calls = []
    opt.register_step_post_hook(lambda o, a, k: calls.append(1))
    opt.step()
    assert calls == [1] and p.item() == 0.5 and opt.state[p] == {}


# ------------------------------------------------------------------ errors, typed as PyTorch's
ERRORS = {
    "sgd_negative_lr": lambda o, p: o.SGD(p, lr=-1),
    "sgd_negative_momentum": lambda o, p: o.SGD(p, momentum=-0.1),
    "sgd_negative_weight_decay": lambda o, p: o.SGD(p, weight_decay=-1),
    "sgd_nesterov_without_momentum": lambda o, p: o.SGD(p, nesterov=True),
    "sgd_nesterov_with_dampening": lambda o, p: o.SGD(p, momentum=0.9, dampening=0.1, nesterov=True),
    "sgd_fused_and_foreach": lambda o, p: o.SGD(p, fused=True, foreach=True),
    "sgd_unknown_keyword": lambda o, p: o.SGD(p, lr=0.1, mommentum=0.9),
    "adam_beta_one": lambda o, p: o.Adam(p, betas=(1.0, 0.9)),
    "adam_negative_beta": lambda o, p: o.Adam(p, betas=(0.9, -0.1)),
    "adam_int_beta": lambda o, p: o.Adam(p, betas=(0, 0.9)),
    "adam_negative_eps": lambda o, p: o.Adam(p, eps=-1e-8),
    "adamw_negative_weight_decay": lambda o, p: o.AdamW(p, weight_decay=-0.1),
    "adam_fused_and_foreach": lambda o, p: o.Adam(p, fused=True, foreach=True),
    "rmsprop_negative_alpha": lambda o, p: o.RMSprop(p, alpha=-0.5),
    "rmsprop_negative_momentum": lambda o, p: o.RMSprop(p, momentum=-0.5),
    "adagrad_negative_lr_decay": lambda o, p: o.Adagrad(p, lr_decay=-1),
    "adagrad_negative_accumulator": lambda o, p: o.Adagrad(p, initial_accumulator_value=-1),
    "adadelta_rho_above_one": lambda o, p: o.Adadelta(p, rho=1.5),
    "adadelta_negative_eps": lambda o, p: o.Adadelta(p, eps=-1),
    "nadam_negative_momentum_decay": lambda o, p: o.NAdam(p, momentum_decay=-1),
    "nadam_beta_one": lambda o, p: o.NAdam(p, betas=(0.9, 1.0)),
    "radam_negative_weight_decay": lambda o, p: o.RAdam(p, weight_decay=-1),
    "adamax_beta_one": lambda o, p: o.Adamax(p, betas=(1.0, 0.9)),
    "asgd_negative_lr": lambda o, p: o.ASGD(p, lr=-1),
    "rprop_bad_etas": lambda o, p: o.Rprop(p, etas=(1.5, 1.2)),
    "empty_params": lambda o, p: o.Adam([]),
    "a_tensor_as_params": lambda o, p: o.Adam(p[0]),
    "not_a_tensor": lambda o, p: o.SGD([1.0]),
    "duplicated_across_groups": lambda o, p: o.SGD([{"params": p}, {"params": p}]),
    "mixed_names": lambda o, p: o.SGD([("a", p[0]), p[1]]),
}


def assert_raises_like_torch(build):
    """``build(lib)`` raises in torch, and raises the same exception type in webgrad."""
    def raised(lib):
        try:
            build(lib)
        except Exception as e:      # noqa: BLE001  the type is what is compared
            return type(e), str(e)
        return None, ""
    (theirs, _), (ours, message) = raised(torch), raised(wg)
    assert theirs is not None, "torch accepts this: the case is wrong"
    assert ours is theirs, f"webgrad raised {ours} ({message}); torch raises {theirs}"


@pytest.mark.parametrize("name", ERRORS)
def test_bad_arguments_raise_torchs_exception_types(name):
    assert_raises_like_torch(lambda lib: ERRORS[name](lib.optim, [lib.zeros(2, requires_grad=True),
                                                                  lib.zeros(2, requires_grad=True)]))


def test_non_leaf_is_refused():
    with pytest.raises(ValueError, match="non-leaf"):
        wg.optim.SGD([wg.ones(2, requires_grad=True) * 2])


def test_differentiable_is_refused_with_a_reason():
    with pytest.raises(NotImplementedError, match="differentiable"):
        wg.optim.Adam([wg.nn.Parameter(wg.ones(1))], differentiable=True)
