"""Boolean masks and advanced assignment: t[mask], t[mask] = v, nonzero/argwhere/where(condition),
masked_select/masked_scatter, count_nonzero, index_copy/index_fill/index_put, and the two kernels
under them (NonZero, IndexCopy): forward against PyTorch on every backend, finite-difference
gradients (float64, cpu), backend agreement, PyTorch's shapes for empty and 0-d masks, the rule for
repeated indices (the last write wins), bad input, and no per-element readback."""
import numpy as np
import pytest

import webgrad as wg
from opinfo import OpCase, assert_close, gradgradcheck, op_tests

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)


def r(*shape):
    return rng.standard_normal(shape)


def mask(*shape, p=0.5):
    return rng.random(shape) < p


def mask_with(count, *shape):
    """A bool array of ``shape`` with exactly ``count`` True elements, at random places."""
    flat = np.zeros(int(np.prod(shape)), bool)
    flat[rng.permutation(flat.size)[:count]] = True
    return flat.reshape(shape)


def get(idx):
    """``x[idx(x, *index tensors)]``, for webgrad and torch alike."""
    return lambda x, *ix: x[idx(*ix)]


def put(idx):
    """A copy of ``x`` with ``x[idx(*index tensors)] = v``."""
    def fn(x, v, *ix):
        out = x.clone()
        out[idx(*ix)] = v
        return out
    return fn


def T(fn):
    """PyTorch's ``fn`` on the numpy inputs (integers as int64), as a reference. (Not opinfo's
    ``torch_reference``: its ``np.ascontiguousarray`` makes 0-d inputs 1-d, and 0-d masks matter here.)"""
    def ref(*arrays):
        ts = [torch.from_numpy(np.array(a.astype(np.int64) if a.dtype.kind == "i" else a)) for a in arrays]
        return fn(*ts).numpy()
    return ref


def last_wins(x, flat_index, values):
    """The documented rule for repeated indices, written as a loop: every write in order."""
    out = x.copy().reshape(-1)
    for i, v in zip(flat_index.reshape(-1), np.broadcast_to(values, flat_index.shape).reshape(-1)):
        out[i] = v
    return out.reshape(x.shape)


M23 = np.array([[True, False, True], [False, False, True]])
FALSE3 = np.zeros(3, bool)
TRUE3 = np.ones(3, bool)
DUP = np.array([2, 0, 2, 2, 1, 0])

