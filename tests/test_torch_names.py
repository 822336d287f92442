"""PyTorch names scripts use that are compositions of webgrad's ops: aliases (divide, greater,
moveaxis, concatenate ...), in-place method forms (eq_, cumsum_, index_add_ ...), numpy-style joins
and splits, unique/unique_consecutive, scatter, take, repeat_interleave, nansum/nanmean, xlogy,
logit, fmax/fmin, mv, the Tensor attributes (itemsize, nbytes, layout, is_sparse ...) and the
constants; each against torch on every backend, with gradients where torch has them."""
import contextlib
import math
import warnings

import numpy as np
import pytest
import torch

import webgrad as wg
from opinfo import OpCase, op_tests
from test_elementary import torch_ref

rng = np.random.default_rng(5)
A = [[1.0, -2.0, 3.0], [4.0, 0.5, -1.0]]
B = [[0.5, 0.5, -3.0], [4.0, 2.0, 2.0]]


def same(got, want, rtol=1e-6):
    """``got`` (webgrad) equals ``want`` (torch): tensors, tuples of them, or plain values."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w, rtol)
        return
    if isinstance(want, torch.Tensor):
        assert isinstance(got, wg.Tensor), type(got)
        assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
        assert got.dtype.name == str(want.dtype)[6:], (got.dtype, want.dtype)
        np.testing.assert_allclose(got.numpy().astype(np.float64), want.numpy().astype(np.float64), rtol=rtol,
                                   equal_nan=True)
        return
    assert got == want, (got, want)


CALLS = {
    "divide": lambda m, a, b: m.divide(a, b, rounding_mode="floor"),
    "true_divide": lambda m, a, b: m.true_divide(a, b),
    "multiply": lambda m, a, b: m.multiply(a, b),
    "subtract": lambda m, a, b: m.subtract(a, b, alpha=2),
    "greater": lambda m, a, b: m.greater(a, b),
    "greater_equal": lambda m, a, b: a.greater_equal(b),
    "less": lambda m, a, b: m.less(a, 1.0),
    "less_equal": lambda m, a, b: a.less_equal(b),
    "not_equal": lambda m, a, b: m.not_equal(a, b),
    "arctan2": lambda m, a, b: m.arctan2(a, b),
    "moveaxis": lambda m, a, b: m.moveaxis(a.reshape(2, 3, 1), 0, 2),
    "concatenate": lambda m, a, b: m.concatenate([a, b], axis=1),
    "softmax": lambda m, a, b: m.softmax(a, 1),
    "log_softmax": lambda m, a, b: m.log_softmax(a, dim=0),
    "conv2d": lambda m, a, b: m.conv2d(a.reshape(1, 1, 2, 3), b.reshape(1, 1, 2, 3)[..., :2], padding=1),
    "atleast": lambda m, a, b: (m.atleast_1d(a[0, 0]), m.atleast_2d(a[0]), m.atleast_3d(a), m.atleast_3d(a[0])),
    "hstack": lambda m, a, b: m.hstack([a, b]),
    "vstack": lambda m, a, b: m.vstack([a[0], b[1]]),
    "row_stack": lambda m, a, b: m.row_stack((a, b)),
    "dstack": lambda m, a, b: m.dstack([a, b]),
    "column_stack": lambda m, a, b: m.column_stack([a[0], b[0], a.t()]),
    "broadcast_tensors": lambda m, a, b: m.broadcast_tensors(a[:, :1], b[0]),
    "tensor_split_n": lambda m, a, b: m.tensor_split(m.arange(7), 3),
    "tensor_split_at": lambda m, a, b: a.tensor_split([1, 2], dim=1),
    "hsplit": lambda m, a, b: m.hsplit(a, 3),
    "vsplit": lambda m, a, b: m.vsplit(a, [1]),
    "ravel": lambda m, a, b: a.t().ravel(),
    "fliplr": lambda m, a, b: m.fliplr(a),
    "flipud": lambda m, a, b: a.flipud(),
    "take": lambda m, a, b: m.take(a, m.tensor([[0, 5], [-1, 2]])),
    "repeat_interleave": lambda m, a, b: a.repeat_interleave(2, dim=1),
    "repeat_interleave_counts": lambda m, a, b: m.repeat_interleave(a, m.tensor([1, 0, 2]), dim=1),
    "repeat_interleave_flat": lambda m, a, b: m.repeat_interleave(a, 2),
    "repeat_interleave_alone": lambda m, a, b: m.repeat_interleave(m.tensor([2, 0, 1])),
    "unique": lambda m, a, b: m.unique(m.tensor([3, 1, 3, 2, 1]), return_inverse=True, return_counts=True),
    "unique_float_nan": lambda m, a, b: m.unique(m.tensor([2.0, math.nan, 1.0, 2.0, math.nan]), return_counts=True),
    "unique_dim": lambda m, a, b: m.unique(m.tensor([[1, 2], [3, 4], [1, 2], [0, 9]]), dim=0, return_inverse=True),
    "unique_dim1": lambda m, a, b: m.unique(m.tensor([[1, 1, 0], [2, 2, 5]]), dim=1, return_counts=True),
    "unique_bool": lambda m, a, b: m.unique(a > 0),
    "unique_consecutive": lambda m, a, b: m.unique_consecutive(m.tensor([1, 1, 2, 2, 3, 1, 1]), return_counts=True,
                                                               return_inverse=True),
    "unique_consecutive_dim": lambda m, a, b: m.tensor([[1, 1, 2], [1, 1, 2]]).unique_consecutive(dim=1),
    "unique_empty": lambda m, a, b: m.unique(m.tensor([], dtype=m.int64), return_counts=True),
    "scatter_src": lambda m, a, b: a.scatter(1, m.tensor([[2, 0], [1, 1]]), b),
    "scatter_value": lambda m, a, b: m.scatter(a, 0, m.tensor([[1, 0, 1]]), value=7.5),
    "scatter_add_reduce": lambda m, a, b: a.scatter(1, m.tensor([[0, 0, 2]]), b[:1], reduce="add"),
    "nansum": lambda m, a, b: m.nansum(m.where(a > 2, m.tensor(math.nan), a), dim=1),
    "nanmean": lambda m, a, b: m.where(a > 2, m.tensor(math.nan), a).nanmean(0, keepdim=True),
    "xlogy": lambda m, a, b: m.xlogy(m.tensor([0.0, 2.0, 0.0, 3.0]), m.tensor([0.0, 3.0, math.nan, 0.5])),
    "logit": lambda m, a, b: m.logit(m.tensor([0.25, 0.5, 0.0, 1.0]), eps=1e-3),
    "fmax": lambda m, a, b: m.fmax(m.tensor([1.0, math.nan, math.nan]), m.tensor([2.0, 0.0, math.nan])),
    "fmin": lambda m, a, b: m.tensor([1.0, math.nan, 5.0]).fmin(m.tensor([2.0, 0.0, 4.0])),
    "mv": lambda m, a, b: m.mv(a, b[0]),
    "scalar_tensor": lambda m, a, b: m.scalar_tensor(3),
    "detach": lambda m, a, b: m.detach(a),
    "sum_to_size": lambda m, a, b: a.sum_to_size(1, 3),
    "adjoint": lambda m, a, b: (a.adjoint(), a.mH, a.H),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_as_pytorch(name, backend):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch warns once per process
        want = CALLS[name](torch, torch.tensor(A), torch.tensor(B))
    with pytest.warns(UserWarning, match="reduce argument") if "reduce" in name else contextlib.nullcontext():
        got = CALLS[name](wg, wg.tensor(A, device=backend), wg.tensor(B, device=backend))
    same(got, want)


IN_PLACE = {
    "eq_": lambda a, b, m: a.eq_(b), "ne_": lambda a, b, m: a.ne_(b), "lt_": lambda a, b, m: a.lt_(0.7),
    "le_": lambda a, b, m: a.le_(b), "gt_": lambda a, b, m: a.gt_(b), "ge_": lambda a, b, m: a.ge_(1.0),
    "greater_": lambda a, b, m: a.greater_(b), "less_equal_": lambda a, b, m: a.less_equal_(b),
    "divide_": lambda a, b, m: a.divide_(b), "multiply_": lambda a, b, m: a.multiply_(b),
    "subtract_": lambda a, b, m: a.subtract_(b, alpha=0.5), "true_divide_": lambda a, b, m: a.true_divide_(2),
    "floor_divide_": lambda a, b, m: a.floor_divide_(b), "remainder_": lambda a, b, m: a.remainder_(b),
    "atan2_": lambda a, b, m: a.atan2_(b), "arctan2_": lambda a, b, m: a.arctan2_(b),
    "cumsum_": lambda a, b, m: a.cumsum_(1), "cumprod_": lambda a, b, m: a.cumprod_(0),
    "index_add_": lambda a, b, m: a.index_add_(1, m.tensor([0, 0]), b[:, :2], alpha=2),
    "scatter_add_": lambda a, b, m: a.scatter_add_(0, m.tensor([[1, 0, 1]]), b[:1]),
    "scatter_": lambda a, b, m: a.scatter_(1, m.tensor([[1], [2]]), b),
    "logical_and_": lambda a, b, m: a.logical_and_(b), "logical_not_": lambda a, b, m: a.logical_not_(),
    "xlogy_": lambda a, b, m: a.abs().xlogy_(b.abs()), "hypot_": lambda a, b, m: a.hypot_(b),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_forms_as_pytorch(name, backend):
    ta, wa = torch.tensor(A), wg.tensor(A, device=backend)
    tout = IN_PLACE[name](ta, torch.tensor(B), torch)
    wout = IN_PLACE[name](wa, wg.tensor(B, device=backend), wg)
    same(wout, tout)
    if tout is ta:
        assert wout is wa
        same(wa, ta)


GRADIENT_CASES = [
    OpCase("hstack", lambda a, b: wg.hstack([a, b]), torch_ref(lambda a, b: torch.hstack([a, b])),
           [rng.standard_normal((2, 3)), rng.standard_normal((2, 2))]),
    OpCase("take", lambda a: wg.take(a, wg.tensor([[0, 5], [-1, 2]], device=a.device)),
           torch_ref(lambda a: torch.take(a, torch.tensor([[0, 5], [-1, 2]]))), [rng.standard_normal((2, 3))]),
    OpCase("repeat_interleave", lambda a: a.repeat_interleave(wg.tensor([2, 0, 1]), dim=1),
           torch_ref(lambda a: a.repeat_interleave(torch.tensor([2, 0, 1]), dim=1)), [rng.standard_normal((2, 3))]),
    # no repeated index: with one, PyTorch's rule gives the overwritten src its place's gradient, not the
    # finite difference's 0 (webgrad's is PyTorch's: tests/test_indexing.py)
    OpCase("scatter", lambda a, s: a.scatter(1, wg.tensor([[2, 0], [1, 0]], device=a.device), s),
           torch_ref(lambda a, s: a.scatter(1, torch.tensor([[2, 0], [1, 0]]), s)),
           [rng.standard_normal((2, 3)), rng.standard_normal((2, 2))]),
    OpCase("xlogy", wg.xlogy, torch_ref(torch.xlogy), [rng.uniform(0.5, 2, (3, 2)), rng.uniform(0.5, 2, (2,))]),
    OpCase("logit", lambda p: wg.logit(p, 0.05), torch_ref(lambda p: torch.logit(p, 0.05)),
           [rng.uniform(0.1, 0.9, (4,))]),
    OpCase("fmax", wg.fmax, torch_ref(torch.fmax), [rng.standard_normal((3,)), rng.standard_normal((3,))]),
    OpCase("nansum", lambda a: wg.nansum(a, 1), torch_ref(lambda a: torch.nansum(a, 1)),
           [rng.standard_normal((2, 3))]),
    OpCase("nanmean", lambda a: wg.nanmean(a), torch_ref(torch.nanmean), [rng.standard_normal((2, 3))]),
    OpCase("mv", wg.mv, torch_ref(torch.mv), [rng.standard_normal((2, 3)), rng.standard_normal((3,))]),
    OpCase("tensor_split", lambda a: wg.tensor_split(a, 2, 1)[1], torch_ref(lambda a: torch.tensor_split(a, 2, 1)[1]),
           [rng.standard_normal((2, 5))]),
    OpCase("sum_to_size", lambda a: a.sum_to_size(2, 1), torch_ref(lambda a: a.sum_to_size(2, 1)),
           [rng.standard_normal((3, 2, 4))]),
]
globals().update(op_tests(GRADIENT_CASES))


def test_nan_gradients_as_pytorch(backend):
    for fn in (lambda m, x: m.nansum(x), lambda m, x: m.nanmean(x)):
        w = wg.tensor([1.0, math.nan, 3.0], device=backend, requires_grad=True)
        t = torch.tensor([1.0, math.nan, 3.0], requires_grad=True)
        fn(wg, w).backward()
        fn(torch, t).backward()
        np.testing.assert_array_equal(w.grad.numpy(), t.grad.numpy())


def test_tensor_attributes_as_pytorch(backend):
    for dtype in ("float32", "int64", "bool", "int32"):
        t = torch.ones(2, 3, dtype=getattr(torch, dtype))
        w = wg.ones(2, 3, dtype=getattr(wg, dtype), device=backend)
        assert (w.itemsize, w.nbytes, w.ndimension(), w.is_signed()) == (t.itemsize, t.nbytes, t.ndimension(),
                                                                          t.is_signed())
        assert wg.is_signed(w) == torch.is_signed(t)
    w = wg.ones(2, device=backend)
    assert w.layout is wg.strided and w.pin_memory() is w and not w.is_pinned()
    assert not (w.is_sparse or w.is_quantized or w.is_meta or w.is_mkldnn or w.is_mps or w.is_xpu)
    assert w.positive() is w and wg.is_same_size(w, wg.zeros(2)) and not w.is_same_size(wg.zeros(3))


def test_constants_as_pytorch():
    assert (wg.pi, wg.e, wg.inf) == (torch.pi, torch.e, torch.inf) and math.isnan(wg.nan)
    assert wg.newaxis is torch.newaxis is None
    assert isinstance(wg.float32, wg.dtype) and isinstance(torch.float32, torch.dtype)


def test_refusals_as_pytorch():
    with pytest.raises(NotImplementedError, match="multiply"), pytest.warns(UserWarning, match="reduce"):
        wg.zeros(2).scatter(0, wg.tensor([0]), wg.ones(1), reduce="multiply")
    with pytest.raises(RuntimeError, match="hsplit"):
        wg.hsplit(wg.zeros(2, 3), 2)
    with pytest.raises(RuntimeError, match="nanmean"):
        wg.nanmean(wg.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="sum_to_size"):
        wg.ones(2, 3).sum_to_size(2)
    with pytest.raises(RuntimeError, match="fliplr"):
        wg.fliplr(wg.ones(3))
