"""``webgrad.compile``: a compiled training step gives eager's results (bit for bit on cpu, within
float32 rounding on the GPU) for the loss, the parameters, ``.grad``, the optimizer state and the
random streams, over several steps; guards trace again on a change; graph breaks split the plan
into pieces (or raise with ``fullgraph=True``, leaving nothing changed: see also
test_compile_breaks.py); modules compile as PyTorch's."""
import warnings

import pytest

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F
from webgrad.compiler import RECOMPILE_LIMIT, GraphBreak

STEPS = 6


def _same(a, b, backend):
    if backend == "cpu":
        assert a == b
    else:
        assert a == pytest.approx(b, rel=1e-5, abs=1e-6)


def _flat(v):
    if isinstance(v, list):
        return [x for e in v for x in _flat(e)]
    return [v]


def _model(backend, seed=0):
    wg.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 4)).to(backend)


_OPTIMIZERS = {
    "sgd": lambda p: wg.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "sgd-plain": lambda p: wg.optim.SGD(p, lr=0.05),
    "adam": lambda p: wg.optim.Adam(p, lr=0.01, weight_decay=0.001),
    "adamw": lambda p: wg.optim.AdamW(p, lr=0.01, amsgrad=True),
    "adamax": lambda p: wg.optim.Adamax(p, lr=0.01, weight_decay=0.01),
    "adagrad": lambda p: wg.optim.Adagrad(p, lr=0.05, lr_decay=0.01),
    "rmsprop": lambda p: wg.optim.RMSprop(p, lr=0.01, momentum=0.9, centered=True),
}


def _train(backend, make_opt, compiled, set_to_none=True):
    """Losses, parameters, grads, optimizer state and the next random draw after STEPS steps."""
    model = _model(backend)
    opt = make_opt(model.parameters())
    sched = wg.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)

    def step(x, y):
        opt.zero_grad(set_to_none=set_to_none)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = wg.compile(step) if compiled else step
    wg.manual_seed(7)
    losses = []
    for i in range(STEPS):
        x = wg.randn(5, 8, generator=wg.Generator().manual_seed(i)).to(backend)
        y = wg.tensor([0, 1, 2, 3, 1]).to(backend)
        losses.append(fn(x, y).tolist())
        sched.step()
    state = [{k: (v.tolist() if isinstance(v, wg.Tensor) else v) for k, v in sorted(opt.state[p].items())}
             for p in model.parameters()]
    return fn, dict(losses=losses, params=[p.tolist() for p in model.parameters()],
                    grads=[p.grad.tolist() for p in model.parameters()], state=state, rng=wg.rand(3).tolist())


@pytest.mark.parametrize("opt", sorted(_OPTIMIZERS))
def test_a_compiled_training_step_gives_eagers_results(backend, opt):
    _, eager = _train(backend, _OPTIMIZERS[opt], compiled=False)
    fn, compiled = _train(backend, _OPTIMIZERS[opt], compiled=True)
    assert fn.replays == STEPS - 2 and fn.traces == 2      # the first step makes the optimizer's state
    for key in eager:
        if key == "state":
            for a, b in zip(eager[key], compiled[key]):
                assert a.keys() == b.keys()
                for k in a:
                    _same(_flat(a[k]), _flat(b[k]), backend)
        else:
            _same(_flat(eager[key]), _flat(compiled[key]), backend)


def test_zero_grad_to_zeros_is_replayed(backend):
    _, eager = _train(backend, _OPTIMIZERS["sgd"], compiled=False, set_to_none=False)
    fn, compiled = _train(backend, _OPTIMIZERS["sgd"], compiled=True, set_to_none=False)
    assert fn.replays > 0
    for key in eager:
        _same(_flat(eager[key]) if key != "state" else [], _flat(compiled[key]) if key != "state" else [], backend)


