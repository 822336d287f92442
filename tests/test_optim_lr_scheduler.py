"""Every lr scheduler against PyTorch's: the lr of each parameter group (and the momentum or beta1
the cyclic ones drive) at construction and after each of 30 steps, ReduceLROnPlateau fed one
metric sequence, ``step(epoch)`` jumps, resuming with ``last_epoch``, ``state_dict`` round
trips, a scheduler driving training on every backend, and the exception types of bad arguments."""
import warnings

import numpy as np
import pytest

import webgrad as wg

from test_optim_state import assert_raises_like_torch

torch = pytest.importorskip("torch")

STEPS = 30


def make_optimizer(lib, kind="sgd"):
    a, b = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    return {"sgd": lambda: lib.optim.SGD(groups, lr=0.1, momentum=0.9),
            "adam": lambda: lib.optim.Adam(groups, lr=0.1),
            "adagrad": lambda: lib.optim.Adagrad(groups, lr=0.1)}[kind]()


def snapshot(opt, sched):
    groups = [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]
    return groups, list(sched.get_last_lr())


SCHEDULERS = {
    "lambda": ("sgd", lambda s, o: s.LambdaLR(o, lambda e: 0.95 ** e)),
    "lambda_per_group": ("sgd", lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9 ** e])),
    "multiplicative": ("sgd", lambda s, o: s.MultiplicativeLR(o, lambda e: 0.9 if e % 3 else 1.1)),
    "step": ("sgd", lambda s, o: s.StepLR(o, 4, gamma=0.5)),
    "multistep": ("sgd", lambda s, o: s.MultiStepLR(o, [3, 7, 7, 20], gamma=0.3)),
    "constant": ("sgd", lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=6)),
    "linear": ("sgd", lambda s, o: s.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=10)),
    "exponential": ("adam", lambda s, o: s.ExponentialLR(o, 0.9)),
    "polynomial": ("sgd", lambda s, o: s.PolynomialLR(o, total_iters=20, power=2.0)),
    "cosine": ("sgd", lambda s, o: s.CosineAnnealingLR(o, T_max=8, eta_min=0.001)),
    "warm_restarts": ("sgd", lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=5, eta_min=0.001)),
    "warm_restarts_mult": ("sgd", lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)),
    "cyclic": ("sgd", lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4)),
    "cyclic_triangular2": ("sgd", lambda s, o: s.CyclicLR(o, [0.01, 0.02], [0.1, 0.2], step_size_up=3,
                                                          step_size_down=5, mode="triangular2")),
    "cyclic_exp_range": ("sgd", lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="exp_range",
                                                        gamma=0.95)),
    "cyclic_scale_fn": ("sgd", lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4, scale_fn=lambda x: 0.5 ** x,
                                                       scale_mode="iterations")),
    "cyclic_adam_beta1": ("adam", lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4, base_momentum=0.8,
                                                          max_momentum=0.95)),
    "cyclic_no_momentum": ("adagrad", lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=5, cycle_momentum=False)),
    "onecycle": ("sgd", lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=STEPS)),
    "onecycle_adam_linear_3phase": ("adam", lambda s, o: s.OneCycleLR(
        o, max_lr=[0.1, 0.05], epochs=3, steps_per_epoch=10, anneal_strategy="linear", three_phase=True,
        pct_start=0.25, div_factor=10.0, final_div_factor=100.0)),
    "sequential": ("sgd", lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=5), s.ExponentialLR(o, 0.9)], milestones=[5])),
    "sequential_three": ("sgd", lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, 0.5, total_iters=3), s.CosineAnnealingLR(o, 10), s.StepLR(o, 3)], milestones=[4, 12])),
    "chained": ("sgd", lambda s, o: s.ChainedScheduler([s.ConstantLR(o, 0.5, total_iters=4), s.ExponentialLR(o, 0.9)])),
    "chained_given_optimizer": ("adam", lambda s, o: s.ChainedScheduler(
        [s.MultiStepLR(o, [5, 9]), s.CosineAnnealingLR(o, T_max=6)], optimizer=o)),
}


