"""In-place view ops (``t_``, ``unsqueeze_``, ``resize_`` ...), strided views (``as_strided``, ``unfold``),
``fill_diagonal_``, and the reductions into places (``scatter_reduce``, ``index_reduce``, ``put``): each
against torch on every backend (values, shapes, strides, what shares storage), with finite-difference
gradients and backend agreement from the OpInfo table."""
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
R = np.random.default_rng(0)


def both(fn, backend, data=X):
    return fn(torch.tensor(data)), fn(wg.tensor(data, device=backend))


def same(t, w):
    assert tuple(w.shape) == tuple(t.shape)
    np.testing.assert_allclose(np.asarray(w.tolist(), dtype=np.float64), t.detach().double().numpy(), rtol=1e-6,
                               atol=1e-6)


IN_PLACE_VIEWS = {
    "t_": lambda t: t[0].t_(),
    "transpose_": lambda t: t.transpose_(0, 2),
    "swapaxes_": lambda t: t.swapaxes_(1, 2),
    "swapdims_": lambda t: t.swapdims_(0, 1),
    "unsqueeze_": lambda t: t.unsqueeze_(1),
    "squeeze_": lambda t: t[:1].squeeze_(0),
    "squeeze_all": lambda t: t[:1, :, :1].squeeze_(),
    "as_strided_": lambda t: t.as_strided_((3, 2), (1, 4), 2),
    "resize_same_count": lambda t: t.resize_(4, 6),
    "resize_fewer": lambda t: t.resize_(5),
    "resize_view": lambda t: t[1].resize_(2, 2),
}


@pytest.mark.parametrize("name", IN_PLACE_VIEWS)
def test_in_place_views_as_torch(name, backend):
    """The tensor becomes the view (shape, strides, offset, values) and still shares its storage."""
    def run(t):
        v = t.view(24)                      # a view made before: it must see writes through the changed tensor
        y = IN_PLACE_VIEWS[name](t)
        meta = (tuple(y.shape), y.stride(), y.storage_offset(), y.is_contiguous())
        y.mul_(-1)
        return y, v, meta
    (ty, tv, tm), (wy, wv, wm) = both(run, backend)
    assert wm == tm
    same(ty, wy)
    same(tv, wv)


def test_in_place_view_returns_self_and_keeps_the_graph(backend):
    for lib in (torch, wg):
        x = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        y = x * 2
        assert y.t_() is y
        (y * lib.tensor([[1.0], [2.0], [3.0]])).sum().backward()
        assert x.grad.tolist() == [[2.0, 4.0, 6.0]], lib


def test_in_place_view_counts_as_a_change(backend):
    """As PyTorch: a tensor saved for backward, then changed by an in-place view op, is refused."""
    for lib in (torch, wg):
        x = lib.ones(2, 3, requires_grad=True)
        y = x * 2
        version = y._version
        z = y.sin()
        y.t_()
        assert y._version == version + 1
        with pytest.raises(RuntimeError, match="modified by an in-?place op"):
            z.sum().backward()