CASES = [
    # x[mask]: masks over every position, all-False, all-True, 0-d
    OpCase("get_mask_all_dims", get(lambda m: m), T(get(lambda m: m)), [r(2, 3), M23]),
    OpCase("get_mask_leading", get(lambda m: m), T(get(lambda m: m)), [r(2, 3, 4), M23]),
    OpCase("get_mask_middle", get(lambda m: (slice(None), m)), T(get(lambda m: (slice(None), m))),
           [r(4, 2, 3, 2), M23]),
    OpCase("get_mask_trailing", get(lambda m: (Ellipsis, m)), T(get(lambda m: (Ellipsis, m))), [r(4, 2, 3), M23]),
    OpCase("get_mask_all_false", get(lambda m: m), T(get(lambda m: m)), [r(3, 4), FALSE3]),
    OpCase("get_mask_all_true", get(lambda m: (slice(None), m)), T(get(lambda m: (slice(None), m))),
           [r(2, 3), TRUE3]),
    OpCase("get_mask_0d_true", get(lambda m: m), T(get(lambda m: m)), [r(2, 3), np.array(True)]),
    OpCase("get_mask_0d_false", get(lambda m: (1, m)), T(get(lambda m: (1, m))), [r(2, 3), np.array(False)]),
    OpCase("get_mask_of_scalar", get(lambda m: m), T(get(lambda m: m)), [r(), np.array(True)]),
    # masks mixed with slices and integer tensors, adjacent and apart
    OpCase("get_mask_slice_int", get(lambda m, i: (m, slice(1, None), i)), T(get(lambda m, i: (m, slice(1, None), i))),
           [r(3, 4, 5), np.array([True, False, True]), np.array([4, -1])]),
    OpCase("get_mask_int_adjacent", get(lambda m, i: (slice(None), m, i)), T(get(lambda m, i: (slice(None), m, i))),
           [r(2, 2, 3, 4), M23, np.array([[0], [3]])]),
    OpCase("get_int_then_mask", get(lambda i, m: (i, m)), T(get(lambda i, m: (i, m))),
           [r(5, 3), np.array([4, 0]), np.array([False, True, True])]),
    OpCase("get_empty_index", get(lambda i: (slice(None), i)), T(get(lambda i: (slice(None), i))),
           [r(2, 3, 4), np.zeros((0, 2), np.int64)]),
    OpCase("get_mask_large", get(lambda m: m), T(get(lambda m: m)), [r(300, 40), mask(300, 40)], grad=False),
    # x[mask] = v: a value per element, a value over the trailing dims (one where), a number
    OpCase("set_mask_values", put(lambda m: m), T(put(lambda m: m)), [r(2, 3), r(3), M23]),
    OpCase("set_mask_rows", put(lambda m: m), T(put(lambda m: m)), [r(3, 4), r(2, 4), np.array([True, False, True])]),
    OpCase("set_mask_trailing_value", put(lambda m: m), T(put(lambda m: m)),
           [r(3, 4), r(1, 4), np.array([True, False, True])]),
    OpCase("set_mask_scalar_value", put(lambda m: m), T(put(lambda m: m)), [r(2, 3), r(), M23]),
    OpCase("set_mask_middle", put(lambda m: (slice(None), m)), T(put(lambda m: (slice(None), m))),
           [r(2, 2, 3), r(2, 3), M23]),
    OpCase("set_mask_all_false", put(lambda m: m), T(put(lambda m: m)), [r(3, 2), r(0, 2), FALSE3]),
    OpCase("set_mask_0d", put(lambda m: m), T(put(lambda m: m)), [r(2, 3), r(1, 2, 3), np.array(True)]),
    OpCase("set_mask_large", put(lambda m: m), T(put(lambda m: m)), [r(300, 40), r(6000), mask_with(6000, 300, 40)],
           grad=False),
    # x[int tensor] = v and mixed indices, by the rows of the indexed dims or by flat positions
    OpCase("set_int_rows", put(lambda i: i), T(put(lambda i: i)), [r(5, 3), r(2, 3), np.array([4, -5])]),
    OpCase("set_int_middle", put(lambda i: (slice(None), i)), T(put(lambda i: (slice(None), i))),
           [r(2, 4, 3), r(2, 2, 3), np.array([3, 1])]),
    OpCase("set_two_ints_apart", put(lambda i, j: (i, slice(None), j)), T(put(lambda i, j: (i, slice(None), j))),
           [r(3, 2, 4), r(2, 2), np.array([0, 2]), np.array([1, 3])]),
    OpCase("set_step_and_int", put(lambda i: (slice(1, None, 2), i)), T(put(lambda i: (slice(1, None, 2), i))),
           [r(5, 3), r(2, 2), np.array([2, 0])]),
    OpCase("set_negative_step_and_int", put(lambda i: (slice(None, None, -2), i)),   # numpy's: PyTorch has no step < 0
           lambda x, v, i: last_wins(x, np.arange(x.size).reshape(x.shape)[::-2, i], v),
           [r(5, 3), r(3, 2), np.array([2, 0])]),
    OpCase("set_int_and_int_tensor", put(lambda i: (1, slice(None), i)), T(put(lambda i: (1, slice(None), i))),
           [r(3, 2, 4), r(2), np.array([3, -4])]),
    OpCase("set_int_and_mask", put(lambda i, m: (i, m)), T(put(lambda i, m: (i, m))),
           [r(4, 3), r(2), np.array([3, 1]), np.array([False, True, True])]),
    OpCase("set_empty_index", put(lambda i: i), T(put(lambda i: i)), [r(3, 2), r(2), np.zeros(0, np.int64)]),
    # repeated indices: the last write wins (numpy's rule; PyTorch leaves the winner unspecified); every written
    # value gets its place's gradient, PyTorch's rule and not the finite difference's (0 for an overwritten
    # one): test_repeated_index_gradient_goes_to_every_write_as_torch
    OpCase("set_duplicates", put(lambda i: i), lambda x, v, i: last_wins(x, i, v), [r(3), r(6), DUP], grad=False),
    OpCase("set_duplicate_rows", put(lambda i: (slice(None), i)),
           lambda x, v, i: np.stack([last_wins(x[k], i, v[k]) for k in range(2)]), [r(2, 3), r(2, 6), DUP],
           grad=False),
    OpCase("set_duplicates_large", put(lambda i: i), lambda x, v, i: last_wins(x, i, v),
           [r(500), r(3000), rng.integers(0, 500, 3000)], grad=False),
    # index_put, index_copy, index_fill
    OpCase("index_put", lambda x, v, i, j: x.index_put((i, j), v), T(lambda x, v, i, j: x.index_put((i, j), v)),
           [r(3, 4), r(2), np.array([2, 0]), np.array([1, 3])]),
    OpCase("index_put_accumulate", lambda x, v, i: x.index_put((i,), v, accumulate=True),
           T(lambda x, v, i: x.index_put((i,), v, accumulate=True)), [r(3, 2), r(6, 2), DUP]),
    OpCase("index_put_mask_accumulate", lambda x, v, m: wg.index_put(x, (m,), v, accumulate=True),
           T(lambda x, v, m: torch.index_put(x, (m,), v, accumulate=True)), [r(2, 3), r(3), M23]),
    OpCase("index_copy", lambda x, s, i: x.index_copy(1, i, s), T(lambda x, s, i: x.index_copy(1, i, s)),
           [r(2, 4, 3), r(2, 2, 3), np.array([3, 0])]),
    OpCase("index_copy_duplicates", lambda x, s, i: wg.index_copy(x, 0, i, s),
           lambda x, s, i: last_wins(x, i, s), [r(3), r(6), DUP], grad=False),
    OpCase("index_copy_scalar", lambda x, s, i: x.index_copy(0, i, s), T(lambda x, s, i: x.index_copy(0, i, s)),
           [r(), r(), np.array(0)]),
    OpCase("index_fill", lambda x, i: x.index_fill(1, i, -2.5), T(lambda x, i: x.index_fill(1, i, -2.5)),
           [r(2, 4), np.array([0, -1, 0])]),
    OpCase("index_fill_tensor", lambda x, v, i: x.index_fill(0, i, v), T(lambda x, v, i: x.index_fill(0, i, v)),
           [r(3, 2), r(), np.array([1])]),
    # masked_select (broadcasting both ways), masked_scatter
    OpCase("masked_select", wg.masked_select, T(torch.masked_select), [r(2, 3), M23]),
    OpCase("masked_select_mask_broadcast", wg.masked_select, T(torch.masked_select), [r(4, 2, 3), M23]),
    OpCase("masked_select_input_broadcast", wg.masked_select, T(torch.masked_select),
           [r(3), np.array([[True], [False]])]),
    OpCase("masked_select_all_false", wg.masked_select, T(torch.masked_select), [r(2, 3), np.zeros((2, 3), bool)]),
    OpCase("masked_scatter", lambda x, s, m: x.masked_scatter(m, s), T(lambda x, s, m: x.masked_scatter(m, s)),
           [r(2, 3), r(5), M23]),
    OpCase("masked_scatter_broadcast", lambda x, s, m: wg.masked_scatter(x, m, s),
           T(lambda x, s, m: torch.masked_scatter(x, m, s)), [r(3), r(2, 2), np.array([[True], [False]])]),
    # nonzero, argwhere, where(condition), count_nonzero (integer results)
    OpCase("nonzero", wg.nonzero, T(torch.nonzero), [M23], grad=False),
    OpCase("nonzero_float", lambda x: x.nonzero(), T(lambda x: x.nonzero()),
           [np.array([[0.0, -0.0, 1.5], [np.nan, 0.0, -2.0]])], grad=False),
    OpCase("nonzero_int", wg.nonzero, T(torch.nonzero), [rng.integers(-1, 2, (3, 2, 4))], grad=False),
    OpCase("nonzero_0d", wg.nonzero, T(torch.nonzero), [np.array(3)], grad=False),
    OpCase("nonzero_0d_zero", wg.nonzero, T(torch.nonzero), [np.array(0.0)], grad=False),
    OpCase("nonzero_empty", wg.nonzero, T(torch.nonzero), [np.zeros((0, 3), bool)], grad=False),
    OpCase("nonzero_large", wg.nonzero, T(torch.nonzero), [mask(50, 30, 7)], grad=False),
    OpCase("nonzero_as_tuple", lambda m: wg.stack(wg.nonzero(m, as_tuple=True)),
           T(lambda m: torch.stack(torch.nonzero(m, as_tuple=True))), [M23], grad=False),
    OpCase("where_condition", lambda m: wg.stack(wg.where(m)), T(lambda m: torch.stack(torch.where(m))),
           [mask(4, 5)], grad=False),
    OpCase("argwhere", wg.argwhere, T(torch.argwhere), [rng.integers(0, 2, (3, 4))], grad=False),
    OpCase("count_nonzero", wg.count_nonzero, T(torch.count_nonzero), [rng.integers(0, 2, (3, 4))], grad=False),
    OpCase("count_nonzero_dims", lambda x: x.count_nonzero(dim=(0, 2)), T(lambda x: x.count_nonzero(dim=(0, 2))),
           [np.where(mask(2, 3, 4), r(2, 3, 4), 0.0)], grad=False),
]
globals().update(op_tests(CASES))

