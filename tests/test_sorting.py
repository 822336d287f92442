"""Sorting: sort, argsort, msort, topk, kthvalue, median, nanmedian, quantile, nanquantile, against PyTorch
on every backend (values, indices, NaN placement, ties, dtypes, errors), with finite-difference gradients."""
import math

import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, assert_close, gradcheck, gradgradcheck, op_tests
from backends_under_test import BACKENDS

K = wg.kernel_names
rng = np.random.default_rng(0)
NAN = float("nan")


def distinct(*shape):
    """Values with no ties (sorting is differentiable there), well separated for finite differences."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.37 - n * 0.1).reshape(shape)


def torch_ref(fn):
    """A reference calling PyTorch's ``fn`` on the inputs; a named tuple gives its fields."""
    def ref(*arrays):
        out = fn(*[torch.from_numpy(np.array(a)) for a in arrays])   # (ascontiguousarray makes 0-d 1-d)
        return tuple(t.numpy() for t in out) if isinstance(out, tuple) else out.numpy()
    return ref


CASES = [
    # sort: every dim of a 3-d tensor, both directions; the GPU's paths: counting (<= 64), one block (<= 512),
    # blocks and merge steps (> 512), along the last axis and across one
    OpCase("sort", lambda x: x.sort(), torch_ref(torch.sort), [distinct(5)]),
    OpCase("sort", lambda x: x.sort(0), torch_ref(lambda x: torch.sort(x, 0)), [distinct(2, 3, 4)], id="sort-3d-dim0"),
    OpCase("sort", lambda x: x.sort(1, descending=True), torch_ref(lambda x: torch.sort(x, 1, descending=True)),
           [distinct(2, 3, 4)], id="sort-3d-dim1-descending"),
    OpCase("sort", lambda x: wg.sort(x, -1), torch_ref(lambda x: torch.sort(x, -1)), [distinct(2, 3, 4)],
           id="sort-3d-dim-1"),
    OpCase("sort", lambda x: x.sort(), torch_ref(torch.sort), [np.array(1.5)], id="sort-scalar"),
    OpCase("sort", lambda x: x.sort(0), torch_ref(lambda x: torch.sort(x, 0)), [np.zeros((0, 3))], grad=False,
           id="sort-empty"),
    OpCase("sort", lambda x: x.sort(1, descending=True), torch_ref(lambda x: torch.sort(x, 1, descending=True)),
           [distinct(3, 7)], id="sort-3x7"),
    OpCase("sort", lambda x: x.sort(), torch_ref(torch.sort), [distinct(4, 65)], grad=False, id="sort-4x65"),
    OpCase("sort", lambda x: x.sort(descending=True), torch_ref(lambda x: torch.sort(x, descending=True)),
           [distinct(3, 301)], grad=False, id="sort-3x301-descending"),
    OpCase("sort", lambda x: x.sort(), torch_ref(torch.sort), [distinct(2, 1500)], grad=False, id="sort-2x1500"),
    OpCase("sort", lambda x: x.sort(0, descending=True), torch_ref(lambda x: torch.sort(x, 0, descending=True)),
           [distinct(600, 3)], grad=False, id="sort-600x3-dim0"),
    OpCase("argsort", lambda x: x.argsort(1), torch_ref(lambda x: torch.argsort(x, 1)), [distinct(3, 5)], grad=False),
    OpCase("msort", lambda x: wg.msort(x), torch_ref(torch.msort), [distinct(4, 3)]),
    # topk
    OpCase("topk", lambda x: x.topk(2), torch_ref(lambda x: torch.topk(x, 2)), [distinct(3, 5)]),
    OpCase("topk", lambda x: wg.topk(x, 3, dim=0, largest=False), torch_ref(lambda x: torch.topk(x, 3, 0, False)),
           [distinct(4, 2, 3)], id="topk-smallest-dim0"),
    OpCase("topk", lambda x: x.topk(5, 1), torch_ref(lambda x: torch.topk(x, 5, 1)), [distinct(2, 5, 3)],
           id="topk-all"),
    OpCase("topk", lambda x: x.topk(0), torch_ref(lambda x: torch.topk(x, 0)), [distinct(3, 4)], grad=False,
           id="topk-none"),
    OpCase("topk", lambda x: x.topk(1), torch_ref(lambda x: torch.topk(x, 1)), [np.array(2.5)], id="topk-scalar"),
    OpCase("topk", lambda x: x.topk(7), torch_ref(lambda x: torch.topk(x, 7)), [distinct(3, 700)], grad=False,
           id="topk-3x700"),
    # kthvalue
    OpCase("kthvalue", lambda x: x.kthvalue(2), torch_ref(lambda x: torch.kthvalue(x, 2)), [distinct(3, 5)]),
    OpCase("kthvalue", lambda x: wg.kthvalue(x, 3, 0, keepdim=True),
           torch_ref(lambda x: torch.kthvalue(x, 3, 0, keepdim=True)), [distinct(4, 2, 3)], id="kthvalue-dim0-keepdim"),
    OpCase("kthvalue", lambda x: x.kthvalue(1), torch_ref(lambda x: torch.kthvalue(x, 1)), [np.array(2.5)],
           id="kthvalue-scalar"),
    # median, nanmedian
    OpCase("median", lambda x: x.median(), torch_ref(torch.median), [distinct(3, 4)], second_order=True),
    OpCase("median", lambda x: x.median(1), torch_ref(lambda x: torch.median(x, 1)), [distinct(3, 5)],
           id="median-dim"),
    OpCase("median", lambda x: wg.median(x, 0, True), torch_ref(lambda x: torch.median(x, 0, True)),
           [distinct(4, 2, 3)], id="median-dim0-keepdim"),
    OpCase("median", lambda x: x.median(0), torch_ref(lambda x: torch.median(x, 0)), [np.array(2.5)],
           id="median-scalar-dim"),
    OpCase("nanmedian", lambda x: x.nanmedian(-1), torch_ref(lambda x: torch.nanmedian(x, -1)), [distinct(3, 6)]),
    OpCase("nanmedian", lambda x: x.nanmedian(), torch_ref(torch.nanmedian), [distinct(7)], id="nanmedian-all"),
    # quantile, nanquantile (the input and q are differentiable)
    OpCase("quantile", lambda x: x.quantile(0.3), torch_ref(lambda x: torch.quantile(x, 0.3)), [distinct(3, 4)],
           second_order=True),
    OpCase("quantile", lambda x, q: wg.quantile(x, q, dim=1, keepdim=True),
           torch_ref(lambda x, q: torch.quantile(x, q, dim=1, keepdim=True)),
           [distinct(3, 5), np.array([0.1, 0.55, 0.8])], id="quantile-q-dim-keepdim"),
    OpCase("quantile", lambda x, q: x.quantile(q, 0), torch_ref(lambda x, q: torch.quantile(x, q, 0)),
           [distinct(4, 2, 3), np.array([0.3, 0.9])], id="quantile-q-3d-dim0"),
    OpCase("quantile", lambda x: x.quantile(0.6, interpolation="midpoint"),
           torch_ref(lambda x: torch.quantile(x, 0.6, interpolation="midpoint")), [distinct(6)],
           id="quantile-midpoint"),
    OpCase("quantile", lambda x: x.quantile(0.6, 1, interpolation="nearest"),
           torch_ref(lambda x: torch.quantile(x, 0.6, 1, interpolation="nearest")), [distinct(2, 6)],
           id="quantile-nearest"),
    OpCase("nanquantile", lambda x, q: x.nanquantile(q, -1), torch_ref(lambda x, q: torch.nanquantile(x, q, -1)),
           [distinct(3, 5), np.array([0.3, 0.7])]),   # ranks 1.2 and 2.8: no kink in q
]

