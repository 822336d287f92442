"""On the GPU backends a compiled plan is held by the device after its first replay
(``backends/gpu/resident.py``): a replay records nothing from Python, is one submit with the open
batch, gives eager's results: per-step numbers (a scheduled learning rate; Adagrad's decayed rate, small
tensors the step uploads; a dropout's seed inside a dispatch's uniforms) are written into the held plan at
each replay. On ``cpu`` plans replay as generated numpy code, as before."""
import pytest

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F

STEPS = 6


def _train(backend, compiled, make_opt, *dropout):
    wg.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), *dropout, nn.Linear(16, 4)).to(backend)
    opt = make_opt(model.parameters())
    sched = wg.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    fn = wg.compile(step) if compiled else step
    losses = []
    for i in range(STEPS):
        g = wg.Generator().manual_seed(i)
        x, y = wg.randn(12, 8, generator=g).to(backend), wg.randint(0, 4, (12,), generator=g).to(backend)
        losses.append(fn(x, y).item())
        sched.step()
    return fn, losses, [v for p in model.parameters() for v in p.flatten().tolist()], (model, opt, x, y)


def _sgd(p):
    return wg.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.001)


def test_a_replay_is_one_submit_of_a_plan_the_device_holds(backend):
    _, eager_losses, eager_params, _ = _train(backend, False, _sgd)
    fn, losses, params, (_, _, x, y) = _train(backend, True, _sgd)
    assert losses == pytest.approx(eager_losses, rel=1e-5, abs=1e-6)
    assert params == pytest.approx(eager_params, rel=1e-5, abs=1e-6)
    text = fn.explain()
    if backend == "cpu":
        assert "held by the device" not in text and "replayed from Python" not in text, text
        return
    assert f"({STEPS - 3} so far)" in text, text     # two traces, then the replay that builds the plan
    be = wg.backend(backend)
    recorded, submits = [], be.submits
    record = be.record
    be.record = lambda call, arrays: (recorded.append(call.label), record(call, arrays))[1]
    try:
        fn(x, y)
    finally:
        del be.record
    assert recorded == [] and be.submits == submits + 1, recorded


def test_a_dropout_mask_and_a_decayed_rate_are_written_into_the_held_plan(backend):
    def adagrad(p):
        return wg.optim.Adagrad(p, lr=0.05, lr_decay=0.01)
    _, eager_losses, eager_params, _ = _train(backend, False, adagrad, nn.Dropout(0.25))
    fn, losses, params, _ = _train(backend, True, adagrad, nn.Dropout(0.25))
    assert losses == pytest.approx(eager_losses, rel=1e-5, abs=1e-6)
    assert params == pytest.approx(eager_params, rel=1e-5, abs=1e-6)
    assert "RandomValues(, values=<per-step" in fn.explain()     # the mask, drawn on the host per replay
    assert ("held by the device" in fn.explain()) == (backend != "cpu"), fn.explain()


def test_the_held_plan_reuses_the_buffers_of_intermediates_that_died(backend):
    w = wg.eye(16, device=backend) * 0.5

    @wg.compile
    def chain(x):
        for _ in range(20):       # matrix products: not fused, each a dispatch and an intermediate
            x = x @ w
        return x
    x = wg.ones(4, 16, device=backend)
    got = [chain(x).flatten().tolist() for _ in range(3)]   # a trace, the replay that builds the plan, a held one
    assert got[-1] == got[0] == pytest.approx([0.5 ** 20] * 64)
    held = getattr(next(iter(chain.plans.values())).run_steps, "handle", None)
    if backend == "cpu":
        assert held is None
        return
    fixed = {id(r[1]) for *_, refs in held.dispatches for r in refs if r[0] == 0}
    assert len(held.dispatches) == 20 and len(fixed) <= 3, len(fixed)   # not 19 intermediates, one each


@pytest.mark.parametrize("make_opt", [lambda p: wg.optim.Adam(p, lr=0.01, weight_decay=0.01),
                                      lambda p: wg.optim.AdamW(p, lr=0.01, betas=(0.8, 0.99))], ids=["Adam", "AdamW"])
def test_an_adam_step_is_held_by_the_device_with_its_numbers_as_they_are(backend, make_opt):
    # AdamStep's uniforms hold the bias corrections and step size as the per-step numbers are (the kernel
    # negates the step size itself), so the held plan writes them at each replay and gives eager's bits
    _, eager_losses, eager_params, _ = _train(backend, False, make_opt)
    fn, losses, params, _ = _train(backend, True, make_opt)
    assert (losses, params) == (eager_losses, eager_params)
    text = fn.explain()
    assert "replayed from Python" not in text and "runs eagerly" not in text, text
    assert ("held by the device" in text) == (backend != "cpu"), text
    assert "AdamStep(" in text and "step_size=<per-step" in text, text


