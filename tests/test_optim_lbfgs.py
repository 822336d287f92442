"""LBFGS against PyTorch's on the Rosenbrock function (a curved valley: the history and the line
search both matter), with and without strong_wolfe: the iterates, the losses ``step`` returns
and the state's counters. float64 on cpu to 1e-10; float32 on every backend over a few
iterations (further on, float32 rounding decides PyTorch's own stopping tests)."""
import numpy as np
import pytest

import webgrad as wg

torch = pytest.importorskip("torch")

X0 = np.array([-1.5, 2.0, 0.5, -0.3])


def rosenbrock(x):
    a, b = x[:-1], x[1:]
    return (100 * (b - a * a) ** 2 + (1 - a) ** 2).sum()


def run(lib, dtype, steps, two_params=False, **options):
    """[(x, loss returned, func_evals, n_iter)] after each ``step``."""
    x0 = X0.astype(dtype)
    params = ([lib.tensor(x0[:2], requires_grad=True), lib.tensor(x0[2:], requires_grad=True)] if two_params
              else [lib.tensor(x0, requires_grad=True)])
    opt = lib.optim.LBFGS(params, **options)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(params[0] if len(params) == 1 else lib.cat(params))
        loss.backward()
        return loss
    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[params[0]]
        out.append((np.concatenate([p.detach().numpy().astype(np.float64) for p in params]), float(loss.detach()),
                    state["func_evals"], state["n_iter"]))
    return out


CASES = {
    "fixed_step": dict(lr=1, max_iter=20),
    "strong_wolfe": dict(line_search_fn="strong_wolfe"),
    "short_history": dict(lr=0.5, max_iter=7, history_size=3),
    "strong_wolfe_short_history": dict(line_search_fn="strong_wolfe", history_size=2, max_iter=30),
    "max_eval": dict(line_search_fn="strong_wolfe", max_iter=10, max_eval=6),
    "tolerances": dict(tolerance_grad=1e-3, tolerance_change=1e-4, max_iter=50),
}


@pytest.mark.float64
@pytest.mark.parametrize("name", CASES)
def test_float64_iterates_match_torch(name):
    theirs, ours = run(torch, np.float64, 4, **CASES[name]), run(wg, np.float64, 4, **CASES[name])
    for (tx, tl, te, tn), (wx, wl, we, wn) in zip(theirs, ours):
        np.testing.assert_allclose(wx, tx, rtol=1e-10, atol=1e-12)
        assert wl == pytest.approx(tl, rel=1e-10) and (we, wn) == (te, tn)


@pytest.mark.float64
def test_several_parameters_are_one_flat_vector():
    theirs = run(torch, np.float64, 2, two_params=True, line_search_fn="strong_wolfe")
    ours = run(wg, np.float64, 2, two_params=True, line_search_fn="strong_wolfe")
    for (tx, tl, te, tn), (wx, wl, we, wn) in zip(theirs, ours):
        np.testing.assert_allclose(wx, tx, rtol=1e-10, atol=1e-12)
        assert (we, wn) == (te, tn)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_float32_first_iterations_match_torch_on_every_backend(line_search_fn, backend):
    options = dict(max_iter=4, line_search_fn=line_search_fn)
    theirs, ours = run(torch, np.float32, 1, **options), run(wg, np.float32, 1, **options)
    (tx, tl, te, tn), (wx, wl, we, wn) = theirs[0], ours[0]
    np.testing.assert_allclose(wx, tx, rtol=1e-4, atol=1e-5)
    assert wl == pytest.approx(tl, rel=1e-6) and (we, wn) == (te, tn)


def test_converges_on_a_quadratic_and_keeps_pytorchs_state(backend):
    target = wg.tensor([1.0, 2.0, -3.0])
    x = wg.nn.Parameter(wg.zeros(3))
    opt = wg.optim.LBFGS([x], history_size=5, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((x - target) ** 2 * wg.tensor([1.0, 10.0, 100.0])).sum()
        loss.backward()
        return loss
    opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 2.0, -3.0], atol=1e-4)
    state = opt.state[x]
    assert {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad",
            "prev_loss", "al"} <= state.keys()
    assert len(state["old_dirs"]) <= 5 and len(state["al"]) == 5


def test_state_dict_round_trip_resumes_identically():
    def make():
        x = wg.nn.Parameter(wg.tensor(X0))
        opt = wg.optim.LBFGS([x], max_iter=3, history_size=4)
        return x, opt

    def closure_for(x, opt):
        def closure():
            opt.zero_grad()
            loss = rosenbrock(x)
            loss.backward()
            return loss
        return closure
    x1, o1 = make()
    for _ in range(2):
        o1.step(closure_for(x1, o1))
    x2, o2 = make()
    with wg.no_grad():
        x2.copy_(x1)
    o2.load_state_dict(o1.state_dict())
    for _ in range(3):
        o1.step(closure_for(x1, o1))
        o2.step(closure_for(x2, o2))
    np.testing.assert_array_equal(x2.detach().numpy(), x1.detach().numpy())


def test_lbfgs_errors_match_torch():
    for lib in (torch, wg):
        p = lib.zeros(2, requires_grad=True)
        with pytest.raises(ValueError, match="parameter groups|per-parameter"):
            lib.optim.LBFGS([{"params": [p]}, {"params": [lib.zeros(1, requires_grad=True)]}])
        with pytest.raises(ValueError, match="learning rate"):
            lib.optim.LBFGS([p], lr=-1)
        opt = lib.optim.LBFGS([p], line_search_fn="armijo")
        p.grad = lib.ones(2)
        with pytest.raises(RuntimeError, match="strong_wolfe"):
            opt.step(lambda: (p * p).sum())
        with pytest.raises(TypeError):
            opt.step()
