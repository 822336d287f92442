"""Counting, bucketing and scans (searchsorted, bucketize, isin, bincount, histc, histogram, unravel_index,
cummax/cummin, logcumsumexp, mode) against PyTorch on every backend: values, dtypes, named tuples,
errors; gradients by finite differences (float64, cpu) and against PyTorch."""
import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import gradcheck, gradgradcheck

rng = np.random.default_rng(3)


def same(got, want, exact=True):
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    if exact:
        np.testing.assert_array_equal(np.asarray(got.tolist()), want.numpy())
    else:
        np.testing.assert_allclose(np.asarray(got.tolist()), want.numpy(), rtol=1e-5, atol=1e-6)


def pair(values, dtype=None):
    values = np.asarray(values)
    if dtype is None:
        dtype = "float32" if values.dtype.kind == "f" else "int64"
    return wg.tensor(values.tolist(), dtype=getattr(wg, dtype)), torch.tensor(values.tolist(), dtype=getattr(torch, dtype))


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_matches_torch(backend, right):
    seq = np.sort(rng.integers(0, 20, 15)).astype(float)
    values = np.concatenate([rng.integers(-2, 22, 40).astype(float), [np.nan, 0.0, 19.0]]).reshape(-1, 1)
    (s, ts), (v, tv) = pair(seq), pair(values)
    same(wg.searchsorted(s, v, right=right), torch.searchsorted(ts, tv, right=right))
    same(wg.searchsorted(s, v, side="right" if right else "left", out_int32=True),
         torch.searchsorted(ts, tv, side="right" if right else "left", out_int32=True))
    same(wg.searchsorted(s, 3.5, right=right), torch.searchsorted(ts, 3.5, right=right))
    batched = np.sort(rng.normal(size=(3, 9)), axis=1)
    (b, tb), (bv, tbv) = pair(batched), pair(rng.normal(size=(3, 5)))
    same(wg.searchsorted(b, bv, right=right), torch.searchsorted(tb, tbv, right=right))
    same(wg.searchsorted(s, wg.tensor([], dtype=wg.float32)), torch.searchsorted(ts, torch.tensor([])))
    same(wg.searchsorted(wg.tensor([], dtype=wg.float32), v), torch.searchsorted(torch.tensor([]), tv))


def test_searchsorted_with_sorter_and_ints(backend):
    raw = rng.integers(0, 30, 12)
    (r, tr) = pair(raw)
    order = np.argsort(raw, kind="stable")
    (o, to), (v, tv) = pair(order), pair(rng.integers(-1, 32, 20))
    same(wg.searchsorted(r, v, sorter=o), torch.searchsorted(tr, tv, sorter=to))
    same(wg.searchsorted(r, v, sorter=o, right=True), torch.searchsorted(tr, tv, sorter=to, right=True))


def test_searchsorted_and_bucketize_errors(backend):
    s = wg.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        wg.searchsorted(s, wg.tensor([1]), side="left", right=True)
    with pytest.raises(RuntimeError, match="first N-1 dimensions"):
        wg.searchsorted(wg.ones(2, 3), wg.ones(3, 2))
    with pytest.raises(RuntimeError, match="must be 1 dimension"):
        wg.bucketize(wg.tensor([1]), wg.ones(2, 3))


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_matches_torch(backend, right):
    (x, tx), (b, tb) = pair(rng.integers(-1, 10, (3, 4))), pair([1, 3, 5, 7])
    same(wg.bucketize(x, b, right=right), torch.bucketize(tx, tb, right=right))
    same(wg.bucketize(5, b, right=right, out_int32=True), torch.bucketize(5, tb, right=right, out_int32=True))