globals().update(op_tests(CASES))


# ---------------------------------------------------------------- results, as PyTorch's

def torch_of(t):
    return torch.from_numpy(np.asarray(t.numpy()))


def assert_same(got, want, what=""):
    """Exactly PyTorch's values (NaN where it has NaN) and dtype kind."""
    g, w = np.asarray(got.numpy()), want.numpy()
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    assert g.dtype.kind == w.dtype.kind, f"{what}: dtype {got.dtype} vs torch's {want.dtype}"
    assert np.array_equal(g, w, equal_nan=g.dtype.kind == "f"), f"{what}: {g} != {w}"


def assert_result(got, want, what=""):
    assert type(got).__name__ == type(want).__name__.split(".")[-1], what
    assert_same(got.values, want.values, f"{what} values")
    assert_same(got.indices, want.indices, f"{what} indices")


WITH_NAN = [[3.0, NAN, 1.0, -0.0, 0.0, -NAN, 2.0, 1.0, -math.inf, math.inf],   # -NAN: the sign bit set
            [NAN, 5.0, 5.0, -1.0, NAN, 0.0, -0.0, 2.0, 2.0, 2.0]]


@pytest.mark.parametrize("descending", [False, True])
def test_sort_places_nan_and_keeps_ties_in_order(backend, descending):
    x = wg.tensor(WITH_NAN)
    want = torch.sort(torch.tensor(WITH_NAN), descending=descending, stable=True)
    assert_result(x.sort(descending=descending), want, f"sort descending={descending}")
    assert_result(x.sort(descending=descending, stable=True), want, "sort stable=True")
    assert_same(x.argsort(descending=descending), want.indices, "argsort")