SECOND_ORDER = [c for c in CASES if c.name in ("get_mask_slice_int", "set_mask_values", "set_int_rows",
                                               "index_put_accumulate", "masked_scatter")]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=[c.id for c in SECOND_ORDER])
def test_second_order(case):
    gradgradcheck(case.fn, *case.inputs, what=case.id)


# ---------------------------------------------------------------- PyTorch's shapes

X = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
INDICES = {
    "all_false_2d": lambda m: m.tensor(np.zeros((2, 3), bool)),
    "all_false_1d": lambda m: m.tensor(np.zeros(2, bool)),
    "all_false_last": lambda m: (Ellipsis, m.tensor(np.zeros(4, bool))),
    "all_true_3d": lambda m: m.tensor(np.ones((2, 3, 4), bool)),
    "empty_index": lambda m: m.tensor(np.zeros(0, np.int64)),
    "empty_index_2d_mid": lambda m: (slice(None), m.tensor(np.zeros((0, 2), np.int64))),
    "empty_list": lambda m: [],
    "empty_mask_and_index": lambda m: (m.tensor(np.zeros(2, bool)), slice(None), m.tensor(np.zeros(0, np.int64))),
    "0d_false": lambda m: m.tensor(False),
    "0d_true_between": lambda m: (0, m.tensor(True), 1),
    "0d_false_with_slice": lambda m: (slice(None), m.tensor(False), slice(1, 3)),
    "python_true": lambda m: (Ellipsis, True),
    "python_false": lambda m: False,
    "bool_list": lambda m: (slice(None), [True, False, True]),
    "numpy_mask": lambda m: np.array([[True, False, True], [False, True, False]]),
    "numpy_int_array": lambda m: (slice(None), np.array([2, 0, 2])),
    "mask_then_index": lambda m: (m.tensor([True, False]), slice(None), m.tensor([1, 3])),
    "mask_index_adjacent": lambda m: (m.tensor([[True, False, True], [False, True, True]]), m.tensor([1, 3, 0, 2])),
    "index_mask_apart": lambda m: (m.tensor([1, 0]), slice(None), m.tensor([True, False, False, True])),
}