def test_in_place_view_of_a_leaf_as_torch(backend):
    x = wg.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="t_: a leaf Variable"):
        x.t_()
    assert x.shape == (2, 3)
    with wg.no_grad():
        x.t_()
    assert x.is_leaf and x.requires_grad and x.stride() == (1, 3)
    (x * wg.tensor([[1.0, 2.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0]] * 3


def test_resize_as_torch(backend):
    def run(t):
        t.resize_(2, 2)
        first = t.tolist()
        t.resize_(6)                        # the storage kept the elements: they come back
        grown = t.resize_(8)[:6]            # a tensor alone grows (PyTorch's new elements are uninitialised)
        return first, grown.tolist()
    assert both(run, backend, np.arange(6.0, dtype=np.float32)) == (
        ([[0.0, 1.0], [2.0, 3.0]], list(np.arange(6.0))),) * 2
    w = wg.arange(6.0, device=backend)
    assert w.resize_as_(wg.zeros(3, 2)).shape == (3, 2)
    with pytest.raises(RuntimeError, match="require grad"):
        wg.ones(2, requires_grad=True).resize_(3)
    with pytest.raises(RuntimeError, match=r"resize_: growing .* storage that the tensor holds alone"):
        wg.arange(6.0, device=backend)[:2].resize_(9)


def test_deprecated_resize_as_torch(backend):
    for lib in (torch, wg):
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            assert lib.arange(6).resize(3, 2).tolist() == [[0, 1], [2, 3], [4, 5]]
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            assert lib.arange(4).resize_as(lib.zeros(2, 2)).shape == (2, 2)
        with warnings.catch_warnings(), pytest.raises(RuntimeError, match="autograd's resize"):
            warnings.simplefilter("ignore")
            lib.arange(6).resize(4)


STRIDED = {
    "as_strided": lambda t: t.as_strided((3, 3), (4, 1), 1),
    "as_strided_repeat": lambda t: t.as_strided((2, 3), (0, 2)),
    "as_strided_of_view": lambda t: torch_or_wg(t).as_strided(t[1], (2, 2), (1, 3)),
    "unfold": lambda t: t.unfold(2, 2, 1),
    "unfold_step": lambda t: t.unfold(1, 2, 2),
    "unfold_of_view": lambda t: t.transpose(0, 2).unfold(0, 3, 1),
    "unfold_0d": lambda t: t[0, 0, 0].unfold(0, 1, 1),
}


def torch_or_wg(t):
    return torch if isinstance(t, torch.Tensor) else wg


@pytest.mark.parametrize("name", STRIDED)
def test_strided_views_as_torch(name, backend):
    def run(t):
        y = STRIDED[name](t)
        meta = (tuple(y.shape), y.stride(), y.storage_offset())
        values = y.tolist()
        t.add_(100)                       # a write to the base shows through the view
        return y, meta, values
    (ty, tm, tv), (wy, wm, wv) = both(run, backend)
    assert wm == tm and wv == tv
    same(ty, wy)


def test_strided_view_errors(backend):
    x = wg.arange(6.0, device=backend)
    with pytest.raises(RuntimeError, match="as_strided: .*out of bounds for the storage of 6"):
        x.as_strided((2, 3), (3, 1), 1)
    with pytest.raises(RuntimeError, match="negative strides"):
        x.as_strided((2,), (-1,), 3)
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 6 but size is 7"):
        x.unfold(0, 7, 1)
    with pytest.raises(RuntimeError, match="step is 0"):
        x.unfold(0, 2, 0)


def test_writes_through_strided_views(backend):
    def run(t):
        t.unfold(0, 2, 2)[1].fill_(-1)
        t.as_strided((2,), (3,), 0).mul_(10)
        return t
    same(*both(run, backend, np.arange(6.0, dtype=np.float32)))


FILL_DIAGONAL = {
    "square": ((3, 3), {}), "wide": ((2, 4), {}), "tall": ((5, 2), {}), "tall_wrap": ((7, 3), {"wrap": True}),
    "cube": ((3, 3, 3), {}),
}


@pytest.mark.parametrize("name", FILL_DIAGONAL)
def test_fill_diagonal_as_torch(name, backend):
    shape, kw = FILL_DIAGONAL[name]
    t, w = both(lambda x: x.fill_diagonal_(-1.5, **kw), backend, np.zeros(shape, np.float32))
    same(t, w)
    with pytest.raises(RuntimeError, match="fill_diagonal_"):
        wg.zeros(2, 3, 4, device=backend).fill_diagonal_(1)


REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
INDEX = np.array([[0, 1, 0, 2], [2, 0, 0, 1]])
SELF = np.array([[1.0, -2.0, 3.0, 0.5], [2.0, 2.0, -1.0, 4.0], [0.0, 1.0, 1.0, -3.0]], np.float32)
SRC = np.array([[2.0, 3.0, 0.5, 2.0, 9.0], [-1.0, 2.0, 3.0, -3.0, 9.0], [7.0, 7.0, 7.0, 7.0, 7.0]], np.float32)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_as_torch(reduce, include_self, backend):
    """Values and gradients (ties included: 2.0 meets 2.0 and 3.0 meets 3.0) against torch."""
    outs = {}
    for lib, dev in ((torch, "cpu"), (wg, backend)):
        x = lib.tensor(SELF, requires_grad=True, device=dev)
        s = lib.tensor(SRC[:2, :4], requires_grad=True, device=dev)   # (torch's backward refuses a larger src)
        y = x.scatter_reduce(0, lib.tensor(INDEX, device=dev), s, reduce, include_self=include_self)
        (y * lib.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4), device=dev)).sum().backward()
        outs[lib] = [np.asarray(a.tolist()) for a in (y, x.grad, s.grad)]
        outs[lib].append(np.asarray(x.scatter_reduce(0, lib.tensor(INDEX, device=dev), lib.tensor(SRC, device=dev),
                                                     reduce, include_self=include_self).tolist()))
    for t, w in zip(outs[torch], outs[wg]):
        np.testing.assert_allclose(w, t, rtol=1e-5, atol=1e-5)