def lr_sequence(lib, kind, make, steps=STEPS):
    opt = make_optimizer(lib, kind)
    sched = make((lib.optim if lib is torch else wg.optim).lr_scheduler, opt)
    out = [snapshot(opt, sched)]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(snapshot(opt, sched))
    return out


@pytest.mark.parametrize("name", SCHEDULERS)
def test_lr_sequence_matches_torch(name):
    kind, make = SCHEDULERS[name]
    theirs, ours = lr_sequence(torch, kind, make), lr_sequence(wg, kind, make)
    assert len(ours) == len(theirs) == STEPS + 1
    for k, ((tg, tl), (wg_, wl)) in enumerate(zip(theirs, ours)):
        for (tlr, tm, tb), (wlr, wm, wb) in zip(tg, wg_):
            assert wlr == pytest.approx(tlr, rel=1e-12, abs=1e-18), f"lr after step {k}"
            assert (wm is None) == (tm is None) and (wm is None or wm == pytest.approx(tm, rel=1e-12)), \
                f"momentum after step {k}"
            assert (wb is None) == (tb is None) and (wb is None or wb == pytest.approx(tb, rel=1e-12)), \
                f"betas after step {k}"
        assert wl == pytest.approx(tl, rel=1e-12, abs=1e-18), f"get_last_lr after step {k}"


PLATEAU = {
    "defaults": dict(),
    "patience_cooldown_factor": dict(patience=1, cooldown=2, factor=0.5),
    "max_abs": dict(mode="max", threshold_mode="abs", threshold=0.05, patience=0),
    "min_abs_min_lr_list": dict(threshold_mode="abs", threshold=0.01, patience=1, min_lr=[0.02, 0.01]),
    "max_rel_eps": dict(mode="max", patience=0, factor=0.9, min_lr=0.085, eps=0.005),
}
METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.94, 0.9, 0.9, 0.9, 0.9, 0.89999, 0.5, 0.6, 0.7, 0.55, 0.5, 0.5, 0.45,
           0.5, 0.6, 0.7, 0.8, 0.9, 0.3, 0.3, 0.3, 0.31, 0.29, 0.28, 0.28] * 2


@pytest.mark.parametrize("name", PLATEAU)
def test_reduce_lr_on_plateau_matches_torch(name):
    def run(lib):
        opt = make_optimizer(lib)
        sched = (lib.optim if lib is torch else wg.optim).lr_scheduler.ReduceLROnPlateau(opt, **PLATEAU[name])
        out = []
        for m in METRICS:
            sched.step(lib.tensor(m) if m == 0.5 else m)     # a one-element tensor is a metric too
            out.append((*sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter, sched.best,
                        sched.last_epoch))   # flat: pytest.approx takes no nested lists
        return out
    theirs, ours = run(torch), run(wg)
    assert len({t[:2] for t in theirs}) > 1, "the case never reduces: it tests nothing"
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a == pytest.approx(b, rel=1e-12), f"after metric {k}"


