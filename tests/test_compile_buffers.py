"""Where a compiled plan's kernels write (core/compiler/buffers.py, backends/cpu/into.py): on cpu a
replay writes into inputs that die at a kernel and into arrays the plan keeps across replays, and
the results stay eager's bit for bit; nothing it hands out (outputs, parameters, ``.grad``) shares
memory with what it keeps or writes over; a value that may share a dying array's memory (a view of
it) keeps that array from being written over. Other backends' plans write nothing in place."""
import numpy as np
import pytest

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F
from webgrad.backends.cpu import into
from webgrad.backends.cpu.elementwise import BINARY
from webgrad.compiler.buffers import Kept

STEPS = 8


def _mlp_run(backend, compiled):
    """Losses, parameters, grads (and the compiled step) after STEPS SGD steps of a small MLP (ReLU,
    cross-entropy): the bench's MLP step in small."""
    wg.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5)).to(backend)
    opt = wg.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    x = wg.tensor(rng.standard_normal((16, 12), dtype=np.float32))
    y = wg.tensor(rng.integers(0, 5, 16))

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    fn = wg.compile(step) if compiled else step
    losses = [fn().item() for _ in range(STEPS)]
    return losses, [p.tolist() for p in model.parameters()], [p.grad.tolist() for p in model.parameters()], fn


def test_mlp_replays_equal_eager(backend):
    losses, params, grads, fn = _mlp_run(backend, True)
    want = _mlp_run(backend, False)
    if backend == "cpu":
        assert (losses, params, grads) == want[:3]       # bit for bit, after many replays over kept arrays
        assert fn.replays >= STEPS - 3
    else:
        assert losses == pytest.approx(want[0], rel=1e-4, abs=1e-5)
    text = fn.explain()
    if backend == "cpu":
        assert "-> into s" in text and "-> into kept array #" in text and "if nothing else holds it" in text
        assert "it keeps" in text and "array(s) across replays" in text
    else:
        assert "-> into" not in text and "written in place" not in text


def _kept_arrays(fn):
    return [a for entry in fn.plans.values() if getattr(entry, "kept", None) is not None
            for a in (entry.kept.arrays or [])]


def test_nothing_handed_out_shares_a_kept_array(backend):
    w = wg.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), requires_grad=True)
    b = wg.tensor(np.float32([0.5, -0.5, 0.25]))

    @wg.compile
    def f(x):
        h = (x @ w + b).relu()          # MatMul into a kept array, Add and Relu into it
        loss = (h * h).sum()
        loss.backward()
        return loss, h * 2              # an output made from the kept array: a new array
    outs, seen = [], []
    for k in range(5):
        w.grad = None
        x = wg.tensor(np.full((2, 4), k - 2, np.float32))
        loss, h2 = f(x)
        outs.append((loss, h2, w.grad))
        seen.append([t.tolist() for t in outs[-1]])
        with wg.no_grad():
            want = ((x @ w + b).relu() * 2).tolist()
        assert h2.tolist() == want
    kept = _kept_arrays(f)
    held = [t._data for trio in outs for t in trio]
    if backend == "cpu":
        assert kept, f.explain()
    for a in kept:
        assert not any(np.shares_memory(a, h) for h in held if isinstance(h, np.ndarray))
    assert [[t.tolist() for t in trio] for trio in outs] == seen   # later replays wrote over none of them
    assert seen[0][1] != seen[-1][1]


def test_a_view_of_a_dying_array_keeps_it(backend):
    w = wg.tensor(np.float32([[1, -2], [-3, 4]]))

    @wg.compile
    def f(x):
        h = x @ w
        v = h.reshape(-1)               # may share h's memory: h may not be written over by relu
        return h.relu(), v
    x = wg.tensor(np.float32([[1, 1], [2, -1]]))
    for _ in range(3):
        r, v = f(x)
        assert v.tolist() == (x @ w).reshape(-1).tolist()
        assert r.tolist() == (x @ w).relu().tolist()