def _state_values(opt):
    return [v for s in opt.state.values() for t in s.values() if isinstance(t, wg.Tensor) for v in t.flatten().tolist()]


def test_a_held_replay_updates_parameters_and_optimizer_state_in_their_own_buffers(backend):
    # the device writes a parameter's update and Adam's moments into the tensors' own buffers (copied there
    # after the dispatches), as PyTorch's in-place updates do: the tensors keep their data, their versions
    # move; only the loss and the new .grad tensors are buffers handed out per replay
    import weakref

    def adam(p):
        return wg.optim.Adam(p, lr=0.01)
    _, eager_losses, eager_params, (_, eager_opt, _, _) = _train(backend, False, adam)
    fn, losses, params, (model, opt, x, y) = _train(backend, True, adam)
    assert (losses, params) == (eager_losses, eager_params)
    assert _state_values(opt) == _state_values(eager_opt)
    p = model[0].weight
    data, version, moments, before = weakref.ref(p._data), p._version, dict(opt.state[p]), p.tolist()
    fn(x, y)
    assert p.tolist() != before and p._version > version
    if backend == "cpu":
        return
    held = next(e for e in fn.plans.values() if getattr(e.run_steps, "handle", None) is not None).run_steps
    assert p._data is data() and all(opt.state[p][k] is t for k, t in moments.items() if isinstance(t, wg.Tensor))
    n_params = len(list(model.parameters()))
    assert len(held.into) == 3 * n_params                # each parameter, its exp_avg and exp_avg_sq
    assert len(held.outs) == 1 + n_params, held.outs     # the loss and the gradients


def test_a_parameter_whose_data_something_else_holds_gets_new_data_as_eagerly(backend):
    # (the held plan writes in place only what nothing but its tensor holds; else that call replays from
    # Python, whose update gives the tensor new data, as eager's does: the array held keeps its values)
    _, eager_losses, eager_params, _ = _train(backend, False, _sgd)
    fn, losses, params, (model, opt, x, y) = _train(backend, True, _sgd)
    p = model[0].weight
    held_data, alias, before = p._data, p.detach(), p.tolist()
    replays = getattr(fn.last.run_steps, "replays", None)
    fn(x, y)
    assert p._data is not held_data and alias.tolist() == p.tolist() != before
    assert wg.Tensor._wrap(held_data, p._backend).tolist() == before
    if backend != "cpu":
        assert fn.last.run_steps.replays == replays      # not a held replay
    del held_data, alias
    fn(x, y)                                            # nothing else holds it now: held again
    if backend != "cpu":
        assert fn.last.run_steps.replays == replays + 1


def test_an_update_the_outputs_backward_reads_gives_eager_gradients(backend):
    # the updated parameter is saved for the output's backward: a held plan hands it out (not in place)
    def run(compiled):
        w = wg.ones(3, device=backend, requires_grad=True)

        def step(x):
            with wg.no_grad():
                w.mul_(0.5)
            return (x * w).sum()
        fn = wg.compile(step) if compiled else step
        got = []
        for k in range(5):
            x = wg.full((3,), float(k), device=backend, requires_grad=True)
            out = fn(x)
            out.backward()
            got.append((out.item(), x.grad.tolist(), w.tolist()))
        return got
    assert run(True) == run(False)


def _grads(model):
    return [v for p in model.parameters() for v in p.grad.flatten().tolist()]


def test_a_new_grad_takes_the_buffer_of_the_grad_it_replaces_when_nothing_else_holds_it(backend):
    # eagerly zero_grad() drops the old .grad tensors, backward makes new ones and the old buffers go back to the
    # pool; a held replay writes each new .grad into the buffer of the one it replaces, where nothing but that
    # tensor held it: eager's values, new tensors, the same buffers
    _, eager_losses, eager_params, (eager_model, _, _, _) = _train(backend, False, _sgd)
    fn, losses, params, (model, opt, x, y) = _train(backend, True, _sgd)
    assert losses == pytest.approx(eager_losses, rel=1e-5, abs=1e-6)
    assert params == pytest.approx(eager_params, rel=1e-5, abs=1e-6)
    assert _grads(model) == pytest.approx(_grads(eager_model), rel=1e-5, abs=1e-6)
    if backend == "cpu":
        return
    held = fn.last.run_steps
    assert len(held.renew) == len(list(model.parameters())), held.state
    old = [id(p.grad) for p in model.parameters()]
    buffers = [id(p.grad._data.storage) for p in model.parameters()]   # (kept alive by the new .grad tensors)
    replays = held.replays
    fn(x, y)
    assert [id(p.grad._data.storage) for p in model.parameters()] == buffers and held.replays == replays + 1
    assert all(id(p.grad) != i for p, i in zip(model.parameters(), old))