def test_scatter_reduce_integers_and_nan_as_torch(backend):
    for reduce in REDUCTIONS:
        t, w = both(lambda x: x.scatter_reduce(0, torch_or_wg(x).tensor([0, 0, 1]),
                                               torch_or_wg(x).tensor([-1, -2, 5]), reduce, include_self=False),
                    backend, np.array([3, 4], np.int64))
        assert w.tolist() == t.tolist() and w.dtype == wg.int64, reduce
    for reduce in ("amax", "amin"):
        t, w = both(lambda x: x.scatter_reduce(0, torch_or_wg(x).tensor([0, 0, 1]),
                                               torch_or_wg(x).tensor([float("nan"), 1.0, 2.0]), reduce),
                    backend, np.array([0.0, 0.0], np.float32))
        assert np.array_equal(np.asarray(w.tolist()), t.numpy(), equal_nan=True), reduce


def test_scatter_reduce_in_place_and_errors(backend):
    x = wg.ones(3, device=backend)
    assert x.scatter_reduce_(0, wg.tensor([2, 2]), wg.tensor([2.0, 5.0]), "sum") is x
    assert x.tolist() == [1.0, 1.0, 8.0]
    with pytest.raises(RuntimeError, match="reduce argument must be one of"):
        x.scatter_reduce(0, wg.tensor([0]), wg.tensor([1.0]), "max")
    with pytest.raises(RuntimeError, match="index_reduce: reduce argument must be one of 'prod'"):
        x.index_reduce(0, wg.tensor([0]), wg.tensor([1.0]), "sum")
    with pytest.raises(RuntimeError, match="scatter_reduce: index"):
        x.scatter_reduce(0, wg.tensor([[0]]), wg.tensor([1.0]), "sum")


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS[1:])
def test_index_reduce_as_torch(reduce, include_self, backend):
    def run(lib, dev):
        x = lib.tensor(SELF, requires_grad=True, device=dev)
        s = lib.tensor(SRC[:, :4].T.copy(), requires_grad=True, device=dev)
        y = x.index_reduce(1, lib.tensor([3, 0, 3, 1], device=dev), s.T, reduce, include_self=include_self)
        y.pow(2).sum().backward()
        return [np.asarray(a.tolist()) for a in (y, x.grad, s.grad)]
    for t, w in zip(run(torch, "cpu"), run(wg, backend)):
        np.testing.assert_allclose(w, t, rtol=1e-5, atol=1e-5)
    x = wg.zeros(2, device=backend)
    assert x.index_reduce_(0, wg.tensor([1, 1]), wg.tensor([2.0, 3.0]), "prod", include_self=False) is x
    assert x.tolist() == [0.0, 6.0]


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_as_torch(accumulate, backend):
    def run(x):
        lib = torch_or_wg(x)
        y = x.put(lib.tensor([5, -1, 0, 5]), lib.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=accumulate) \
            if accumulate else x.put(lib.tensor([5, -1, 0]), lib.tensor([1.0, 2.0, 3.0]))
        x.put_(lib.tensor([1]), lib.tensor([-7.0]), accumulate)
        return y, x
    (ty, tx), (wy, wx) = both(run, backend, np.zeros((2, 3), np.float32))
    same(ty, wy)
    same(tx, wx)
    assert wg.put(wg.zeros(2), wg.tensor([1]), wg.tensor([3.0])).tolist() == [0.0, 3.0]
    with pytest.raises(RuntimeError, match="same number of elements"):
        wg.zeros(3, device=backend).put(wg.tensor([0, 1]), wg.tensor([1.0]))