def test_an_intermediate_returned_is_not_written_over(backend):
    w = wg.tensor(np.float32([[1, -2], [-3, 4]]))

    @wg.compile
    def f(x):
        h = x @ w
        return h, (h + 1).relu()
    x = wg.tensor(np.float32([[1, 1], [2, -1]]))
    got = [f(x) for _ in range(3)]
    for h, r in got:
        assert h.tolist() == (x @ w).tolist() and r.tolist() == ((x @ w) + 1).relu().tolist()
    assert not np.shares_memory(got[0][0]._data, got[1][0]._data) if backend == "cpu" else True


def test_kept_arrays_lent_to_one_replay_at_a_time():
    made = []
    kept = Kept([((2, 3), wg.float32)], lambda shape, dtype: made.append(shape) or np.empty(shape, np.float32))
    first = kept.take()
    second = kept.take()                # another replay while the first holds them: arrays of its own
    assert first is not second and first[0] is not second[0] and len(made) == 2
    kept.give(first)
    assert kept.take() is first and len(made) == 2
    assert kept.nbytes() == 24


_SPECIAL = np.float32([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3e-39])


def _form(name, attrs, arrays, out_shape):
    metas = [(a.shape, wg.float32) for a in arrays]
    return into.into_kernel(name, attrs, metas, (out_shape, wg.float32))


@pytest.mark.parametrize("name", ["Add", "Sub", "Mul", "Div", "Maximum", "Exp", "Neg"])
def test_ufunc_forms_equal_the_kernels_in_place(name):
    from webgrad.registry import _kernels
    kernel = _kernels["cpu"][name]
    a = np.repeat(_SPECIAL, 8).reshape(8, 8)
    b = np.tile(_SPECIAL, 8).reshape(8, 8)
    args = (a, b) if name not in ("Exp", "Neg") else (a,)
    want = kernel(*args)
    fn, inplace, _ = _form(name, {}, args, a.shape)
    assert inplace == tuple(range(len(args)))
    out = args[0].copy()
    with np.errstate(all="ignore"):   # (a plan's replay runs with numpy's warnings off, as the kernels do)
        got = fn(out, *args[1:], out=out)
    assert got is out and got.tobytes() == want.tobytes()


def test_relu_and_its_gradient_forms_equal_the_kernels():
    from webgrad.registry import _kernels
    y = np.maximum(np.tile(_SPECIAL, 200), np.float32(0))        # > 1024 elements: the kernel's bitwise select
    dy = np.repeat(_SPECIAL, 200)[::-1].copy()
    relu, inplace, _ = _form("Relu", {}, [dy], dy.shape)
    out = dy.copy()
    assert relu(out, out=out).tobytes() == _kernels["cpu"]["Relu"](dy).tobytes() and inplace == (0,)
    for n in (y.size, 16):                                     # the bitwise select and np.where
        want = _kernels["cpu"]["ReluGrad"](dy[:n], y[:n])[0]
        grad, inplace, _ = _form("ReluGrad", {}, [dy[:n], y[:n]], (n,))
        out = dy[:n].copy()
        (got,) = grad(out, y[:n], out=out)
        assert got is out and got.tobytes() == want.tobytes() and inplace == (0,)


@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_form_equals_the_kernel(ta, tb):
    from webgrad.registry import _kernels
    rng = np.random.default_rng(1)
    a = rng.standard_normal((7, 5) if ta else (5, 7), dtype=np.float32)
    b = rng.standard_normal((3, 7) if tb else (7, 3), dtype=np.float32)
    attrs = {"transpose_a": ta, "transpose_b": tb}
    want = _kernels["cpu"]["MatMul"](a, b, **attrs)
    fn, inplace, _ = _form("MatMul", attrs, [a, b], (5, 3))
    out = np.empty((5, 3), np.float32)
    assert fn(a, b, out=out, **attrs) is out and out.tobytes() == want.tobytes() and inplace == ()