def test_isin_matches_torch(backend):
    (a, ta), (b, tb) = pair(rng.integers(0, 10, (4, 5))), pair(rng.integers(0, 10, 6))
    for kwargs in ({}, {"invert": True}, {"assume_unique": True}):
        same(wg.isin(a, b, **kwargs), torch.isin(ta, tb, **kwargs))
    (f, tf), (g, tg) = pair([1.0, np.nan, 2.5, 3.0]), pair([np.nan, 1.0, 3.0])
    same(wg.isin(f, g), torch.isin(tf, tg))                       # NaN is in nothing
    same(wg.isin(a, wg.tensor([2.0, 5.5])), torch.isin(ta, torch.tensor([2.0, 5.5])))   # promoted
    same(wg.isin(2, b), torch.isin(2, tb))
    same(wg.isin(a, 3), torch.isin(ta, 3))
    same(wg.isin(a, wg.tensor([], dtype=wg.int64)), torch.isin(ta, torch.tensor([], dtype=torch.int64)))


def test_bincount_matches_torch(backend):
    (x, tx) = pair(rng.integers(0, 7, 30))
    same(wg.bincount(x), torch.bincount(tx))
    same(x.bincount(minlength=12), tx.bincount(minlength=12))
    (w, tw) = pair(rng.normal(size=30))
    same(wg.bincount(x, w), torch.bincount(tx, tw), exact=False)
    same(wg.bincount(wg.tensor([], dtype=wg.int64), minlength=3), torch.bincount(torch.tensor([], dtype=torch.long),
                                                                               minlength=3))
    with pytest.raises(RuntimeError, match="non-negative"):
        wg.bincount(wg.tensor([1, -1]))
    with pytest.raises(NotImplementedError):
        wg.bincount(wg.tensor([1.0]))
    with pytest.raises(RuntimeError, match="1-d"):
        wg.bincount(wg.tensor([[1]]))


def test_bincount_integer_weights_are_float64_on_cpu():
    x, w = wg.tensor([1, 1, 3], backend="cpu"), wg.tensor([1, 2, 3], backend="cpu")
    same(wg.bincount(x, w), torch.bincount(torch.tensor([1, 1, 3]), torch.tensor([1, 2, 3])))


@pytest.mark.parametrize("bins", [3, 8, 13, 100])
def test_histc_matches_torch(backend, bins):
    values = rng.normal(size=500)
    values[:60] = np.round(values[:60] * 4) / 4                      # values on the edges
    (x, tx) = pair(values)
    same(wg.histc(x, bins=bins), torch.histc(tx, bins=bins))
    same(x.histc(bins, -1, 1), tx.histc(bins, -1, 1))
    same(wg.histc(wg.tensor([2.0, 2.0]), bins=3), torch.histc(torch.tensor([2.0, 2.0]), bins=3))   # min == max


def test_histc_errors(backend):
    with pytest.raises(NotImplementedError):
        wg.histc(wg.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="not finite"):
        wg.histc(wg.tensor([1.0, float("inf")]))
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        wg.histc(wg.tensor([1.0]), bins=2, min=3, max=1)


def test_histogram_matches_torch(backend):
    (x, tx) = pair(rng.normal(size=300))
    got, want = wg.histogram(x, 7), torch.histogram(tx, 7)
    assert type(got).__name__ == "histogram" and got._fields == ("hist", "bin_edges")
    same(got.bin_edges, want.bin_edges, exact=False)                # edges within an ulp of PyTorch's linspace
    assert np.abs(np.asarray(got.hist.tolist()) - want.hist.numpy()).sum() <= 2   # an ulp may move an edge value
    edges = wg.tensor([-2.0, -0.5, 0.0, 0.7, 3.0])
    same(wg.histogram(x, edges).hist, torch.histogram(tx, torch.tensor(edges.tolist())).hist)
    got = x.histogram(5, range=(-1.0, 1.5), weight=x.abs(), density=True)
    want = tx.histogram(5, range=(-1.0, 1.5), weight=tx.abs(), density=True)
    same(got.hist, want.hist, exact=False)


