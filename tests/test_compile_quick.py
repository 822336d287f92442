"""The quick guard (``core/compiler/quick.py``): while nothing the last walk over a compiled function's
reach read has moved, a call takes its places and key without walking again; every change the walk
would see still makes the call walk, and so trace again where the key changed (a new shape or dtype, a
``requires_grad_`` flip, ``p.data = ...`` of another shape, a replaced parameter, a mode, an option,
data shared between places) or replay with the new values where it did not (an in-place change
outside the step, ``p.data = ...`` of the same shape)."""
import pytest

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F
from webgrad.compiler import quick as quick_module


def _close(a, b, backend):
    if backend == "cpu":
        assert a == b
    else:
        assert a == pytest.approx(b, rel=1e-5, abs=1e-6)


@pytest.fixture
def walks(monkeypatch):
    """How many calls walked (``find_places``) since the fixture was made."""
    count = [0]
    real = quick_module.find_places

    def counted(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(quick_module, "find_places", counted)
    return count


def _setup(backend, make_opt=lambda p: wg.optim.SGD(p, lr=0.1, momentum=0.9)):
    wg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(backend)
    opt = make_opt(model.parameters())

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    g = wg.Generator().manual_seed(1)
    x, y = wg.randn(6, 4, generator=g).to(backend), wg.randint(0, 3, (6,), generator=g).to(backend)
    return model, opt, step, x, y


def _pair(backend, change, make_opt=lambda p: wg.optim.SGD(p, lr=0.1, momentum=0.9)):
    """The losses, parameters and optimizer state of 5 steps, ``change(model, opt, x)`` made after the third, eagerly and
    compiled; and the compiled function."""
    out = []
    for compiled in (False, True):
        model, opt, step, x, y = _setup(backend, make_opt)
        fn = wg.compile(step) if compiled else step
        losses = [fn(x, y).item() for _ in range(3)]
        change(model, opt, x)
        losses += [fn(x, y).item() for _ in range(2)]
        state = [v for p in model.parameters() for t in opt.state[p].values() if isinstance(t, wg.Tensor)
                 for v in t.flatten().tolist()]
        out.append((losses, [v for p in model.parameters() for v in p.flatten().tolist()] + state))
    (eager, eager_params), (got, params) = out
    _close(got, eager, backend)
    _close(params, eager_params, backend)
    return fn


def test_replays_while_nothing_moved_do_not_walk(backend, walks):
    _, _, step, x, y = _setup(backend)
    fn = wg.compile(step)
    for _ in range(3):                      # a trace (momentum's state is made), a trace, a replay
        fn(x, y)
    before = walks[0]
    for _ in range(4):
        fn(x.clone(), y.clone())            # new argument tensors of the same shapes and dtypes
    assert walks[0] == before and fn.replays == 5 and fn.traces == 2, (walks[0], before, fn.explain())


def test_an_in_place_change_outside_the_step_is_read_by_the_next_replay(backend, walks):
    def change(model, opt, x):
        with wg.no_grad():
            model[0].weight.mul_(0.5)
        x.add_(1.0)
    fn = _pair(backend, change)
    assert fn.traces == 2 and fn.replays == 3


def test_p_data_of_the_same_shape_replays_and_of_another_shape_traces_again(backend):
    def same(model, opt, x):
        model[2].bias.data = wg.ones(3, device=backend)
    fn = _pair(backend, same)
    assert fn.traces == 2 and fn.replays == 3

    def other(model, opt, x):   # five classes now: the places hold other shapes, a new key
        model[2].weight.data = wg.ones(5, 8, device=backend) * 0.1
        model[2].bias.data = wg.zeros(5, device=backend)
    fn = _pair(backend, other, lambda p: wg.optim.SGD(p, lr=0.1))
    assert fn.traces == 4 and fn.replays == 1, fn.explain()   # the new data, then its .grad's new shape


def test_a_loaded_optimizer_state_is_the_one_the_replay_updates(backend):
    def reload(model, opt, x):   # new state dicts (and tensors) in a new opt.state
        saved = opt.state_dict()
        for s in saved["state"].values():
            s["momentum_buffer"] = s["momentum_buffer"] * 0.5
        opt.load_state_dict(saved)
    fn = _pair(backend, reload)
    assert fn.traces >= 3, fn.explain()    # new state dicts: a new key


def test_a_requires_grad_flip_traces_again(backend):
    def freeze(model, opt, x):
        model[0].weight.requires_grad_(False)      # (its .grad stays until zero_grad: only the flag moved)
    fn = _pair(backend, freeze)
    assert fn.traces == 4 and fn.replays == 1, fn.explain()   # the flag, then its .grad gone (zero_grad)


def test_a_replaced_parameter_traces_again(backend):
    def replace(model, opt, x):
        new = nn.Parameter(model[2].weight.detach().clone() * 2)
        model[2].weight = new
        opt.param_groups[0]["params"][2] = new
    fn = _pair(backend, replace)
    assert fn.traces == 4, fn.explain()     # the new parameter, then its momentum state


def test_an_option_a_mode_or_a_new_group_makes_the_call_walk(backend, walks):
    model, opt, step, x, y = _setup(backend)
    fn = wg.compile(step)
    for _ in range(3):
        fn(x, y)
    opt.param_groups[0]["momentum"] = 0.5          # a guarded option changed in place
    fn(x, y)
    assert fn.traces == 3
    model.eval()                                   # a module's training flag
    fn(x, y)
    assert fn.traces == 4
    model.train()
    fn(x, y)
    f = wg.compile(lambda a: a * 2)
    for _ in range(3):
        f(x)
    before = walks[0]
    with wg.no_grad():                             # grad mode
        assert f(x).tolist() == (x * 2).tolist()
    assert f.traces == 2 and walks[0] == before + 1


def test_arguments_sharing_data_or_of_another_dtype_make_the_call_walk(backend):
    f = wg.compile(lambda a, b: a * 2 + b)
    x, y = wg.ones(3, device=backend), wg.full((3,), 2.0, device=backend)
    assert f(x, y).tolist() == [4.0] * 3 and f(x, y).tolist() == [4.0] * 3
    assert f(x, x).tolist() == [3.0] * 3 and f.traces == 2    # one tensor in two places: another key
    assert f(x, y.double() if backend == "cpu" else y.int()).tolist() == [4.0] * 3 and f.traces == 3
    assert f(x, y).tolist() == [4.0] * 3 and (f.traces, f.replays) == (3, 2)


def test_a_rebound_closure_or_global_makes_the_call_walk(backend):
    k = 2.0

    def scaled(x):
        return x * k
    f = wg.compile(scaled)
    x = wg.ones(2, device=backend)
    assert f(x).tolist() == [2.0, 2.0] and f(x).tolist() == [2.0, 2.0]
    k = 5.0
    assert f(x).tolist() == [5.0, 5.0] and f.traces == 2
    w = wg.ones(2, device=backend)
    g = wg.compile(lambda x: x * w)
    assert g(x).tolist() == [1.0, 1.0] and g(x).tolist() == [1.0, 1.0]
    w = wg.full((2,), 3.0, device=backend)                 # another tensor in the closure
    assert g(x).tolist() == [3.0, 3.0]


def test_an_argument_requiring_grad_walks_every_call(backend, walks):
    f = wg.compile(lambda a: (a * a).sum())
    for _ in range(3):
        x = wg.ones(2, device=backend, requires_grad=True)
        f(x).backward()
        assert x.grad.tolist() == [2.0, 2.0]
    assert walks[0] >= 3


def test_the_quick_guard_keeps_no_replaced_state_alive(backend):
    import gc
    import weakref
    model, opt, step, x, y = _setup(backend, lambda p: wg.optim.Adam(p, lr=0.01))
    fn = wg.compile(step)
    for _ in range(2):                      # two traces (the second makes Adam's state)
        fn(x, y)
    old = [weakref.ref(t) for s in opt.state.values() for t in s.values() if isinstance(t, wg.Tensor)]
    old += [weakref.ref(p.grad) for p in model.parameters()]
    for _ in range(3):                      # a walk (its quick guard sees these), replays replacing them all
        fn(x, y)
    gc.collect()
    current = {id(t) for s in opt.state.values() for t in s.values()}   # (a device holding the plan updates
    alive = [r() for r in old if r() is not None and id(r()) not in current]   # Adam's state in place)
    assert fn._quick is not None and old and not alive, len(alive)


class _Box:
    pass


def test_a_tensor_the_walk_does_not_reach_is_written_back_by_the_replay(backend):
    box = _Box()
    box.inner = _Box()
    box.inner.deep = _Box()
    box.inner.deep.t = wg.zeros(2, device=backend)      # three attributes down: not a place, held weakly

    def bump(x):
        box.inner.deep.t.add_(x)
        return x * 2
    f = wg.compile(bump)
    for _ in range(4):
        f(wg.ones(2, device=backend))
    t = box.inner.deep.t
    assert (t.tolist(), t._version, f.traces, f.replays) == ([4.0, 4.0], 4, 1, 3)
    assert [w[0] for p in f.plans.values() for w in p.plan.writes] == ["fixed"]


def _same_answer(q, args, kwargs=None):
    """The generated guard and the general check give the same answer (None, or the same places, key and tensors)."""
    kwargs = kwargs or {}
    got = q(None, args, kwargs)
    try:
        want = quick_module.Quick._check(q, args, kwargs)
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        want = None
    assert (got is None) == (want is None)
    if got is not None:
        assert got.key == want.key and got.places is want.places and list(got.tensors) == list(want.tensors)
    return got


def test_the_generated_guard_answers_as_the_general_check(backend):
    """A walk over plain positional arguments gets its quick guard as one generated function (its text in
    ``_check.source``); over each change the walk would see, it answers as ``Quick._check`` does."""
    model, opt, step, x, y = _setup(backend)
    step(x, y)                                        # .grad and momentum state exist
    found, q = quick_module.watch(step, (x, y), {})
    assert "def check(args, kwargs):" in q._check.source and "return Found(PLACES" in q._check.source
    assert _same_answer(q, (x.clone(), y.clone())) is not None
    assert _same_answer(q, (x[:3].clone(), y[:3].clone())) is None                  # another shape
    assert _same_answer(q, (x.half(), y)) is None                                    # another dtype
    assert _same_answer(q, (x, y, 1)) is None and _same_answer(q, (x,), {"y": y}) is None
    assert _same_answer(q, (x, y.tolist())) is None                                  # not a tensor
    assert _same_answer(q, (x, x)) is None                                           # two places sharing data
    with wg.no_grad():
        assert _same_answer(q, (x, y)) is None                                       # grad mode
    model[0].weight.requires_grad_(False)
    assert _same_answer(q, (x, y)) is None
    model[0].weight.requires_grad_(True)
    model[0].weight.grad = None                                                      # a place emptied
    assert _same_answer(q, (x, y)) is None
    opt.param_groups[0]["momentum"] = 0.5                                            # a guarded option
    assert _same_answer(q, (x, y)) is None


def test_a_walk_over_keywords_or_containers_keeps_the_general_check(backend):
    _, _, step, x, y = _setup(backend)
    for args, kwargs in (((x,), {"y": y}), (([x, y],), {})):
        fn = (lambda x, y: step(x, y)) if kwargs else (lambda xy: step(*xy))
        _, q = quick_module.watch(fn, args, kwargs)
        assert not hasattr(q._check, "source")
        assert q(fn, args, kwargs) is not None


def _view_step(backend):
    """The browser bench's idiom: parameters and an argument that are views (``reshape``) of other tensors."""
    wg.manual_seed(0)
    roots = [wg.randn(12, device=backend), wg.randn(3, device=backend)]
    w, b = roots[0].reshape(4, 3).requires_grad_(), roots[1].reshape(3).requires_grad_()
    opt = wg.optim.SGD([w, b], lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(x @ w + b, y)
        loss.backward()
        opt.step()
        return loss
    g = wg.Generator().manual_seed(1)
    x, y = wg.randn(24, generator=g).to(backend).reshape(6, 4), wg.randint(0, 3, (6,), generator=g).to(backend)
    return roots, (w, b), step, x, y


def test_parameters_that_are_views_replay_without_walking(backend, walks):
    """A place holding a view (a parameter made by ``reshape``, an argument that is a view) keeps its quick guard:
    the replays walk no more, and give eager's losses, parameters and roots (the roots see every update)."""
    out = []
    for compiled in (False, True):
        roots, params, step, x, y = _view_step(backend)
        fn = wg.compile(step) if compiled else step
        losses = [fn(x, y).item() for _ in range(3)]   # two traces (the second with .grad), a walk and replay
        before = walks[0]
        losses += [fn(x.clone().reshape(6, 4), y).item() for _ in range(3)]   # (a new argument view each call)
        out.append((losses, [v for t in params + tuple(roots) for v in t.flatten().tolist()], walks[0] - before))
    (eager, eager_values, _), (got, values, walked) = out
    _close(got, eager, backend)
    _close(values, eager_values, backend)
    assert fn._quick is not None and walked == 0 and fn.replays == 4, (walked, fn.explain())
    assert values[:12] == values[15:27]                        # w is a view of its root: the same elements


def test_a_parameter_that_becomes_another_view_makes_the_call_walk(backend, walks):
    roots, (w, b), step, x, y = _view_step(backend)
    fn = wg.compile(step)
    for _ in range(3):
        fn(x, y)
    found, q = quick_module.watch(step, (x, y), {})
    assert q is not None and _same_answer(q, (x, y)) is not None
    info = w._view
    w._view = type(info)(info.root, info.layout, info.versions)   # another view of the same elements
    assert _same_answer(q, (x, y)) is None
    w._view = None                                             # no longer a view
    assert _same_answer(q, (x, y)) is None
    w._view = info
    assert _same_answer(q, (x, y)) is not None


def test_write_backs_refresh_only_the_views_they_do_not_write(backend, monkeypatch):
    """A replay writing a root and its view (a parameter made by ``reshape``) leaves the view the value it wrote,
    and refreshes the root's other live views (a slice made after the trace, which the plan does not know):
    eager's values for all of them."""
    from webgrad.compiler import replay as replay_module
    out, refreshed = [], []
    for compiled in (False, True):
        roots, params, step, x, y = _view_step(backend)
        fn = wg.compile(step) if compiled else step
        for _ in range(3):
            fn(x, y)
        alias = roots[0][2:8]                                     # a view of w's root that no place holds
        if compiled:
            real = replay_module.refresh
            monkeypatch.setattr(replay_module, "refresh", lambda v, tracked: (refreshed.append(v), real(v, tracked)))
        for _ in range(2):
            fn(x, y)
        out.append([v for t in params + tuple(roots) + (alias,) for v in t.flatten().tolist()])
    _close(out[1], out[0], backend)
    assert out[1][30:36] == out[1][17:23] and fn.replays == 3   # the alias sees its root's (and w's) elements
    assert len(refreshed) == 2 and all(v is alias for v in refreshed), len(refreshed)   # once per replay: the alias
