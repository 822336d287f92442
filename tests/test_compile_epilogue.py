"""MatMul in compiled plans on the GPU backends: an elementwise chain after it (a bias add, an activation, a
residual) runs as its epilogue, one dispatch; a matrix Transpose feeding it is read through its flags, no
copy. Values are eager's within float32 rounding on every backend (cpu plans keep their own kernels, and
are checked for the same values); what cannot be read in an epilogue (a batch broadcast only in part, a
K beyond one dispatch) stays a separate step, still with eager's values."""
import numpy as np
import pytest

import webgrad as wg
from webgrad.backends.gpu import linalg


def _close(got, want):
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def _names(f):
    return [s.name for s in f.last.plan.steps]


def _compiled_values(fn, *args, replays=2):
    """``fn`` compiled, run once to trace and ``replays`` times more; checked against eager each time."""
    f = wg.compile(fn)
    for _ in range(1 + replays):
        _close(f(*args), fn(*args))
    return f


def _randn(*shape, seed=0):
    return wg.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


EPILOGUES = [   # (function, operand shapes, the fused step's name on a GPU backend)
    (lambda x, w, b: (x @ w.t() + b).relu(), [(7, 5), (9, 5), (9,)], "Fused[MatMul+Add+Relu]"),
    (lambda x, w, r: (x @ w + r) * 0.5, [(6, 8), (8, 12), (6, 12)], "Fused[MatMul+Add+Mul]"),   # a residual
    (lambda x, w, c: (x @ w - c).tanh(), [(6, 8), (8, 3), (6, 1)], "Fused[MatMul+Sub+Tanh]"),   # a column
    (lambda x, w, b: (x @ w + b).sigmoid(), [(2, 5, 4), (4, 8), (8,)], "Fused[MatMul+Add+Sigmoid]"),   # [B, T, C]
    (lambda x, w, b: x @ w + b, [(3, 2, 4), (3, 4, 5), (3, 1, 5)], "Fused[MatMul+Add]"),   # per-batch bias
    (lambda x, w: (x @ w).tanh(), [(5, 4), (4, 6)], "Fused[MatMul+Tanh]"),        # no input of its own
    (lambda x, w, b: (x @ w.t() + b).relu(), [(64, 32), (128, 32), (128,)], "Fused[MatMul+Add+Relu]"),  # whole tiles
    (lambda x, w: (x @ w).relu(), [(2, 0), (0, 3)], "Fused[MatMul+Relu]"),        # K = 0
]


@pytest.mark.parametrize("program", ["tiled", "blocked"])
@pytest.mark.parametrize("fn,shapes,name", EPILOGUES)
def test_a_chain_after_a_matmul_is_its_epilogue(backend, monkeypatch, program, fn, shapes, name):
    monkeypatch.setattr(linalg, "PROGRAM_BY_ADAPTER", {False: program, True: program})
    f = _compiled_values(fn, *[_randn(*s, seed=i) for i, s in enumerate(shapes)])
    if backend != "cpu":
        assert _names(f) == [name]


def test_what_an_epilogue_cannot_read_stays_a_step(backend):
    # [2, 3] batches against a bias over [3] batches alone: a batch broadcast in part
    f = _compiled_values(lambda x, w, b: (x @ w + b).exp(), _randn(2, 3, 4, 5), _randn(5, 2, seed=1),
                         _randn(3, 1, 2, seed=2))
    assert f.last.plan.steps[0].name == "MatMul"


def test_a_long_k_is_not_fused(backend):
    f = _compiled_values(lambda x, w: (x @ w).relu(), _randn(2, linalg.K_CHUNK + 3), _randn(linalg.K_CHUNK + 3, 4))
    assert f.last.plan.steps[0].name == "MatMul"


def test_a_product_others_read_is_not_fused_away(backend):
    f = wg.compile(lambda x, w: (lambda y: (y, y.relu()))(x @ w))
    x, w = _randn(4, 6), _randn(6, 8, seed=1)
    for _ in range(3):
        y, r = f(x, w)
    _close(y, x @ w)
    _close(r, (x @ w).relu())
    assert "MatMul" in _names(f)


@pytest.mark.parametrize("fn", [lambda a, b: a.t() @ b, lambda a, b: a @ b.transpose(0, 1),
                                lambda a, b: a.transpose(0, 1) @ b.t()], ids=["a.t()", "b.T", "both"])
def test_a_matrix_transpose_is_read_through_the_flags(backend, fn):
    a, b = _randn(5, 5), _randn(5, 5, seed=1)
    f = _compiled_values(fn, a, b)
    if backend != "cpu":
        assert _names(f) == ["MatMul"]


def test_a_transpose_something_else_reads_stays(backend):
    f = wg.compile(lambda a, b: (a.t() @ b, a.t() * 2))
    a, b = _randn(3, 4), _randn(3, 2, seed=1)
    for _ in range(3):
        p, q = f(a, b)
    _close(p, a.t() @ b)
    _close(q, a.t() * 2)


def test_a_batched_transpose_folds_and_others_do_not(backend):
    x = _randn(2, 3, 4)
    f = _compiled_values(lambda x: x.transpose(1, 2) @ x, x)       # the last two dims: folds
    g = _compiled_values(lambda x: x.permute(2, 1, 0).reshape(4, 6) @ x.reshape(6, 4), x)  # not a matrix transpose
    if backend != "cpu":
        assert _names(f) == ["MatMul"] and "Transpose" in _names(g)


def test_a_compiled_layer_trains_as_eager(backend):
    """Forward and backward of Linear + ReLU + Linear in one compiled step: the same losses and weights."""
    def model():
        wg.manual_seed(3)
        return wg.nn.Sequential(wg.nn.Linear(12, 16), wg.nn.ReLU(), wg.nn.Linear(16, 5))
    x, y = _randn(8, 12), wg.tensor(np.arange(8) % 5)
    runs = []
    for compiled in (False, True):
        m = model()
        opt = wg.optim.SGD(m.parameters(), lr=0.1)

        def step():
            opt.zero_grad()
            loss = wg.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss
        fn = wg.compile(step) if compiled else step
        runs.append(([fn().item() for _ in range(4)], [p.detach().numpy() for p in m.parameters()]))
        if compiled and backend != "cpu":
            assert any(name.startswith("Fused[MatMul+Add") for name in _names(fn))
    (eager_losses, eager_weights), (losses, weights) = runs
    assert losses == pytest.approx(eager_losses, rel=1e-5)
    for a, b in zip(weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_epilogue_pipelines_are_cached_by_the_chains_structure(gpu):
    """(Sizes of the same class: a dimension of at most 4 or 8 takes a smaller register block, another pipeline.)"""
    wg.set_backend("wgpu")
    try:
        fn = lambda x, w, b: (x @ w + b).relu()      # noqa: E731
        f, g = wg.compile(fn), wg.compile(lambda x, w, b: fn(x, w, b))
        for _ in range(2):
            f(_randn(6, 8), _randn(8, 12), _randn(12))
        count = len(gpu.pipelines)
        for _ in range(2):
            g(_randn(7, 8), _randn(8, 16), _randn(16))      # another function and shapes, the same structure
        assert len(gpu.pipelines) == count
    finally:
        wg.set_backend("cpu")
