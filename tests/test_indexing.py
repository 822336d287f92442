"""Indexing ops: t[...] and t[...] = v, gather/scatter and relatives: forward vs numpy, finite-difference
gradients, agreement with PyTorch's indexing rules, bad input."""
import numpy as np
import pytest

import webgrad as wg
from opinfo import OpCase, assert_close, gradgradcheck, op_tests

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def ints(high, *shape):
    return rng.integers(0, high, shape)


def set_ref(idx):
    def ref(x, v):
        out = x.copy()
        out[idx] = v
        return out
    return ref


def set_fn(idx):
    def fn(x, v):
        out = x.clone()
        out[idx] = v
        return out
    return fn


def np_gather(x, dim, index):
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return x[tuple(grid)]


def np_scatter_add(x, dim, index, src):
    out = x.copy()
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    np.add.at(out, tuple(grid), src[tuple(slice(0, n) for n in index.shape)])
    return out


MASK = np.array([[True, False, True], [False, False, True]])
I3 = np.array([2, 0, 2])

CASES = [
    OpCase("getitem_int", lambda x: x[1], lambda x: x[1], [r(3, 4)]),
    OpCase("getitem_int", lambda x: x[-1, 2], lambda x: x[-1, 2], [r(3, 4)]),
    OpCase("getitem_slice", lambda x: x[1:, ::2], lambda x: x[1:, ::2], [r(3, 5)]),
    OpCase("getitem_negstep", lambda x: x[::-2, 3:0:-1], lambda x: x[::-2, 3:0:-1], [r(5, 4)]),
    OpCase("getitem_none_ellipsis", lambda x: x[None, ..., 1, None], lambda x: x[None, ..., 1, None], [r(2, 3, 4)]),
    OpCase("getitem_empty", lambda x: x[2:1], lambda x: x[2:1], [r(3, 2)]),
    OpCase("getitem_scalar", lambda x: x[None], lambda x: x[None], [r()]),
    OpCase("getitem_ellipsis", lambda x: x[...], lambda x: x[...], [r()]),
    OpCase("getitem_list", lambda x: x[[2, 0, -1, 2]], lambda x: x[[2, 0, -1, 2]], [r(3, 2)]),
    OpCase("getitem_tensor", lambda x, i: x[:, i], lambda x, i: x[:, i], [r(2, 3), np.array([[2, 0], [-1, 1]])]),
    OpCase("getitem_two_tensors", lambda x, i, j: x[i, j], lambda x, i, j: x[i, j],
           [r(3, 4), np.array([[0], [2]]), np.array([1, 3, -4])]),
    OpCase("getitem_apart", lambda x, i, j: x[i, :, j], lambda x, i, j: x[i, :, j],
           [r(3, 2, 4), np.array([0, 2]), np.array([1, 3])]),
    OpCase("getitem_mask", lambda x, m: x[m], lambda x, m: x[m], [r(2, 3), MASK]),
    OpCase("getitem_mask", lambda x, m: x[:, m], lambda x, m: x[:, m], [r(2, 2, 3), MASK]),
    OpCase("getitem_mask_list", lambda x: x[[True, False, True]], lambda x: x[[True, False, True]], [r(3, 2)]),
    OpCase("getitem_large", lambda x: x[::3, [5, 1]], lambda x: x[::3, [5, 1]], [r(1000, 7)], grad=False),
    OpCase("setitem_slice", set_fn((slice(None), slice(1, None, 2))), set_ref((slice(None), slice(1, None, 2))),
           [r(2, 5), r(2, 2)]),
    OpCase("setitem_broadcast", set_fn(1), set_ref(1), [r(3, 4), r(1, 4)]),
    OpCase("setitem_negstep", set_fn(slice(None, None, -2)), set_ref(slice(None, None, -2)), [r(5), r(3)]),
    # the overwritten value's gradient is PyTorch's (its place's), not the finite difference's 0: checked
    # against torch in test_repeated_writes_give_every_value_its_places_gradient
    OpCase("setitem_list", set_fn(([2, 0], 1)), set_ref(([2, 0], 1)), [r(3, 2), r(2)]),
    OpCase("setitem_list_dup", set_fn(([0, 2, 0], 1)), set_ref(([0, 2, 0], 1)), [r(3, 2), r(3)], grad=False),
    OpCase("setitem_mask", set_fn(MASK), set_ref(MASK), [r(2, 3), r()]),
    OpCase("setitem_scalar", set_fn(()), set_ref(()), [r(), r()]),
    OpCase("setitem_large", set_fn((slice(10, None), 0)), set_ref((slice(10, None), 0)), [r(500, 3), r(490)],
           grad=False),
    OpCase("gather", lambda x, i: x.gather(1, i), lambda x, i: np_gather(x, 1, i), [r(3, 4), ints(4, 2, 5)]),
    OpCase("gather", lambda x, i: wg.gather(x, 0, i), lambda x, i: x, [r(), np.array(0)]),
    OpCase("gather", lambda x, i: wg.gather(x, 0, i), lambda x, i: np_gather(x, 0, i), [r(50, 30), ints(50, 60, 30)],
           grad=False),
    OpCase("scatter_add", lambda x, i, s: x.scatter_add(0, i, s), lambda x, i, s: np_scatter_add(x, 0, i, s),
           [r(3, 4), ints(3, 2, 3), r(3, 3)]),
    OpCase("scatter_add", lambda x, i, s: wg.scatter_add(x, -1, i, s), lambda x, i, s: np_scatter_add(x, 1, i, s),
           [r(40, 30), ints(30, 40, 50), r(40, 50)], grad=False),
    OpCase("index_select", lambda x, i: x.index_select(1, i), lambda x, i: x[:, i], [r(2, 3), I3]),
    OpCase("index_select", lambda x, i: wg.index_select(x, 0, i), lambda x, i: x[i], [r(4), np.zeros(0, int)]),
    OpCase("take_along_dim", lambda x, i: wg.take_along_dim(x, i, 1), lambda x, i: np.take_along_axis(x, i, 1),
           [r(3, 4), ints(4, 3, 2)]),
    OpCase("take_along_dim", lambda x, i: x.take_along_dim(i), lambda x, i: x.reshape(-1)[i.reshape(-1)],
           [r(3, 4), ints(12, 5)]),
    OpCase("take_along_dim", lambda x, i: wg.take_along_dim(x, i, 0),
           lambda x, i: np.take_along_axis(np.broadcast_to(x, (3, 2)), np.broadcast_to(i, (1, 2)), 0),
           [r(3, 1), ints(3, 1, 2)]),
    OpCase("index_add", lambda x, i, s: x.index_add(0, i, s, alpha=2.0),
           lambda x, i, s: np_scatter_add(x, 0, np.broadcast_to(i[:, None], s.shape), 2 * s), [r(3, 2), I3, r(3, 2)]),
    OpCase("masked_fill", lambda x, m: x.masked_fill(m, 0.5), lambda x, m: np.where(m, 0.5, x), [r(2, 3), MASK]),
    OpCase("masked_fill", lambda x, m, v: wg.masked_fill(x, m, v), lambda x, m, v: np.where(m, v, x),
           [r(4, 2, 3), MASK, r()]),
]