def test_a_replay_reads_arguments_and_globals_afresh(backend):
    scale = wg.tensor([1.0, 2.0, 3.0])
    f = wg.compile(lambda x: (x * scale).exp() + 1)
    for i in range(3):
        x = wg.tensor([0.5, -1.0, float(i)])
        _same(f(x).tolist(), ((x * scale).exp() + 1).tolist(), backend)
    scale.mul_(2)                                      # an in-place change outside: the next replay sees it
    x = wg.tensor([0.1, 0.2, 0.3])
    _same(f(x).tolist(), ((x * scale).exp() + 1).tolist(), backend)
    assert f.traces == 1 and f.replays == 3


def test_in_place_changes_of_arguments_are_written_back(backend):
    @wg.compile
    def bump(x):
        x.add_(1)
        return x

    x = wg.zeros(2)
    for _ in range(3):
        assert bump(x) is x
    assert x.tolist() == [3.0, 3.0] and x._version == 3


def test_guards_trace_again_on_a_new_shape_dtype_argument_or_mode(backend):
    f = wg.compile(lambda x, k: x * k)
    f(wg.ones(2), 2)
    f(wg.ones(2), 2)
    assert (f.traces, f.replays) == (1, 1)
    assert f(wg.ones(3), 2).tolist() == [2.0] * 3                 # shape
    assert f(wg.ones(2), 3).tolist() == [3.0] * 2                 # a plain Python argument
    assert f(wg.ones(2, dtype=wg.int32), 3).tolist() == [3, 3]    # dtype
    assert f.traces == 4
    f(wg.ones(3), 2)                                              # a plan kept from before
    assert (f.traces, f.replays) == (4, 2)
    model = _model(backend)
    g = wg.compile(model)
    with wg.no_grad():
        x = wg.ones(2, 8)
        model.eval()
        a = g(x).tolist()
        model.train()
        g(x)
        model.eval()
        assert g(x).tolist() == a and g(x).tolist() == model(x).tolist()


def test_past_the_recompile_limit_new_guards_run_eagerly(backend):
    f = wg.compile(lambda x: x + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, RECOMPILE_LIMIT + 3):
            assert f(wg.zeros(n)).tolist() == [1.0] * n
    assert f.traces == RECOMPILE_LIMIT
    assert sum("recompile_limit" in str(w.message) for w in caught) == 1


def test_a_readback_breaks_the_graph_into_pieces_keyed_on_its_value(backend):
    w = wg.ones(3, requires_grad=True)

    def step(x):
        loss = (w * x).sum()
        if loss.item() > 100:                          # data-dependent Python: a graph break
            loss = loss * 0
        return loss

    f = wg.compile(step)
    for i in range(3):
        x = wg.full((3,), float(i * 30))
        assert f(x).item() == step(x).item()
    text = f.explain()
    assert "graph break" in text and "test_compile.py" in text and "readback" in text
    assert f.replays == 0 and f.traces == 3          # three values read: three paths


def test_fullgraph_raises_at_the_break_and_changes_nothing(backend):
    model = _model(backend)
    opt = wg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    before = [p.tolist() for p in model.parameters()]

    @wg.compile(fullgraph=True)
    def step(x):
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        opt.step()
        print(float(loss))                             # a readback after the update
        return loss

    with pytest.raises(GraphBreak, match=r"readback.*test_compile\.py"):
        step(wg.ones(2, 8))
    assert [p.tolist() for p in model.parameters()] == before
    assert all(p.grad is None for p in model.parameters()) and not opt.state


def test_python_state_a_replay_would_miss_makes_the_step_run_eagerly(backend):
    results = []
    for compiled in (False, True):
        model = _model(backend)
        opt = wg.optim.NAdam(model.parameters(), lr=0.01)        # keeps Python numbers no per_step recomputes
        sched = wg.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

        def step(x):
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
            sched.step()                                          # Python state inside the step
        fn = wg.compile(step) if compiled else step
        for _ in range(4):
            fn(wg.ones(3, 8))
        results.append([p.tolist() for p in model.parameters()])
    assert results[0] == results[1]
    assert fn.replays == 0 and "NAdam" in fn.explain() and "scheduler" in fn.explain()