def test_a_grad_or_an_output_a_user_holds_keeps_its_value(backend):
    # an old .grad held (itself, or through a view of it) or an old loss: the replay leases new buffers for the new
    # .grad tensors (the plan still held by the device), and what the user holds keeps its value
    eager_fn, _, _, (eager_model, _, ex, ey) = _train(backend, False, _sgd)
    fn, _, _, (model, _, x, y) = _train(backend, True, _sgd)
    holds = {"grad": lambda m, f, a, b: m[0].weight.grad, "view": lambda m, f, a, b: m[2].bias.grad.view(2, 2),
             "loss": lambda m, f, a, b: f(a, b)}
    for what, hold in holds.items():
        kept, eager_kept = hold(model, fn, x, y), hold(eager_model, eager_fn, ex, ey)
        values = kept.flatten().tolist()
        assert values == pytest.approx(eager_kept.flatten().tolist(), rel=1e-5, abs=1e-6)
        replays = getattr(fn.last.run_steps, "replays", 0)
        loss, eager_loss = fn(x, y).item(), eager_fn(ex, ey).item()
        assert kept.flatten().tolist() == values and loss == pytest.approx(eager_loss, rel=1e-5, abs=1e-6), what
        assert _grads(model) == pytest.approx(_grads(eager_model), rel=1e-5, abs=1e-6)
        assert what != "grad" or model[0].weight.grad is not kept and model[0].weight.grad.flatten().tolist() != values
        if backend != "cpu":
            assert fn.last.run_steps.replays == replays + 1, what   # still the held plan
        del kept, eager_kept


def _view_run(backend, compiled, hold=None, steps=6):
    """The losses and values (parameters, their roots, what ``hold(roots)`` gives) of ``steps`` steps of a step
    whose parameters are views of other tensors (``reshape``); the compiled function, the roots and a replay."""
    from test_compile_quick import _view_step
    roots, params, step, x, y = _view_step(backend)
    fn = wg.compile(step) if compiled else step
    held = hold(roots) if hold else None
    losses = [fn(x, y).item() for _ in range(steps)]
    kept = (held,) if held is not None else ()
    return losses, [v for t in params + tuple(roots) + kept for v in t.flatten().tolist()], fn, roots, lambda: fn(x, y)


def test_a_parameter_that_is_a_view_is_updated_in_its_roots_buffer(backend):
    # w = root.reshape(4, 3): the held plan writes w's update into w's buffer, which its root's data shares, and
    # the root's new data is that buffer at the root's shape, as eagerly the root and its view share one storage
    eager_losses, eager_values, *_ = _view_run(backend, False)
    losses, values, fn, roots, again = _view_run(backend, True)
    assert losses == pytest.approx(eager_losses, rel=1e-5, abs=1e-6)
    assert values == pytest.approx(eager_values, rel=1e-5, abs=1e-6)
    if backend == "cpu":
        return
    held = fn.last.run_steps
    assert len(held.into) == 2 and len(held.roots) == 2, held.state
    storages, replays = [id(r._data.storage) for r in roots], held.replays
    again()
    assert [id(r._data.storage) for r in roots] == storages and held.replays == replays + 1


def test_another_view_of_a_parameters_root_makes_the_replay_give_new_data_as_eagerly(backend):
    # a tensor sharing the root's storage that the plan does not write (a user's other view of the root): the
    # call replays from Python, which gives the parameter and its root new data, as eager does; all agree
    def hold(roots):
        return roots[0].reshape(2, 6)
    eager_losses, eager_values, *_ = _view_run(backend, False, hold)
    losses, values, fn, _, _ = _view_run(backend, True, hold)
    assert losses == pytest.approx(eager_losses, rel=1e-5, abs=1e-6)
    assert values == pytest.approx(eager_values, rel=1e-5, abs=1e-6)
    if backend != "cpu":
        assert fn.last.run_steps.replays == 0, fn.explain()   # (built, then each call from Python)


def test_gradients_accumulated_across_steps_are_eagers(backend):
    # without zero_grad the step reads the old .grad (new = old + this step's): its buffer is not the new one's
    def run(compiled):
        wg.manual_seed(0)
        model = nn.Linear(4, 3).to(backend)

        def step(x):
            loss = model(x).square().sum()
            loss.backward()
            return loss
        fn = wg.compile(step) if compiled else step
        g = wg.Generator().manual_seed(2)
        x = wg.randn(5, 4, generator=g).to(backend)
        losses = [fn(x).item() for _ in range(5)]
        return fn, losses, [v for p in model.parameters() for v in p.grad.flatten().tolist()]
    _, eager_losses, eager_grads = run(False)
    fn, losses, grads = run(True)
    assert losses == pytest.approx(eager_losses, rel=1e-5, abs=1e-6)
    assert grads == pytest.approx(eager_grads, rel=1e-5, abs=1e-6)
    assert fn.replays >= 2, fn.explain()