@pytest.mark.parametrize("name", sorted(INDICES))
def test_get_and_set_match_torch(name, backend):
    make = INDICES[name]
    got, want = wg.tensor(X)[make(wg)], torch.tensor(X)[make(torch)]
    assert tuple(got.shape) == tuple(want.shape), f"{name}: shape {got.shape} != torch's {tuple(want.shape)}"
    assert_close(got, want.numpy(), what=name)
    for value in (-1.0, wg.tensor(np.linspace(1, 2, max(1, want.numel()), dtype=np.float32)[:want.numel()])):
        w, t = wg.tensor(X), torch.tensor(X)
        w[make(wg)] = value if isinstance(value, float) else value.reshape(tuple(want.shape))
        t[make(torch)] = value if isinstance(value, float) else torch.tensor(value.numpy()).reshape(want.shape)
        assert_close(w, t.numpy(), what=f"{name}: set {type(value).__name__}")


def test_cpu_mask_indexes_a_tensor_anywhere(backend):
    """As PyTorch takes cpu indices for a GPU tensor, a mask or index on cpu works on every backend."""
    x = wg.tensor(X, backend=backend)
    m, i = wg.tensor(X[:, :, 0] > 5, backend="cpu"), wg.tensor([2], backend="cpu")
    assert_close(x[m], X[X[:, :, 0] > 5])
    x[m, i] = 0.0
    want = X.copy()
    want[np.nonzero(X[:, :, 0] > 5) + (np.array([2]),)] = 0.0
    assert_close(x, want)