def test_unravel_index_matches_torch(backend):
    (i, ti) = pair([5, 0, 3, -1, 6, 4])
    for got, want in zip(wg.unravel_index(i, (2, 3)), torch.unravel_index(ti, (2, 3))):
        same(got, want)
    assert [t.tolist() for t in wg.unravel_index(wg.tensor(4), (2, 3))] == [1, 1]
    with pytest.raises(TypeError, match="integer"):
        wg.unravel_index(wg.tensor(1.0), (2, 3))
    with pytest.raises(ValueError, match="negative"):
        wg.unravel_index(wg.tensor(1), (2, -3))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_cummin_match_torch(backend, op):
    values = rng.integers(0, 4, (3, 11)).astype(float)
    values[0, 3] = values[1, 5] = np.nan
    (x, tx) = pair(values)
    for d in (0, 1, -1):
        got, want = getattr(wg, op)(x, d), getattr(torch, op)(tx, d)
        assert type(got).__name__ == op and got._fields == ("values", "indices")
        same(got.values, want.values)
        same(got.indices, want.indices)
    (n, tn) = pair(rng.integers(-5, 5, 17))
    same(getattr(n, op)(0).values, getattr(tn, op)(0).values)
    same(getattr(n, op)(0).indices, getattr(tn, op)(0).indices)
    same(getattr(wg, op)(wg.tensor(2.0), 0).indices, getattr(torch, op)(torch.tensor(2.0), 0).indices)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_cummin_gradient_as_torch(backend, op):
    values = rng.integers(0, 4, (3, 6)).astype(float)
    got = wg.tensor(values.tolist(), requires_grad=True)
    want = torch.tensor(values.tolist(), requires_grad=True)
    weights = rng.normal(size=(3, 6))
    (getattr(got, op)(1).values * wg.tensor(weights.tolist())).sum().backward()
    (getattr(want, op)(1).values * torch.tensor(weights.tolist())).sum().backward()
    np.testing.assert_allclose(np.asarray(got.grad.tolist()), want.grad.numpy(), rtol=1e-6)


def test_scan_gradients_by_finite_differences():
    x = rng.permutation(24).reshape(4, 6) / 4.0                      # no ties
    gradcheck(lambda t: t.cummax(1).values, x, what="cummax")
    gradcheck(lambda t: t.cummin(0).values, x, what="cummin")
    gradcheck(lambda t: t.logcumsumexp(1), rng.normal(size=(3, 5)), what="logcumsumexp")
    gradgradcheck(lambda t: t.logcumsumexp(0), rng.normal(size=(4, 2)))


def test_mode_gradient_as_torch(backend):
    """mode's value is picked from equal ones (finite differences break the tie): PyTorch's rule, dy at the index."""
    values = [[1.0, 2.0, 1.0], [3.0, 3.0, 0.5]]
    got, want = wg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    (got.mode(1).values * wg.tensor([2.0, -3.0])).sum().backward()
    (want.mode(1).values * torch.tensor([2.0, -3.0])).sum().backward()
    assert got.grad.tolist() == want.grad.tolist()


def test_logcumsumexp_matches_torch(backend):
    (x, tx) = pair(rng.normal(size=(3, 9)) * 5)
    for d in (0, 1):
        same(wg.logcumsumexp(x, d), torch.logcumsumexp(tx, d), exact=False)
    (big, tbig) = pair([0.0, 0.0, 1000.0, -np.inf])
    same(big.logcumsumexp(0), tbig.logcumsumexp(0), exact=False)


@pytest.mark.parametrize("keepdim", [False, True])
def test_mode_matches_torch(backend, keepdim):
    (x, tx) = pair(rng.integers(0, 4, (4, 9)))
    for d in (0, 1, -1):
        got, want = wg.mode(x, d, keepdim), torch.mode(tx, d, keepdim)
        assert type(got).__name__ == "mode"
        same(got.values, want.values)
        same(got.indices, want.indices)
    (f, tf) = pair([2.0, np.nan, np.nan, 1.0])
    same(f.mode().values, tf.mode().values)
    same(f.mode().indices, tf.mode().indices)