def test_forms_refused_where_they_would_differ():
    f32, f64 = wg.float32, wg.float64
    assert into.into_kernel("Add", {}, [((2,), f32), ((2,), f64)], ((2,), f64)) is None      # mixed dtypes
    assert into.into_kernel("Add", {}, [((2,), wg.int64)] * 2, ((2,), wg.int64)) is None    # integers
    assert into.into_kernel("MatMul", {}, [((3, 1), f32), ((1, 4), f32)], ((3, 4), f32)) is None   # outer product
    assert into.into_kernel("MatMul", {}, [((2, 3, 4), f32), ((4, 5), f32)], ((2, 3, 5), f32)) is None
    assert into.into_kernel("Reshape", {"shape": (4,)}, [((2, 2), f32)], ((4,), f32)) is None
    fn, inplace, _ = into.into_kernel("Add", {}, [((2, 3), f32), ((3,), f32)], ((2, 3), f32))
    assert inplace == (0,)                                       # never into the broadcast operand


@pytest.mark.parametrize("name", sorted(n for n in into.FRESH if n in into.UFUNCS or n in ("Relu", "MatMul", "Sum",
                                                                                            "SoftmaxCrossEntropy")))
def test_fresh_kernels_return_arrays_of_their_own(name):
    """The kernels a plan may write over once read: their results share no memory with their inputs."""
    from webgrad.registry import _kernels
    kernel = _kernels["cpu"][name]
    x = np.abs(np.linspace(0.5, 2, 12, dtype=np.float32)).reshape(3, 4)
    if name in wg.kernel_names.BITWISE:          # integer-only kernels
        x = np.arange(12, dtype=np.int64).reshape(3, 4)
    if name == "MatMul":
        outs = [kernel(x, x, transpose_a=False, transpose_b=True), kernel(x[:, :1], x[:1], transpose_a=False,
                                                                         transpose_b=False)]
        ins = [x]
    elif name == "Sum":
        outs = [kernel(x, axes=a, keepdim=k) for a in ((), (0,), (1,), (0, 1)) for k in (True, False)]
        ins = [x]
    elif name == "SoftmaxCrossEntropy":
        t = np.int64([0, 3, 1])
        outs = [kernel(x, t, ignore_index=-100, reduction=r) for r in ("none", "mean", "sum")]
        ins = [x, t]
    else:
        outs, ins = [kernel(x, x) if name in BINARY else kernel(x)], [x]
    for o in outs:
        assert not any(np.shares_memory(o, i) for i in ins), name


def _sgd_ids(compiled, hold_at=None):
    """The weight data's identity after each of 6 SGD steps of a Linear layer, the parameters after,
    and (with ``hold_at``) the weight's data array held from then on (as a saved value or any
    reference the plan cannot see would hold it), and a copy of its values."""
    wg.manual_seed(1)
    lin = nn.Linear(6, 3)
    opt = wg.optim.SGD(lin.parameters(), lr=0.5)
    x = wg.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6))

    def step():
        opt.zero_grad()
        lin(x).square().sum().backward()
        opt.step()
    fn = wg.compile(step) if compiled else step
    ids, held = [], None
    for i in range(6):
        fn()
        ids.append(id(lin.weight._data))
        if i == hold_at:
            arr = lin.weight._data
            held = (arr, arr.copy())
    return ids, [p.tolist() for p in lin.parameters()], held


def test_a_parameter_update_writes_into_data_nothing_else_holds():
    ids, params, _ = _sgd_ids(True)
    assert params == _sgd_ids(False)[1]
    assert len(set(ids[3:])) == 1        # replays write the update into the weight's own array


def test_data_someone_else_holds_is_not_written_over():
    ids, params, (arr, before) = _sgd_ids(True, hold_at=3)
    e_ids, e_params, (e_arr, e_before) = _sgd_ids(False, hold_at=3)
    assert params == e_params
    assert np.array_equal(arr, before) == np.array_equal(e_arr, e_before)   # as eagerly: untouched
    assert ids[4] != ids[3]              # the array the user holds was not written into


def test_an_argument_is_never_written_into(backend):
    @wg.compile
    def f(x):
        return (x * 2).relu() - 1
    x = wg.tensor(np.float32([[1, -2], [3, -4]]))
    for _ in range(4):
        assert f(x).tolist() == [[1.0, -1.0], [5.0, -1.0]]
    assert x.tolist() == [[1.0, -2.0], [3.0, -4.0]]