globals().update(op_tests(CASES))

SECOND_ORDER = [c for c in CASES if c.id in ("getitem_negstep-5x4", "getitem_two_tensors-3x4_2x1_3",
                                             "getitem_mask-2x3_2x3", "setitem_list-3x2_2", "gather-3x4_2x5",
                                             "scatter_add-3x4_2x3_3x3")]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=[c.id for c in SECOND_ORDER])
def test_second_order(case):
    gradgradcheck(case.fn, *case.inputs, what=case.id)


def test_setitem_is_in_place_for_autograd_and_versions():
    x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    v0 = y._version
    y[1] = x[0] * 10
    assert y._version == v0 + 1 and y.tolist() == [1.0, 10.0, 3.0]
    y.sum().backward()
    assert x.grad.tolist() == [11.0, 0.0, 1.0]
    with pytest.raises(RuntimeError, match="__setitem__: a view of a leaf Variable that requires grad"):
        x[0] = 1.0


def test_setitem_dtypes():
    b = wg.tensor([True, False, True])
    b[wg.tensor([0, 1])] = wg.tensor([False, True])
    assert b.tolist() == [False, True, True] and b.dtype is wg.bool
    i = wg.tensor([1, 2, 3])
    i[i > 1] = 2.7  # cast to the tensor's dtype, as PyTorch does
    assert i.tolist() == [1, 2, 2]
    x = wg.zeros(2, 2)
    x[:, 0] = wg.tensor([[5.0, 6.0]])  # leading size-1 dims of the value are dropped
    assert x.tolist() == [[5.0, 0.0], [6.0, 0.0]]