def test_a_module_compiles_as_pytorchs(backend):
    model = _model(backend)
    fast = wg.compile(model)
    assert isinstance(fast, nn.Module) and fast._orig_mod is model
    assert all(k.startswith("_orig_mod.") for k in fast.state_dict())
    assert wg.compile(nn.Linear(3, 1)).in_features == 3      # attributes are the original's
    model.eval()
    x = wg.randn(4, 8)
    with wg.no_grad():
        for _ in range(3):
            assert fast(x).tolist() == model(x).tolist()
    model.compile()
    assert list(model.state_dict()) == ["0.weight", "0.bias", "3.weight", "3.bias"]
    with wg.no_grad():
        assert model(x).tolist() == model._call_impl(x).tolist()


def test_a_compiled_forward_with_its_backward_outside_replays_both(backend):
    model = _model(backend)
    model.eval()
    fast = wg.compile(model)
    x = wg.randn(4, 8)
    for _ in range(4):
        fast(x).sum().backward()                     # the graph leaves the compiled function
    grads = [p.grad.tolist() for p in model.parameters()]
    model.zero_grad()
    for _ in range(4):
        model(x).sum().backward()
    _same(_flat(grads), _flat([p.grad.tolist() for p in model.parameters()]), backend)
    assert fast._compiled.replays == 2               # (the second call traces again: .grad is set)


def test_explain_lists_kernels_per_step_numbers_and_write_backs(backend):
    model = _model(backend)
    opt = wg.optim.Adam(model.parameters())

    @wg.compile
    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    for _ in range(3):
        step(wg.ones(2, 8))
    text = step.explain()
    assert "MatMul" in text and "per-step" in text and "write-backs" in text and "1 replay" in text


def test_compile_checks_its_arguments():
    with pytest.raises(RuntimeError, match="mode"):
        wg.compile(len, mode="fastest")
    with pytest.raises(RuntimeError, match="both"):
        wg.compile(len, mode="default", options={})
    with pytest.raises(RuntimeError, match="backend"):
        wg.compile(len, backend="tvm-ish")
    with pytest.raises(RuntimeError, match="int"):
        wg.compile(3)
    with pytest.raises(TypeError, match="speed"):
        wg.compile(len, speed=2)


def test_a_compiled_function_inside_another_is_part_of_its_plan(backend):
    inner = wg.compile(lambda x: x.exp() * 2)
    inner(wg.ones(2))
    inner(wg.ones(2))                                  # inner has a plan of its own
    outer = wg.compile(lambda x: inner(x + 1).sum())
    for i in range(3):
        x = wg.full((2,), float(i))
        _same(outer(x).item(), ((x + 1).exp() * 2).sum().item(), backend)
    assert outer.replays == 2


SCALE = 2.0


def test_plain_python_values_the_function_names_are_guarded(backend):
    global SCALE
    f = wg.compile(lambda x: x * SCALE)
    x = wg.ones(2)
    assert f(x).tolist() == [2.0, 2.0] and f(x).tolist() == [2.0, 2.0]
    SCALE = 3.0
    try:
        assert f(x).tolist() == [3.0, 3.0] and f.traces == 2
    finally:
        SCALE = 2.0


def test_explain_names_tensors_made_from_python_data(backend):
    f = wg.compile(lambda x: x + wg.tensor([1.0, 2.0]))
    f(wg.ones(2))
    assert "made from Python data" in f.explain()


def test_autocast_and_the_default_dtype_are_guarded():
    f = wg.compile(lambda x, y: x @ y)
    x, y = wg.ones(2, 2), wg.ones(2, 2)
    assert f(x, y).dtype is wg.float32
    with wg.autocast("cpu", dtype=wg.bfloat16):
        assert f(x, y).dtype is wg.bfloat16
    assert f(x, y).dtype is wg.float32 and f.traces == 2


def test_replays_leak_nothing(backend):
    import gc
    model = _model(backend)
    opt = wg.optim.Adam(model.parameters())

    @wg.compile
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    x, y = wg.randn(5, 8), wg.tensor([0, 1, 2, 3, 1])
    for _ in range(5):
        step(x, y)
    gc.collect()
    before = wg.memory()[backend]
    for _ in range(20):
        step(x, y)
    gc.collect()
    after = wg.memory()[backend]
    assert after["tensors"] == before["tensors"] and after.get("in_use") == before.get("in_use")