def test_results_are_named_tuples(backend):
    x = wg.tensor([[4.0, 1.0, 3.0], [0.0, 2.0, 5.0]])
    for result, name in [(x.sort(), "sort"), (x.topk(2), "topk"), (x.kthvalue(1), "kthvalue"),
                         (x.median(1), "median"), (x.nanmedian(1), "nanmedian")]:
        assert type(result).__name__ == name and result._fields == ("values", "indices")
        v, i = result
        assert v is result.values is result[0] and i is result.indices is result[1]
        assert i.dtype is wg.long and i.dtype.kind == "i" and v.dtype is wg.float32


def test_results_print_as_torch_return_types(backend):
    """``webgrad.return_types.sort(\nvalues=...,\nindices=...)``: PyTorch's text, with webgrad's module name."""
    data = [[4.0, 1.0, 3.0], [0.0, 2.0, 5.0]]
    x, t = wg.tensor(data), torch.tensor(data)
    for op, args in [("sort", ()), ("topk", (2,)), ("kthvalue", (1,)), ("median", (1,)), ("nanmedian", (1,)),
                     ("max", (1,)), ("min", (0,)), ("aminmax", ())]:
        ours, theirs = getattr(wg, op)(x, *args), getattr(torch, op)(t, *args)
        device = "" if backend == "cpu" else f", device='{backend}'"     # as torch's tensors print on cuda
        assert repr(ours).replace(device, "") == repr(theirs).replace("torch.", "webgrad."), op
        assert type(ours).__module__ == "webgrad.return_types" and getattr(wg.return_types, op) is type(ours)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_integers_and_bools(backend, dtype, descending):
    data = torch.from_numpy(rng.integers(-3, 4, (3, 40))).to(dtype)
    got = wg.tensor(data.numpy()).sort(descending=descending)
    assert got.values.dtype.name == str(dtype).split(".")[1]
    assert_result(got, torch.sort(data, descending=descending, stable=True), f"sort {dtype}")


@pytest.mark.parametrize("n", [64, 65, 512, 513])
def test_sort_at_the_gpu_path_boundaries(backend, n):
    data = torch.from_numpy(np.round(rng.standard_normal((3, n)) * 4).astype(np.float32))   # many ties
    data[1, ::7] = NAN
    for descending in (False, True):
        assert_result(wg.tensor(data.numpy()).sort(descending=descending),
                      torch.sort(data, descending=descending, stable=True), f"n={n} descending={descending}")