def test_setitem_is_exact_for_large_values():
    x = wg.tensor([1e8, 1.0])
    x[0] = 1.0
    assert x.tolist() == [1.0, 1.0]


def test_masked_fill_in_place():
    x = wg.tensor([[1.0, -2.0], [-3.0, 4.0]])
    assert x.masked_fill_(x < 0, 0.0) is x and x.tolist() == [[1.0, 0.0], [0.0, 4.0]] and x._version == 1


def test_boolean_scalar_index():
    x = wg.arange(3)
    assert x[True].shape == (1, 3) and x[False].shape == (0, 3) and x[wg.tensor(True)].tolist() == [[0, 1, 2]]


def test_against_torch():
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    i, j = np.array([[0], [2]]), np.array([1, 3, -1])
    cases = [
        lambda m: (0, slice(None), [1, 2]),              # an int is basic indexing in PyTorch (numpy differs)
        lambda m: ([0, 1], None, [1, 2]),
        lambda m: (None, [0, 1], 1),
        lambda m: (Ellipsis, m.tensor([0, -1])),
        lambda m: (m.tensor(i), slice(1, 3), m.tensor(j)),
        lambda m: (slice(None), m.tensor(i), m.tensor(j)),
        lambda m: (m.tensor(x[:, 0, 0] > 0), 2),
        lambda m: (m.tensor(x[:, :, 0] > 0),),
        lambda m: (m.tensor(1), [0, 0, 3]),
    ]
    for k, make in enumerate(cases):
        assert_close(wg.tensor(x)[make(wg)], torch.tensor(x)[make(torch)].numpy(), what=f"case {k}")
        wv, tv = wg.tensor(x), torch.tensor(x)
        wv[make(wg)] = -1.0
        tv[make(torch)] = -1.0
        assert_close(wv, tv.numpy(), what=f"set, case {k}")