def test_tril_triu_in_place(backend):
    for name in ("tril_", "triu_"):
        t, w = both(lambda x: getattr(x, name)(1), backend, np.ones((3, 4), np.float32))
        same(t, w)


ARG = R.standard_normal((3, 4))
CASES = [
    OpCase("as_strided", lambda x: x.as_strided((2, 3), (4, 2), 1), None, [ARG]),
    OpCase("as_strided_repeat", lambda x: x.as_strided((3, 2), (0, 1), 5), None, [ARG]),
    OpCase("unfold", lambda x: x.unfold(1, 2, 1), None, [ARG]),
    OpCase("unfold_step", lambda x: x.unfold(0, 2, 2), None, [ARG]),
    OpCase("t_", lambda x: (x * 1).t_(), None, [ARG]),
    OpCase("unsqueeze_", lambda x: (x * 1).unsqueeze_(0), None, [ARG]),
    OpCase("put", lambda x, s: x.put(wg.tensor([0, 5, -1], device=x.device), s), None, [ARG, R.standard_normal(3)]),
    OpCase("put_acc", lambda x, s: x.put(wg.tensor([0, 5, 0], device=x.device), s, accumulate=True), None,
           [ARG, R.standard_normal(3)]),
    OpCase("fill_diagonal_", lambda x: (x * 1).fill_diagonal_(2.0), None, [ARG]),
    *[OpCase(f"scatter_reduce_{r}_{s}", lambda x, src, r=r, s=s: x.scatter_reduce(
        1, wg.tensor([[0, 1, 0], [3, 3, 3], [2, 0, 1]], device=x.device), src, r, include_self=s), None,
        [ARG, R.standard_normal((3, 3))]) for r in REDUCTIONS for s in (True, False)],
    *[OpCase(f"index_reduce_{r}", lambda x, src, r=r: x.index_reduce(0, wg.tensor([2, 0, 2], device=x.device),
                                                                     src, r), None,
             [ARG, R.standard_normal((3, 4))]) for r in REDUCTIONS[1:]],
    *[OpCase(f"segment_reduce_{r}", lambda x, r=r: wg.segment_reduce(x, r, lengths=wg.tensor([1, 2, 0], device=x.device),
                                                                    axis=0, initial=0.5), None, [ARG])
      for r in ("sum", "prod", "mean", "max", "min")],
]

globals().update(op_tests(CASES))


SEGMENT_DATA = np.array([[1.0, 2.0], [2.0, -1.0], [3.0, 0.5], [3.0, 4.0], [-2.0, 5.0]], np.float32)


@pytest.mark.parametrize("initial", [None, 1.5])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "max", "min"])
def test_segment_reduce_as_torch(reduce, initial, backend):
    """Values and gradients (ties in 'max'/'min': 3.0 and 3.0 share a segment) against torch."""
    results = []
    for lib, dev in ((torch, "cpu"), (wg, backend)):
        x = lib.tensor(SEGMENT_DATA, device=dev, requires_grad=True)
        y = lib.segment_reduce(x, reduce, lengths=lib.tensor([2, 0, 3], device=dev), initial=initial)
        finite = lib.where(y.isfinite(), y, lib.zeros((), device=dev))
        (finite * lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=dev)).sum().backward()
        results.append((np.asarray(y.tolist()), np.asarray(x.grad.tolist())))
    for w, t in zip(results[1], results[0]):
        np.testing.assert_allclose(w, t, rtol=1e-5, atol=1e-6)


def test_segment_reduce_forms_and_errors(backend):
    for lib in (torch, wg):
        data = lib.arange(10.0).view(2, 5)
        assert lib.segment_reduce(data, "sum", lengths=lib.tensor([[2, 3], [1, 4]]), axis=1).tolist() == \
            [[1.0, 9.0], [5.0, 30.0]]
        assert lib.segment_reduce(data.t(), "max", offsets=lib.tensor([0, 2, 2, 5])).tolist()[0] == [1.0, 6.0]
        with pytest.raises(RuntimeError, match="sum to data.size"):
            lib.segment_reduce(data[0], "sum", lengths=lib.tensor([2, 2]))
        with pytest.raises(RuntimeError, match="indices based reduction"):
            lib.segment_reduce(data[0], "sum", indices=lib.tensor([0, 0, 1, 1, 1]))