def test_assignment_through_a_view_reaches_its_base(backend):
    base = wg.zeros(2, 3)
    row = base[1]
    row[wg.tensor([True, False, True])] = wg.tensor([1.0, 2.0])
    row.index_put_((wg.tensor([1]),), wg.tensor([5.0]))
    base.t()[wg.tensor([0, 0])] = wg.tensor([7.0, 8.0])
    want = torch.zeros(2, 3)
    want[1][torch.tensor([True, False, True])] = torch.tensor([1.0, 2.0])
    want[1].index_put_((torch.tensor([1]),), torch.tensor([5.0]))
    want.t()[torch.tensor([0, 0])] = torch.tensor([7.0, 8.0])
    assert base.tolist() == want.tolist() and row.tolist() == want[1].tolist()


# ---------------------------------------------------------------- the kernels on long inputs and every dtype

def test_nonzero_past_65535_elements(backend):
    """Long inputs: the GPU count comes from a prefix sum whose passes must cover them all."""
    m = mask(70001)
    m[-1] = True
    got = wg.tensor(m).nonzero()
    assert_close(got, np.argwhere(m))
    x = r(70001).astype(np.float32)
    t = wg.tensor(x)
    t[wg.tensor(m)] = wg.tensor(-x[m])
    assert_close(t, np.where(m, -x, x))


def kernel_on_both(gpu, name, arrays, **attrs):
    """(wgpu result, cpu result) of kernel ``name`` on numpy ``arrays``."""
    want = wg.get_kernel(name, "cpu")(*arrays, **attrs)
    got = wg.get_kernel(name, "wgpu")(*[gpu.from_array(a) for a in arrays], **attrs)
    return gpu.to_numpy(got), want


@pytest.mark.parametrize("shape", [(), (1,), (7,), (4, 8), (3, 5, 7), (2, 3, 4, 5), (0, 3), (1001,)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_nonzero_kernel_agrees_with_cpu(gpu, shape, dtype):
    x = np.where(mask(*shape, p=0.3), rng.integers(1, 5, shape), 0).astype(dtype)
    got, want = kernel_on_both(gpu, wg.kernel_names.NONZERO, [x])
    assert got.dtype == want.dtype == np.int64 and got.shape == want.shape and (got == want).all()


@pytest.mark.parametrize("shape, axis, m", [((7,), 0, 20), ((4, 6), 1, 9), ((3, 4, 5), 1, 10), ((3, 4, 5), 2, 0),
                                            ((50, 3), 0, 5000), ((2, 300), 1, 300)])
def test_index_copy_kernel_agrees_with_cpu(gpu, shape, axis, m):
    """Many entries per slice (5000 into 50) race for each slice's claim on the GPU: the last must win."""
    x = r(*shape).astype(np.float32)
    index = rng.integers(0, shape[axis], m)
    source = r(*shape[:axis], m, *shape[axis + 1:]).astype(np.float32)
    got, want = kernel_on_both(gpu, wg.kernel_names.INDEX_COPY, [x, index, source], axis=axis)
    moved = np.moveaxis(x.copy(), axis, 0)
    for j, i in enumerate(index):
        moved[i] = np.moveaxis(source, axis, 0)[j]
    assert (want == np.moveaxis(moved, 0, axis)).all() and (got == want).all()


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "bool"])
def test_nonzero_and_index_copy_per_dtype(dtype, backend):
    x = np.array([[0, 1, 0], [2, 0, 3]]).astype(dtype)
    assert wg.tensor(x).nonzero().tolist() == np.argwhere(x).tolist()
    src = np.array([[1], [0]]).astype(dtype)
    got = wg.tensor(x).index_copy(1, wg.tensor([1]), wg.tensor(src))
    want = x.copy()
    want[:, 1:2] = src
    assert got.dtype.name == dtype and got.tolist() == want.tolist()