@pytest.mark.parametrize("call, err, match", [
    (lambda: wg.zeros(3)[3], IndexError, "__getitem__: index 3 is out of range for dim 0 with size 3"),
    (lambda: wg.zeros(2, 3)[:, [0, -4]], IndexError, "__getitem__: index -4 is out of range for dim 1 with size 3"),
    (lambda: wg.zeros(2, 3)[0, 0, 0], IndexError, "__getitem__: too many indices for a tensor of dimension 2"),
    (lambda: wg.zeros(2, 3)[..., ...], IndexError, "__getitem__: an index can only have a single ellipsis"),
    (lambda: wg.zeros(2, 3)[wg.tensor([True, False, True])], IndexError, r"__getitem__: the shape of the mask"),
    (lambda: wg.zeros(2)[wg.tensor([0.0])], IndexError, "__getitem__: tensors used as indices must be long, int, byte or bool tensors, got float32"),
    (lambda: wg.zeros(2)["a"], IndexError, "__getitem__: only ints, slices"),
    (lambda: wg.zeros(2)[::0], ValueError, "__getitem__: slice step cannot be zero"),
    (lambda: wg.zeros(3, 2)[wg.tensor([0, 1]), wg.tensor([0, 1, 0])], IndexError, "__getitem__: shapes"),
    (lambda: wg.zeros(3, 4)[wg.tensor([0]), wg.tensor([4])], IndexError, "out of bounds"),
    (lambda: wg.zeros(3).__setitem__(slice(0, 2), wg.zeros(3)), RuntimeError, "__setitem__: shape mismatch"),
    (lambda: wg.zeros(2, 3).gather(1, wg.tensor([[0.0]])), TypeError, r"gather: index must be an integer tensor \(int64 or int32\), got float32"),
    (lambda: wg.zeros(2, 3).gather(2, wg.tensor([[0]])), IndexError, "gather: dim 2 is out of range"),
    (lambda: wg.zeros(2, 3).gather(1, wg.tensor([0])), ValueError, r"gather: index of shape \(1,\)"),
    (lambda: wg.zeros(2, 3).gather(1, wg.tensor([[3]])), IndexError, "Gather: index 3 is out of bounds for dim 1"),
    (lambda: wg.zeros(3).scatter_add(0, wg.tensor([0, 1]), wg.zeros(1)), ValueError, "scatter_add: index of shape"),
    (lambda: wg.zeros(3).scatter_add(0, wg.tensor([0]), wg.zeros(1, dtype=wg.float64)), TypeError,
     "scatter_add: src dtype float64"),
    (lambda: wg.zeros(3).index_select(0, wg.tensor([[0]])), ValueError, "index_select: index must be 1-d"),
    (lambda: wg.zeros(3).index_add(0, wg.tensor([0]), wg.zeros(2)), ValueError, "index_add: index"),
    (lambda: wg.zeros(3, 2).take_along_dim(wg.tensor([0]), 0), ValueError, "take_along_dim: input"),
    (lambda: wg.zeros(3).masked_fill(wg.tensor([1, 0, 1]), 0), TypeError, "masked_fill: mask must be a bool"),
    (lambda: wg.zeros(3).masked_fill(wg.tensor([[True]] * 2), 0), ValueError, r"masked_fill: mask of shape"),
])
def test_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()


@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_gradient_with_repeats_at_scale(backend, dim):
    """Past cpu's copy threshold the expanded index is a broadcast view, and ScatterAdd sums the rows by
    a sort and one reduceat (an embedding's gradient): every repeat counted, as np.add.at does."""
    x = r(40, 300) if dim == 0 else r(300, 40)
    index = ints(40, 2000)
    t = wg.tensor(x.astype(np.float32), requires_grad=True)
    dy = r(*((2000, 300) if dim == 0 else (300, 2000))).astype(np.float32)
    t.index_select(dim, wg.tensor(index)).backward(wg.tensor(dy))
    want = np.zeros_like(x)
    np.add.at(want, index if dim == 0 else (slice(None), index), dy.astype(np.float64))
    assert_close(t.grad.numpy(), want, rtol=1e-4, atol=1e-4)


def test_scatter_add_with_a_broadcast_index_narrower_than_the_input(backend):
    """A row index broadcast over fewer rows than the input has (on cpu a stride-0 view, the fast
    path) adds into those rows only, as torch.scatter_add."""
    torch = pytest.importorskip("torch")
    x, src = r(3, 5000).astype(np.float32), r(2, 5000).astype(np.float32)
    index = ints(5000, 1, 5000)
    got = wg.tensor(x).scatter_add(1, wg.tensor(index).expand(2, 5000), wg.tensor(src))
    want = torch.tensor(x).scatter_add(1, torch.tensor(index).expand(2, 5000), torch.tensor(src))
    assert_close(got, want.numpy(), rtol=1e-5, atol=1e-5)