def test_no_donation_in_a_plan_with_a_graph_break():
    w = wg.tensor(np.float32([1.0, 2.0]), requires_grad=True)
    opt = wg.optim.SGD([w], lr=0.1)

    @wg.compile
    def step():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        if loss.item() > 100:          # a graph break
            return loss
        opt.step()
        return loss
    for _ in range(4):
        step()
    assert "if nothing else holds it" not in step.explain()
    assert w.tolist() == pytest.approx([1.0 * 0.8 ** 4, 2.0 * 0.8 ** 4])


def test_fresh_backward_kernels_return_arrays_of_their_own():
    """The backward kernels a plan may write over (into.FRESH's ``...Grad`` steps): their gradients
    share no memory with dy or the saved values."""
    from webgrad.registry import _kernels

    x = np.linspace(-1, 2, 12, dtype=np.float32).reshape(3, 4)
    dy = np.linspace(0.5, 1, 9, dtype=np.float32).reshape(3, 3)
    cases = {   # name: (dy, saved, attrs)
        "MatMul": (dy, [x, x], {"needs": (True, True), "shapes": (x.shape, x.shape), "transpose_a": False,
                                "transpose_b": True}),
        "Relu": (x, [np.maximum(x, np.float32(0))], {}),
        "SoftmaxCrossEntropy": (np.float32(1), [x, np.int64([0, 3, 1])], {"ignore_index": -100, "reduction": "mean"}),
    }
    assert {name + "Grad" for name in cases} <= into.FRESH
    for name, (g, saved, attrs) in cases.items():
        for out in _kernels["cpu"][name + "Grad"](np.asarray(g), *saved, **attrs):
            if out is not None:
                assert not any(np.shares_memory(out, a) for a in [np.asarray(g), *saved]), name


def test_a_long_chain_into_a_given_array_runs_in_row_blocks():
    """A fused chain written into a given array of more than two blocks' rows runs a block of rows at
    a time (fused.block_rows), with inputs broadcast along rows passed whole: the same bytes as the
    chain run whole, written into an input of its own."""
    from webgrad.backends.cpu.fused import block_rows, fused_kernel
    ops = [("Mul", (("in", 0), ("in", 1))), ("Add", (("op", 0), ("in", 2))), ("Sub", (("in", 3), ("op", 1)))]
    shapes = [(300, 500), (500,), (300, 1), (300, 500)]
    rng = np.random.default_rng(2)
    xs = [rng.choice(_SPECIAL, s).astype(np.float32) if s != (500,) else rng.standard_normal(s, dtype=np.float32)
          for s in shapes]
    whole = fused_kernel(ops, (300, 500), wg.float32, into=True)
    blocked = fused_kernel(ops, (300, 500), wg.float32, into=True, in_shapes=shapes)
    assert whole.rows is None and blocked.rows == block_rows((300, 500)) == 131
    with np.errstate(all="ignore"):
        want = whole(*xs, out=None, scratch=[np.empty((300, 500), np.float32)] * 2)
        out = xs[3].copy()
        got = blocked(*xs[:3], out, out=out, scratch=[np.empty((131, 500), np.float32)] * 2)
    assert got is out and got.tobytes() == want.tobytes()


def test_a_long_parameter_update_in_row_blocks_equals_eager(backend):
    """SGD with momentum on a 300x500 weight: the update chains run in row blocks on cpu, bit for bit
    eager's; explain() says so."""
    def run(compiled):
        wg.manual_seed(3)
        lin = nn.Linear(500, 300).to(backend)
        opt = wg.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
        x = wg.tensor(np.linspace(-1, 1, 2000, dtype=np.float32).reshape(4, 500), device=backend)

        def step():
            opt.zero_grad()
            lin(x).square().mean().backward()
            opt.step()
        fn = wg.compile(step) if compiled else step
        for _ in range(5):
            fn()
        return [p.tolist() for p in lin.parameters()], fn
    (got, fn), (want, _) = run(True), run(False)
    if backend == "cpu":
        assert got == want
        assert "in blocks of 131 rows" in fn.explain()
    else:
        assert np.allclose(got[0], want[0], rtol=1e-4, atol=1e-6)
        assert "in blocks of" not in fn.explain()