def test_bool_tensor_assignment_and_accumulate(backend):
    b = wg.tensor([False, False, True])
    b[wg.tensor([0, 0])] = wg.tensor([True, False])
    assert b.tolist() == [False, False, True]
    b.index_put_((wg.tensor([0, 1, 1]),), wg.tensor([True, True, False]), accumulate=True)
    assert b.tolist() == torch.tensor([False, False, True]).index_put_(
        (torch.tensor([0, 1, 1]),), torch.tensor([True, True, False]), accumulate=True).tolist()


# ---------------------------------------------------------------- autograd

def test_values_get_gradient_and_written_positions_get_none(backend):
    x = wg.tensor(r(3, 4).astype(np.float32), requires_grad=True)
    v = wg.tensor(r(2, 4).astype(np.float32), requires_grad=True)
    m = wg.tensor([True, False, True])
    y = x * 1
    version = y._version
    y[m] = v
    assert y._version == version + 1
    (y * wg.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))).sum().backward()
    assert x.grad.tolist() == [[0.0] * 4, [4.0, 5.0, 6.0, 7.0], [0.0] * 4]
    assert v.grad.tolist() == [[0.0, 1.0, 2.0, 3.0], [8.0, 9.0, 10.0, 11.0]]


def test_repeated_index_gradient_goes_to_every_write_as_torch(backend):
    """The last write stands; every written value, the overwritten ones too, gets its place's gradient
    (PyTorch's index_put rule: the gradient is gathered at the indices)."""
    x = wg.zeros(3, requires_grad=True)
    v = wg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x.index_put((wg.tensor([1, 2, 1, 0]),), v)
    assert y.tolist() == [4.0, 3.0, 2.0]
    (y * wg.tensor([10.0, 20.0, 30.0])).sum().backward()
    assert v.grad.tolist() == [20.0, 30.0, 20.0, 10.0] and x.grad.tolist() == [0.0, 0.0, 0.0]


def test_setitem_on_a_leaf_that_requires_grad_is_refused():
    x = wg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="__setitem__: a leaf Variable"):
        x[wg.tensor([True, False, True])] = wg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="index_put_: a leaf Variable"):
        x.index_put_((wg.tensor([0]),), wg.tensor([1.0]))


# ---------------------------------------------------------------- no per-element readback

def test_no_host_readback_of_positions(backend, monkeypatch):
    """Masks and index tensors never come back to Python element by element."""
    picked = mask(6, 6)
    x, m, i = wg.tensor(r(6, 6).astype(np.float32)), wg.tensor(picked), wg.tensor([5, 0, 5])
    values = wg.ones(int(picked.sum()))

    def refuse(*_, **__):
        raise AssertionError("a tensor was read back to Python during indexing")
    for name in ("tolist", "item", "numpy", "__iter__"):
        monkeypatch.setattr(wg.Tensor, name, refuse)
    x[m]
    x[m] = 0.0
    x[m] = values
    x[m[:, 0]] = wg.ones(1, 6)
    x[i] = wg.ones(3, 6)
    x[:, i] = wg.ones(6, 1)
    x.index_put_((i,), wg.ones(6), accumulate=True)
    wg.masked_select(x, m)
    x.masked_scatter(m, wg.ones(36))
    monkeypatch.undo()


def test_integer_index_assignment_on_the_gpu_submits_nothing(gpu):
    """``x[idx] = v`` and ``index_put_`` record their kernels and read nothing back; ``x[mask]`` reads
    back one count."""
    x = wg.tensor(r(64, 8).astype(np.float32), backend="wgpu")
    i, v = wg.tensor([3, 1, 3], backend="wgpu"), wg.ones(3, 8, backend="wgpu")
    x.tolist()
    before = gpu.submits
    x[i] = v
    x[:, i] = wg.zeros(64, 3, backend="wgpu")
    x.index_put_((i,), v, accumulate=True)
    x[x > 0.5] = -1.0
    assert gpu.submits == before
    x[wg.tensor(mask(64, 8), backend="wgpu")]
    assert gpu.submits == before + 1