def test_sort_a_row_longer_than_a_shader_loop_may_run(backend):
    """70,000 elements in a row (> lavapipe's 65,535 loop trips): on the GPU, many merge dispatches."""
    data = torch.from_numpy(np.round(rng.standard_normal((2, 70_000)) * 100).astype(np.float32))
    data[0, ::1000] = NAN
    for descending in (False, True):
        assert_result(wg.tensor(data.numpy()).sort(descending=descending),
                      torch.sort(data, descending=descending, stable=True), f"descending={descending}")


def test_sort_gradient_on_a_long_row_agrees_with_cpu(backend):
    data = distinct(1, 3000).astype(np.float32)
    dy = rng.standard_normal((1, 3000)).astype(np.float32)
    x = wg.tensor(data, requires_grad=True)
    x.sort(descending=True).values.backward(wg.tensor(dy))
    order = np.argsort(-data, axis=1, kind="stable")
    want = np.zeros_like(dy)
    np.put_along_axis(want, order, dy, axis=1)
    assert_close(x.grad, want, 0, 0, "gradient of a sort")


def test_sort_gradient_with_ties_goes_where_each_value_came_from(backend):
    x = wg.tensor([1.0, 5.0, 1.0, 3.0], requires_grad=True)
    x.sort().values.backward(wg.tensor([1.0, 2.0, 3.0, 4.0]))
    t = torch.tensor([1.0, 5.0, 1.0, 3.0], requires_grad=True)
    torch.sort(t, stable=True).values.backward(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    assert x.grad.tolist() == t.grad.tolist() == [1.0, 4.0, 2.0, 3.0]


def test_sort_half_precision_on_cpu():
    for dtype in (torch.float16, torch.bfloat16):
        data = torch.tensor(WITH_NAN, dtype=dtype)
        x = wg.tensor(WITH_NAN, dtype=str(dtype).split(".")[1], backend="cpu")
        for descending in (False, True):
            got = x.sort(descending=descending)
            want = torch.sort(data, descending=descending, stable=True)
            assert_same(got.indices, want.indices, f"{dtype} indices")
            assert_same(got.values.float(), want.values.float(), f"{dtype} values")


# ---------------------------------------------------------------- topk, kthvalue, median with ties and NaN

def test_topk_takes_nan_as_largest_and_ties_in_index_order(backend):
    x, t = wg.tensor(WITH_NAN), torch.tensor(WITH_NAN)
    for largest in (True, False):
        got, stable = x.topk(4, largest=largest), torch.sort(t, descending=largest, stable=True)
        assert_same(got.values, torch.topk(t, 4, largest=largest).values, f"largest={largest} values")
        # PyTorch orders tied picks (here two NaNs, 5.0 twice, 0.0 and -0.0) as it happens to; webgrad as a
        # stable sort does (documented)
        assert_same(got.indices, stable.indices[:, :4], f"largest={largest} indices")
    assert_same(x.topk(3, sorted=False).values, torch.topk(t, 3).values, "sorted=False gives the sorted order")


def test_kthvalue_and_median_with_nan(backend):
    x, t = wg.tensor(WITH_NAN), torch.tensor(WITH_NAN)
    stable = torch.sort(t, stable=True).indices
    for k in (1, 4, 9, 10):
        got = x.kthvalue(k)
        assert_same(got.values, torch.kthvalue(t, k).values, f"kthvalue {k}")
        assert_same(got.indices, stable[:, k - 1], f"kthvalue {k}: among ties, a stable sort's pick (documented)")
    assert_result(x.kthvalue(1), torch.kthvalue(t, 1), "kthvalue 1 (no ties)")
    assert_result(x.median(1), torch.median(t, 1), "median: NaN at the first NaN")
    assert_same(x.median(), torch.median(t), "median of all")
    rows = [[1.0, 2.0, NAN, 3.0, NAN], [NAN, 1.0, NAN, 7.0, 7.0], [5.0, 4.0, 3.0, 2.0, 1.0]]
    x, t = wg.tensor(rows), torch.tensor(rows)
    assert_result(x.median(1, keepdim=True), torch.median(t, 1, keepdim=True), "median rows")
    assert_result(x.nanmedian(1), torch.nanmedian(t, 1), "nanmedian rows")
    assert_same(x.nanmedian(), torch.nanmedian(t), "nanmedian of all")


def test_nanmedian_of_nothing_but_nan(backend):
    """NaN, as PyTorch; the index is the first NaN here (PyTorch's choice among NaNs is unspecified)."""
    got = wg.tensor([[NAN] * 4, [2.0, NAN, 1.0, NAN]]).nanmedian(1)
    assert_same(got.values, torch.tensor([NAN, 1.0]))
    assert got.indices.tolist() == [0, 2]


def test_median_and_kthvalue_of_integers(backend):
    data = torch.tensor([[3, 1, 2, 2], [9, -4, 0, 5]])
    x = wg.tensor(data.numpy())
    assert_same(x.median(), torch.median(data))
    assert_same(x.median(1).values, torch.median(data, 1).values)
    assert_same(x.kthvalue(3, 1).values, torch.kthvalue(data, 3, 1).values)
    assert_result(x.topk(2), torch.topk(data, 2))
    assert x.nanmedian(0).values.tolist() == torch.nanmedian(data, 0).values.tolist()


def test_empty_inputs(backend):
    assert_result(wg.zeros(0, 3).topk(2, dim=1), torch.topk(torch.zeros(0, 3), 2, dim=1))
    assert_result(wg.zeros(2, 0).kthvalue(1, dim=0), torch.kthvalue(torch.zeros(2, 0), 1, dim=0))
    assert_result(wg.zeros(0, 3).median(1), torch.median(torch.zeros(0, 3), 1))
    assert math.isnan(wg.zeros(0).median().item()) and math.isnan(wg.zeros(0).nanmedian().item())
    assert_result(wg.zeros(0).sort(), torch.sort(torch.zeros(0)))
    assert_result(wg.zeros(0).topk(0), torch.topk(torch.zeros(0), 0))


def test_zero_dim_inputs(backend):
    x, t = wg.tensor(5.0), torch.tensor(5.0)
    assert_result(x.sort(), torch.sort(t))
    assert_result(x.sort(0, descending=True), torch.sort(t, 0, descending=True))
    for k in (0, 1):
        assert_result(x.topk(k), torch.topk(t, k))
    assert_result(x.kthvalue(1, keepdim=True), torch.kthvalue(t, 1, keepdim=True))
    assert_result(x.median(0), torch.median(t, 0))
    assert_same(x.msort(), torch.msort(t))
    assert_same(x.quantile(0.5, dim=0, keepdim=True), torch.quantile(t, 0.5, dim=0, keepdim=True))


# ---------------------------------------------------------------- quantile

@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_interpolations(backend, interpolation):
    data = torch.tensor([[1.0, 6.0, 3.0, 2.0, 5.0, 4.0], [0.5, -2.0, 8.0, 1.5, NAN, 3.0]])
    q = torch.tensor([0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 1.0])
    x, wq = wg.tensor(data.numpy()), wg.tensor(q.numpy())
    for op in ("quantile", "nanquantile"):
        want = getattr(torch, op)(data, q, dim=1, interpolation=interpolation)
        got = getattr(wg, op)(x, wq, dim=1, interpolation=interpolation)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=0, err_msg=f"{op} {interpolation}")
    assert_same(x[0].quantile(0.3, interpolation=interpolation), torch.quantile(data[0], 0.3,
                                                                                interpolation=interpolation))