def test_scatter_add_index_covering_some_rows(backend):
    """An index narrower than the output outside ``dim`` touches only the rows it covers (the cpu's
    broadcast-row fast path once applied a one-row index to every row)."""
    import torch
    base = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    src = np.array([[1.0, 2.0, 3.0]], np.float32)
    for index in ([[0, 0, 2]], [[1, 1, 1]]):
        ours = wg.tensor(base, device=backend).scatter_add(1, wg.tensor(index, device=backend), wg.tensor(src, device=backend))
        theirs = torch.tensor(base).scatter_add(1, torch.tensor(index), torch.tensor(src))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    expanded = wg.tensor([2, 0], device=backend)[:, None].expand(2, 3)       # the embedding gradient's form
    ours = wg.zeros(3, 3, device=backend).scatter_add(0, expanded, wg.ones(2, 3, device=backend))
    np.testing.assert_array_equal(ours.numpy(), [[1.0] * 3, [0.0] * 3, [1.0] * 3])


@pytest.mark.parametrize("dim", [0, 1])
def test_gather_with_an_expanded_row_index_at_scale(backend, dim):
    """index_select's expanded index (on cpu past the copy threshold a stride-0 view: the lookup takes
    whole rows at once) gathers what torch.gather does, over the full width and a narrower one, and
    still refuses an index out of range."""
    import torch
    x = (r(40, 300) if dim == 0 else r(300, 40)).astype(np.float32)
    index = ints(40, 2000)
    shape = (2000, 300) if dim == 0 else (300, 2000)
    column = (slice(None), None) if dim == 0 else (None, slice(None))
    for width in (shape[1 - dim], shape[1 - dim] // 2):
        full = list(shape)
        full[1 - dim] = width
        ours = wg.tensor(x).gather(dim, wg.tensor(index)[column].expand(*full))
        theirs = torch.tensor(x).gather(dim, torch.tensor(index)[column].expand(*full))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    bad = index.copy()
    bad[7] = 40
    with pytest.raises(IndexError, match="Gather: index 40 is out of bounds"):
        wg.tensor(x).gather(dim, wg.tensor(bad)[column].expand(*shape)).numpy()


def test_gather_and_scatter_add_with_an_empty_expanded_index(backend):
    """An expanded index with a zero-length dim (an empty tensor's lookup) takes and adds nothing."""
    import torch
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    for rows in (0, 2):
        index = np.zeros((rows, 1), np.int64)
        ours = wg.tensor(x[:rows]).gather(1, wg.tensor(index).expand(rows, 0))
        theirs = torch.tensor(x[:rows]).gather(1, torch.tensor(index).expand(rows, 0))
        assert ours.shape == tuple(theirs.shape)
        added = wg.tensor(x[:rows]).scatter_add(1, wg.tensor(index).expand(rows, 0), wg.zeros(rows, 0))
        np.testing.assert_array_equal(added.numpy(), x[:rows])
    assert wg.zeros(0, 4)[:, [0, 3]].shape == (0, 2)


def test_repeated_writes_give_every_value_its_places_gradient(backend):
    """As PyTorch's index_put and index_copy: the last write wins, and every written value (the
    overwritten ones too) gets the gradient of the place it was written to."""
    torch = pytest.importorskip("torch")
    weights = [5.0, 6.0, 7.0]
    for write in (lambda lib, y, i, v: y.__setitem__(i, v) or y, lambda lib, y, i, v: y.index_copy(0, i, v),
                  lambda lib, y, i, v: y.index_put((i,), v)):
        got = []
        for lib in (wg, torch):
            x = lib.zeros(3, requires_grad=True)
            v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = write(lib, x.clone(), lib.tensor([0, 0, 2]), v)
            (y * lib.tensor(weights)).sum().backward()
            got.append((y.tolist(), x.grad.tolist(), v.grad.tolist()))
        assert got[0] == got[1] == ([2.0, 0.0, 3.0], [0.0, 6.0, 0.0], [5.0, 5.0, 7.0])