def test_gpu_refuses_out_of_range_indices_at_the_next_readback(gpu):
    x = wg.zeros(4, backend="wgpu")
    x[wg.tensor([1, 9], backend="wgpu")] = 1.0
    with pytest.raises(IndexError, match="IndexCopy: index 9 is out of bounds for a dimension of size 4"):
        x.tolist()


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, err, match", [
    (lambda: wg.zeros(3, 4)[wg.tensor([True, False])], IndexError,
     r"__getitem__: the shape of the mask \(2,\) at index 0 does not match the shape \(3,\)"),
    (lambda: wg.zeros(3, 4).__setitem__(wg.tensor([True, False]), 1.0), IndexError,
     r"__setitem__: the shape of the mask \(2,\) at index 0"),
    (lambda: wg.zeros(3, 4).__setitem__((slice(None), wg.tensor([True])), 1.0), IndexError,
     r"__setitem__: the shape of the mask \(1,\) at index 1 does not match the shape \(4,\)"),
    (lambda: wg.zeros(3, 4)[wg.tensor([[True] * 4] * 3), 0], IndexError, "too many indices"),
    (lambda: wg.zeros(3, 4).__setitem__(wg.tensor([True, False, True]), wg.ones(3, 4)), ValueError,
     r"__setitem__: shape mismatch: value of shape \(3, 4\) cannot be broadcast to the indexing result of shape "
     r"\(2, 4\)"),
    (lambda: wg.zeros(3).__setitem__(wg.tensor([0, 3]), 1.0), IndexError, "out of bounds"),
    (lambda: wg.zeros(3).__setitem__(wg.tensor([0.5]), 1.0), IndexError, "must be long, int, byte or bool tensors"),
    (lambda: wg.masked_select(wg.zeros(3), wg.tensor([1, 0, 1])), TypeError,
     "masked_select: mask must be a bool tensor, got int64"),
    (lambda: wg.masked_select(wg.zeros(3, 4), wg.tensor([True, False, True])), ValueError, "masked_select"),
    (lambda: wg.zeros(4).masked_scatter(wg.tensor([True] * 4), wg.ones(3)), ValueError,
     r"masked_scatter: source has 3 elements, fewer than the mask's 4 True elements"),
    (lambda: wg.zeros(4).masked_scatter(wg.tensor([True] * 4), wg.ones(4, dtype=wg.int64)), TypeError,
     "masked_scatter: source dtype int64 differs from the input's float32"),
    (lambda: wg.zeros(4).masked_scatter_(wg.tensor([[True]] * 2), wg.ones(8)), ValueError,
     r"masked_scatter_: mask of shape \(2, 1\) does not broadcast to the input's shape \(4,\)"),
    (lambda: wg.zeros(3, 2).index_copy(0, wg.tensor([0, 1]), wg.ones(1, 2)), IndexError,
     r"index_copy: source of shape \(1, 2\) must have the input's shape \(3, 2\) with dim 0 of size 2"),
    (lambda: wg.zeros(3, 2).index_copy(0, wg.tensor([[0]]), wg.ones(1, 2)), IndexError,
     "index_copy: index should have dimension 1 or 0"),
    (lambda: wg.zeros(3, 2).index_copy(0, wg.tensor([-1]), wg.ones(1, 2)), IndexError,
     "IndexCopy: index -1 is out of bounds for dim 0 with size 3"),
    (lambda: wg.zeros(3, 2).index_copy(0, wg.tensor([0]), wg.ones(1, 2, dtype=wg.float64)), TypeError,
     "index_copy: source dtype float64 differs"),
    (lambda: wg.zeros(3, 2).index_fill(1, wg.tensor([2]), 1.0), IndexError, "IndexCopy: index 2 is out of bounds"),
    (lambda: wg.zeros(3, 2).index_fill(1, wg.tensor([0]), wg.ones(1)), TypeError,
     r"index_fill: value must be a number or a 0-d tensor, got shape \(1,\)"),
    (lambda: wg.zeros(3).index_put((wg.tensor([0]),), 1.0), TypeError, "index_put: values must be a Tensor, got float"),
    (lambda: wg.zeros(3).index_put(wg.tensor([0]), wg.ones(1)), TypeError, "index_put: indices must be a tuple"),
    (lambda: wg.zeros(3).index_put((wg.tensor([0]),), wg.ones(1, dtype=wg.int64)), TypeError,
     "index_put: values dtype int64 differs"),
    (lambda: wg.where(wg.tensor([True]), 1.0), TypeError, "where: expected both input and other, or neither"),
    (lambda: wg.nonzero([1, 0]), TypeError, "nonzero: input must be a Tensor, got list"),
    (lambda: wg.count_nonzero(wg.zeros(2, 3), dim=2), IndexError, "dim 2 is out of range"),
])
def test_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()
