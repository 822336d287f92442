"""Tests of values (``core/ops/comparison.py``): isnan/isinf/isposinf/isneginf/isfinite/isreal,
isclose/allclose/equal and nan_to_num, against PyTorch on every backend."""
import math

import numpy as np
import pytest
import torch

import webgrad as wg

SPECIAL = [0.0, -0.0, 1.5, -2.0, math.inf, -math.inf, math.nan, 3.4e38, 1e-40]
PREDICATES = ["isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal"]


@pytest.mark.parametrize("name", PREDICATES)
def test_predicates_as_pytorch(name, backend):
    got = getattr(wg, name)(wg.tensor(SPECIAL, device=backend))
    want = getattr(torch, name)(torch.tensor(SPECIAL))
    assert got.dtype == wg.bool and got.tolist() == want.tolist()
    assert getattr(wg.tensor(SPECIAL, device=backend), name)().tolist() == want.tolist()


@pytest.mark.parametrize("name", PREDICATES)
def test_predicates_on_integers(name, backend):
    got = getattr(wg, name)(wg.tensor([[1, -2], [0, 5]], device=backend))
    want = getattr(torch, name)(torch.tensor([[1, -2], [0, 5]]))
    assert got.shape == (2, 2) and got.tolist() == want.tolist()


CLOSE = [
    ([1.0, 2.0, math.nan, math.inf, -math.inf, 1.0], [1.0 + 1e-6, 2.1, math.nan, math.inf, math.inf, 1.00002], {}),
    ([1.0, 2.0, math.nan], [1.0, 2.0001, math.nan], {"rtol": 1e-3, "equal_nan": True}),
    ([0.0, 1e-9, 100.0], [1e-8, 0.0, 100.5], {"atol": 1e-8, "rtol": 0.0}),
    ([[1.0, 2.0], [3.0, 4.0]], [1.0, 2.0], {}),
]


@pytest.mark.parametrize("a,b,kw", CLOSE)
def test_isclose_and_allclose_as_pytorch(a, b, kw, backend):
    got = wg.isclose(wg.tensor(a, device=backend), wg.tensor(b, device=backend), **kw)
    want = torch.isclose(torch.tensor(a), torch.tensor(b), **kw)
    assert got.tolist() == want.tolist()
    assert wg.allclose(wg.tensor(a, device=backend), wg.tensor(b, device=backend), **kw) == \
        torch.allclose(torch.tensor(a), torch.tensor(b), **kw)


def test_isclose_integers_and_refusals(backend):
    a, b = [1, 5, 100], [1, 6, 101]
    got = wg.isclose(wg.tensor(a, device=backend), wg.tensor(b, device=backend), rtol=0.01, atol=0)
    assert got.tolist() == torch.isclose(torch.tensor(a), torch.tensor(b), rtol=0.01, atol=0).tolist()
    with pytest.raises(TypeError, match="isclose"):
        wg.isclose(wg.tensor([1.0]), wg.tensor([1]))
    with pytest.raises(ValueError, match="isclose"):
        wg.isclose(wg.tensor([1.0]), wg.tensor([1.0]), rtol=-1.0)


def test_equal_as_pytorch(backend):
    t = lambda v: wg.tensor(v, device=backend)  # noqa: E731
    assert wg.equal(t([1, 2]), t([1, 2])) is True
    assert wg.equal(t([1, 2]), t([1, 3])) is False
    assert wg.equal(t([1]), t([1, 1])) is False                       # shapes differ, as torch.equal
    assert wg.equal(t([math.nan]), t([math.nan])) is torch.equal(torch.tensor([math.nan]), torch.tensor([math.nan]))
    assert t([1.0, 2.0]).equal(t([1.0, 2.0]))


NAN_TO_NUM = [
    {}, {"nan": 2.0}, {"posinf": 9.0, "neginf": -9.0}, {"nan": -1.0, "posinf": 1e30},
]


@pytest.mark.parametrize("kw", NAN_TO_NUM)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_to_num_as_pytorch(kw, dtype, backend):
    got = wg.nan_to_num(wg.tensor(SPECIAL, dtype=getattr(wg, dtype), device=backend), **kw)
    want = torch.nan_to_num(torch.tensor(SPECIAL, dtype=getattr(torch, dtype)), **kw)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_nan_to_num_in_place_and_gradient(backend):
    x = wg.tensor([1.0, math.nan, 2.0], device=backend, requires_grad=True)
    y = wg.nan_to_num(x * 3)
    y.sum().backward()
    tx = torch.tensor([1.0, math.nan, 2.0], requires_grad=True)
    torch.nan_to_num(tx * 3).sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()
    t = wg.tensor([math.inf, 1.0], device=backend)
    assert t.nan_to_num_(posinf=5.0) is t and t.tolist() == [5.0, 1.0]
    assert wg.nan_to_num(wg.tensor([3, 4], device=backend)).tolist() == [3, 4]
