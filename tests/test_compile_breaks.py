"""``wg.compile`` splits a function at its graph breaks into compiled pieces: a replay reads the value
back at each break and goes on with the piece traced for that value, or traces the new path (a
branch going the other way, a mask selecting another count); results, parameters and optimizer
state are eager's (bit for bit on cpu), the paths count toward the recompile limit, and explain()
lists the pieces and the breaks."""
import warnings

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F
from webgrad.compiler import RECOMPILE_LIMIT

from test_compile import _flat, _same


def test_a_data_dependent_branch_replays_the_piece_of_the_branch_taken(backend):
    def f(x):
        y = x.exp()
        if (y.sum() > 4).item():                 # data-dependent Python: a graph break
            return y * 2
        return y - 1

    g = wg.compile(f)
    for v in (1.0, -1.0, 2.0, -2.0, 0.5, -0.5):
        x = wg.full((3,), v, backend=backend)
        _same(g(x).tolist(), f(x).tolist(), backend)
    assert (g.traces, g.replays) == (2, 4)       # one path per branch, each replayed twice
    text = g.explain()
    assert text.count("2 piece(s)") == 2 and "graph break" in text and "test_compile_breaks.py" in text
    assert "read True" in text and "read False" in text


def test_a_readback_of_a_number_keys_its_paths_on_the_value_read(backend):
    w = wg.tensor([1.0, 2.0, 3.0], backend=backend)

    def f(x):
        loss = (w * x).sum()
        if loss.item() > 10:
            loss = loss * 0.5
        return loss + 1

    g = wg.compile(f)
    for v in (0.0, 3.0, 0.0, 3.0, 1.0):
        x = wg.full((3,), v, backend=backend)
        assert g(x).item() == f(x).item()
    assert (g.traces, g.replays) == (3, 2)       # values 0, 18 and 6 were read


def test_a_data_dependent_shape_keys_its_paths_on_the_shape(backend):
    def f(x):
        return x[x > 0] * 2

    g = wg.compile(f)
    for v in ([1.0, -1.0, 2.0], [3.0, -1.0, 2.0], [1.0, 1.0, 1.0], [-1.0, -1.0, -1.0], [5.0, 6.0, 7.0]):
        x = wg.tensor(v, backend=backend)
        assert g(x).tolist() == f(x).tolist()
    assert (g.traces, g.replays) == (3, 2)
    assert "NonZero" in g.explain() and "read shape" in g.explain()


def _train(backend, compiled, steps=8):
    wg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).to(backend)
    opt = wg.optim.Adam(model.parameters(), lr=0.05)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if loss > 0.5:                           # after the update (and Adam's per-step numbers)
            return loss.detach() * 10
        return loss

    fn = wg.compile(step) if compiled else step
    out = []
    for i in range(steps):
        g = wg.Generator().manual_seed(i)
        x = wg.randn(6, 4, generator=g).to(backend)
        y = (wg.randn(6, 1, generator=g) * (3 if i % 2 else 0.1)).to(backend)
        out.append(fn(x, y).item())
    state = [[v.tolist() if isinstance(v, wg.Tensor) else v for _, v in sorted(opt.state[p].items())]
             for p in model.parameters()]
    return fn, dict(out=out, params=[p.tolist() for p in model.parameters()], state=state)


def test_a_training_step_with_a_branch_after_the_update_gives_eagers_state(backend):
    _, eager = _train(backend, compiled=False)
    fn, compiled = _train(backend, compiled=True)
    for key in eager:
        _same(_flat(compiled[key]), _flat(eager[key]), backend)
    assert fn.replays >= 4 and fn.traces <= 4    # a missed path's step count was undone (state equal)
    assert sorted(set(c > 1 for c in compiled["out"])) == [False, True]


def test_past_the_recompile_limit_new_paths_run_eagerly(backend):
    def f(x):
        return x * x.sum().item()

    g = wg.compile(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(RECOMPILE_LIMIT + 3):
            x = wg.full((2,), float(n), backend=backend)
            assert g(x).tolist() == f(x).tolist()
    assert g.traces == RECOMPILE_LIMIT and g.replays == 0
    assert sum("recompile_limit" in str(w.message) for w in caught) == 1