def test_quantile_shapes(backend):
    t = torch.from_numpy(distinct(2, 3, 4).astype(np.float32))
    x = wg.tensor(t.numpy())
    for q in (0.4, torch.tensor(0.4), torch.tensor([0.2, 0.9])):
        wq = wg.tensor(q.numpy()) if isinstance(q, torch.Tensor) else q
        for dim in (None, 0, 1, -1):
            for keepdim in (False, True):
                got, want = x.quantile(wq, dim, keepdim), torch.quantile(t, q, dim, keepdim)
                assert got.shape == tuple(want.shape), (q, dim, keepdim)
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_quantile_of_an_all_nan_row_and_infinities(backend):
    rows = [[NAN, NAN, NAN], [1.0, NAN, 3.0], [1.0, math.inf, 2.0]]
    x, t = wg.tensor(rows), torch.tensor(rows)
    for op in ("quantile", "nanquantile"):
        assert_same(getattr(x, op)(0.5, 1), getattr(t, op)(0.5, 1), op)
        assert_same(getattr(x, op)(0.25, 1), getattr(t, op)(0.25, 1), op)
    assert_same(wg.tensor([1.0, math.inf]).quantile(0.5), torch.tensor([1.0, math.inf]).quantile(0.5))


def test_quantile_gradient_reaches_the_input_and_q():
    gradcheck(lambda x, q: wg.quantile(x, q, dim=0), distinct(5, 2), np.array([0.1, 0.45, 0.8]), what="quantile")
    gradcheck(lambda x, q: wg.nanquantile(x, q), np.array([1.0, NAN, 3.0, 2.5, 0.5]), np.array([0.3, 0.6]),
              what="nanquantile with NaN")
    x = torch.tensor([1.0, 4.0, 2.0, 8.0], requires_grad=True)
    q = torch.tensor([0.3, 0.6], requires_grad=True)
    torch.quantile(x, q).sum().backward()
    wx = wg.tensor([1.0, 4.0, 2.0, 8.0], requires_grad=True)
    wq = wg.tensor([0.3, 0.6], requires_grad=True)
    wg.quantile(wx, wq).sum().backward()
    np.testing.assert_allclose(wx.grad.numpy(), x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(wq.grad.numpy(), q.grad.numpy(), rtol=1e-6)


def test_second_order_gradients():
    """(The op cases above return named tuples, which gradgradcheck does not take: their values here.)"""
    for fn, what in [(lambda x: x.sort().values, "sort"), (lambda x: x.sort(0, descending=True).values, "sort dim 0"),
                     (lambda x: x.topk(3, 0, largest=False).values, "topk"),
                     (lambda x: x.kthvalue(2).values, "kthvalue"),
                     (lambda x: x.median(1).values, "median"),
                     (lambda x: x.nanmedian(0, keepdim=True).values, "nanmedian"),
                     (lambda x: x.quantile(0.35, 1, interpolation="midpoint"), "quantile midpoint")]:
        gradgradcheck(fn, distinct(4, 5), what=what)


def test_median_gradient_with_nan_goes_to_the_first_nan():
    x = wg.tensor([[1.0, NAN, 2.0, NAN]], requires_grad=True)
    x.median(1).values.sum().backward()
    t = torch.tensor([[1.0, NAN, 2.0, NAN]], requires_grad=True)
    torch.median(t, 1).values.sum().backward()
    assert x.grad.tolist() == t.grad.tolist() == [[0.0, 1.0, 0.0, 0.0]]


def test_indices_have_no_gradient():
    x = wg.tensor([3.0, 1.0], requires_grad=True)
    result = x.sort()
    assert result.values.requires_grad and not result.indices.requires_grad
    assert not x.argsort().requires_grad


# ---------------------------------------------------------------- errors, as PyTorch's

def raises_like_torch(wg_call, torch_call):
    with pytest.raises(Exception) as want:
        torch_call()
    with pytest.raises(want.type) as got:
        wg_call()
    return str(got.value)


@pytest.mark.parametrize("op, call", [
    ("sort", lambda m, x: m.sort(x, 2)),  # dim out of range: IndexError
    ("sort", lambda m, x: m.sort(x, -3)),
    ("sort", lambda m, x: m.sort(x, 0.5)),  # TypeError
    ("sort", lambda m, x: m.sort(x, -1, True, True)),  # stable is keyword-only
    ("sort", lambda m, x: m.sort(x, descending=1)),
    ("sort", lambda m, x: m.sort(x, foo=1)),
    ("argsort", lambda m, x: m.argsort(x, -1, True, True)),
    ("topk", lambda m, x: m.topk(x, 4)),  # k out of range: RuntimeError
    ("topk", lambda m, x: m.topk(x, -1)),
    ("topk", lambda m, x: m.topk(x, 2.0)),  # TypeError
    ("topk", lambda m, x: m.topk(x, True)),
    ("topk", lambda m, x: m.topk(x, 1, dim=None)),
    ("topk", lambda m, x: m.topk(x, 1, dim=2)),
    ("topk", lambda m, x: m.topk(x > 0, 1)),  # bool: RuntimeError
    ("kthvalue", lambda m, x: m.kthvalue(x, 0)),
    ("kthvalue", lambda m, x: m.kthvalue(x, 4)),
    ("kthvalue", lambda m, x: m.kthvalue(x > 0, 1)),  # bool: NotImplementedError
    ("median", lambda m, x: m.median(x > 0)),
    ("median", lambda m, x: m.median(x, 2)),
    ("quantile", lambda m, x: m.quantile(x, 1.5)),  # q out of [0, 1]: RuntimeError
    ("quantile", lambda m, x: m.quantile(x, -0.1, dim=0)),
    ("quantile", lambda m, x: m.quantile(x, 0.5, interpolation="cubic")),
    ("quantile", lambda m, x: m.quantile(x.long(), 0.5)),  # integer input: RuntimeError
    ("quantile", lambda m, x: m.quantile(x, [0.5])),  # TypeError
    ("nanquantile", lambda m, x: m.nanquantile(x, 0.5, dim=3)),
])
def test_errors(backend, op, call):
    data = [[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]]
    message = raises_like_torch(lambda: call(wg, wg.tensor(data)), lambda: call(torch, torch.tensor(data)))
    assert op in message, message


def test_errors_with_empty_and_tensor_q(backend):
    for shape, k in [((0, 3), 1), ((2, 0), 3)]:   # an empty reduced dim (IndexError), k past it (RuntimeError)
        raises_like_torch(lambda: wg.kthvalue(wg.zeros(*shape), k, dim=0),
                          lambda: torch.kthvalue(torch.zeros(*shape), k, dim=0))
    raises_like_torch(lambda: wg.median(wg.zeros(2, 0), 1), lambda: torch.median(torch.zeros(2, 0), 1))
    raises_like_torch(lambda: wg.topk(wg.zeros(0), 1), lambda: torch.topk(torch.zeros(0), 1))
    raises_like_torch(lambda: wg.quantile(wg.zeros(0), 0.5), lambda: torch.quantile(torch.zeros(0), 0.5))
    raises_like_torch(lambda: wg.quantile(wg.ones(3), wg.ones(1, 1) / 2),
                      lambda: torch.quantile(torch.ones(3), torch.ones(1, 1) / 2))
    raises_like_torch(lambda: wg.quantile(wg.ones(3), wg.tensor([0.5], dtype=wg.int32)),
                      lambda: torch.quantile(torch.ones(3), torch.tensor([1], dtype=torch.int32)))
    message = raises_like_torch(lambda: wg.median(wg.ones(3), keepdim=True), lambda: torch.median(torch.ones(3),
                                                                                                  keepdim=True))
    assert "median" in message


def test_quantile_checks_a_tensor_q_on_cpu():
    """As PyTorch checks q's range on the CPU only (elsewhere it would wait for the device)."""
    with pytest.raises(RuntimeError, match=r"quantile\(\) q values must be in the range \[0, 1\]"):
        wg.quantile(wg.ones(3, backend="cpu"), wg.tensor([0.5, 1.5], backend="cpu"))


def test_error_messages_name_the_op_and_what_it_got():
    with pytest.raises(RuntimeError, match=r"topk\(\).*k = 4.*size 3"):
        wg.tensor([1.0, 2.0, 3.0]).topk(4)
    with pytest.raises(IndexError, match=r"sort: dim 1 .* 1 dimensions"):
        wg.tensor([1.0, 2.0]).sort(1)


# ---------------------------------------------------------------- the kernel on every backend

def test_sort_kernel_everywhere_with_a_gradient():
    assert wg.get_gradient(K.SORT) is not None
    for name in BACKENDS:
        assert K.SORT in wg.kernels_for_backend(name), name