def test_step_with_epoch_uses_the_closed_form_and_warns_like_torch():
    def run(lib, make):
        opt = make_optimizer(lib)
        sched = make((lib.optim if lib is torch else wg.optim).lr_scheduler, opt)
        out = []
        for epoch in [0, 1, 5, 2, 9, 9, 3, 14]:
            opt.step()
            with pytest.warns(UserWarning, match="epoch parameter"):
                sched.step(epoch)
            out += sched.get_last_lr()
        sched.step()
        return out + sched.get_last_lr()
    for make in (lambda s, o: s.StepLR(o, 3, 0.5), lambda s, o: s.MultiStepLR(o, [2, 4, 4]),
                 lambda s, o: s.LinearLR(o, 0.3, 0.8, 6), lambda s, o: s.CosineAnnealingLR(o, 7, 0.01),
                 lambda s, o: s.PolynomialLR(o, 10, 1.5), lambda s, o: s.ExponentialLR(o, 0.8),
                 lambda s, o: s.ConstantLR(o, 0.4, 4), lambda s, o: s.LambdaLR(o, lambda e: 1 / (1 + e))):
        assert run(wg, make) == pytest.approx(run(torch, make), rel=1e-12)


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_with_fractional_and_interleaved_epochs(T_mult):
    def run(lib):
        opt = make_optimizer(lib)
        sched = (lib.optim if lib is torch else wg.optim).lr_scheduler.CosineAnnealingWarmRestarts(
            opt, T_0=4, T_mult=T_mult, eta_min=0.002)
        out = []
        for epoch in range(12):
            for i in range(3):
                sched.step(epoch + i / 3)
                out.append((*sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        sched.step(26)
        sched.step()
        return out + [(*sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch)]
    for a, b in zip(run(wg), run(torch)):
        assert a == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize("name", ["step", "exponential", "cosine", "linear", "polynomial", "multiplicative",
                                  "cyclic", "onecycle"])
def test_resuming_with_last_epoch_matches_torch(name):
    """A scheduler made with ``last_epoch=k`` (after the optimizer's groups got ``initial_lr``)
    continues as PyTorch's does."""
    kind, make = SCHEDULERS[name]

    def run(lib):
        opt = make_optimizer(lib, kind)
        s = (lib.optim if lib is torch else wg.optim).lr_scheduler
        first = make(s, opt)
        for _ in range(7):
            opt.step()
            first.step()
        resumed = _with_last_epoch(make, s, opt, 6)
        out = [snapshot(opt, resumed)]
        for _ in range(8):
            opt.step()
            resumed.step()
            out.append(snapshot(opt, resumed))
        return out
    for (tg, tl), (wg_, wl) in zip(run(torch), run(wg)):
        assert [g[0] for g in wg_] == pytest.approx([g[0] for g in tg], rel=1e-12)
        assert wl == pytest.approx(tl, rel=1e-12)


def _with_last_epoch(make, s, opt, last_epoch):
    """The scheduler ``make`` builds, built again with ``last_epoch`` (by wrapping its class)."""
    made = {}

    class Spy:
        def __getattr__(self, name):
            cls = getattr(s, name)
            return lambda *args, **kwargs: made.setdefault("s", cls(*args, last_epoch=last_epoch, **kwargs))
    make(Spy(), opt)
    return made["s"]


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_state_dict_resumes_exactly(name):
    kind, make = SCHEDULERS[name]
    opt = make_optimizer(wg, kind)
    sched = make(wg.optim.lr_scheduler, opt)
    for _ in range(10):
        sched.step()
    opt_state, sched_state = opt.state_dict(), sched.state_dict()
    assert "optimizer" not in sched_state
    opt2 = make_optimizer(wg, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched2 = make(wg.optim.lr_scheduler, opt2)
    opt2.load_state_dict(opt_state)
    sched2.load_state_dict(sched_state)
    for _ in range(12):
        sched.step()
        sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()
        assert [g["lr"] for g in opt2.param_groups] == [g["lr"] for g in opt.param_groups]


def test_state_dict_keeps_callable_objects_state_not_functions():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch
    for lib in (torch, wg):
        s = (lib.optim if lib is torch else wg.optim).lr_scheduler
        opt = make_optimizer(lib)
        fn = Decay(0.5)
        sched = s.LambdaLR(opt, [fn, lambda e: 1.0])
        fn.rate = 0.25
        state = sched.state_dict()
        assert state["lr_lambdas"] == [{"rate": 0.25}, None] and "optimizer" not in state
        other = Decay(0.9)
        again = s.LambdaLR(make_optimizer(lib), [other, lambda e: 2.0])
        again.load_state_dict(state)
        assert other.rate == 0.25 and again.lr_lambdas[0] is other
        cyclic = s.CyclicLR(opt, 0.01, 0.1, scale_fn=Decay(0.7))
        assert cyclic.state_dict()["_scale_fn_custom"] == {"rate": 0.7}
        assert "_scale_fn_ref" not in s.CyclicLR(opt, 0.01, 0.1).state_dict()


def test_resuming_without_initial_lr_raises_key_error():
    for lib in (torch, wg):
        with pytest.raises(KeyError, match="initial_lr"):
            (lib.optim if lib is torch else wg.optim).lr_scheduler.StepLR(make_optimizer(lib), 3, last_epoch=4)


def test_scheduler_drives_training_like_torch(backend):
    w0 = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)

    def run(lib):
        w = lib.tensor(w0.copy(), requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        sched = (lib.optim if lib is torch else wg.optim).lr_scheduler.OneCycleLR(opt, max_lr=0.2, total_steps=10)
        for _ in range(10):
            opt.zero_grad()
            ((lib.tensor(x) @ w).tanh() ** 2).sum().backward()
            opt.step()
            sched.step()
        return w.detach().numpy()
    np.testing.assert_allclose(run(wg), run(torch), rtol=1e-4, atol=1e-5)


ERRORS = {
    "not_an_optimizer": lambda s, o: s.StepLR("optimizer", 3),
    "constant_factor": lambda s, o: s.ConstantLR(o, factor=1.5),
    "linear_start_zero": lambda s, o: s.LinearLR(o, start_factor=0),
    "linear_end_above_one": lambda s, o: s.LinearLR(o, end_factor=1.5),
    "warm_restarts_T_0": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    "warm_restarts_float_T_0": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=1.5),
    "warm_restarts_T_mult": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    "warm_restarts_eta_min": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    "warm_restarts_negative_epoch": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    "cyclic_mode": lambda s, o: s.CyclicLR(o, 0.01, 0.1, mode="sawtooth"),
    "cyclic_lengths": lambda s, o: s.CyclicLR(o, [0.01], 0.1),
    "cyclic_momentum_on_adagrad": lambda s, o: s.CyclicLR(o, 0.01, 0.1),
    "onecycle_momentum_on_adagrad": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=5),
    "onecycle_no_length": lambda s, o: s.OneCycleLR(o, max_lr=0.1),
    "onecycle_zero_steps": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=0),
    "onecycle_zero_epochs": lambda s, o: s.OneCycleLR(o, max_lr=0.1, epochs=0, steps_per_epoch=3),
    "onecycle_pct_start": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=5, pct_start=1.5),
    "onecycle_int_pct_start": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=5, pct_start=1),
    "onecycle_anneal": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=5, anneal_strategy="exp"),
    "onecycle_past_the_end": lambda s, o: _steps(o, s.OneCycleLR(o, max_lr=0.1, total_steps=2), 3),
    "plateau_factor": lambda s, o: s.ReduceLROnPlateau(o, factor=1.0),
    "plateau_mode": lambda s, o: s.ReduceLROnPlateau(o, mode="avg"),
    "plateau_threshold_mode": lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="pct"),
    "plateau_min_lrs": lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]),
    "lambda_count": lambda s, o: s.LambdaLR(o, [lambda e: 1.0]),
    "multiplicative_not_callable": lambda s, o: s.MultiplicativeLR(o, 0.5),
    "sequential_milestones": lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.StepLR(o, 3)], milestones=[]),
    "sequential_plateau": lambda s, o: s.SequentialLR(o, [s.ReduceLROnPlateau(o), s.StepLR(o, 3)], milestones=[2]),
    "sequential_empty": lambda s, o: s.SequentialLR(o, [], milestones=[]),
    "chained_empty": lambda s, o: s.ChainedScheduler([]),
    "chained_plateau": lambda s, o: s.ChainedScheduler([s.ReduceLROnPlateau(o)]),
}


def _steps(optimizer, scheduler, n):
    for _ in range(n):
        optimizer.step()
        scheduler.step()


@pytest.mark.parametrize("name", ERRORS)
def test_bad_arguments_raise_torchs_exception_types(name):
    assert_raises_like_torch(lambda lib: ERRORS[name]((lib.optim if lib is torch else wg.optim).lr_scheduler,
                                                      make_optimizer(lib, "adagrad" if "adagrad" in name else "sgd")))


def test_schedulers_of_another_optimizer_are_refused():
    for lib in (torch, wg):
        s = (lib.optim if lib is torch else wg.optim).lr_scheduler
        a, b = make_optimizer(lib), make_optimizer(lib)
        with pytest.raises(ValueError, match="same optimizer"):
            s.SequentialLR(a, [s.StepLR(a, 2), s.StepLR(b, 2)], milestones=[3])
        with pytest.raises(ValueError, match="same optimizer"):
            s.ChainedScheduler([s.StepLR(a, 2), s.StepLR(b, 2)])
