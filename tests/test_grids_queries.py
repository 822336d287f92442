"""Coordinate grids (meshgrid, cartesian_prod, tril/triu_indices), questions about tensors and
dtypes (is_tensor, is_floating_point, is_nonzero, numel, result_type, promote_types, can_cast),
finfo/iinfo and Size, against PyTorch."""
import warnings

import pytest
import torch

import webgrad as wg

DTYPES = ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(2, 3), (2, 3, 4), (5,), (1, 4)])
def test_meshgrid_as_pytorch(indexing, sizes, backend):
    ours = wg.meshgrid(*[wg.arange(n, device=backend) * (k + 1) for k, n in enumerate(sizes)], indexing=indexing)
    theirs = torch.meshgrid(*[torch.arange(n) * (k + 1) for k, n in enumerate(sizes)], indexing=indexing)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.shape == tuple(t.shape) and o.tolist() == t.tolist()
    listed = wg.meshgrid([wg.arange(n, device=backend) for n in sizes], indexing=indexing)
    assert [t.shape for t in listed] == [o.shape for o in ours]


def test_meshgrid_warns_without_indexing_as_pytorch():
    with pytest.warns(UserWarning, match="indexing"):
        x, y = wg.meshgrid(wg.arange(2), wg.arange(3))
    assert x.shape == (2, 3)
    with pytest.raises(ValueError, match="indexing"):
        wg.meshgrid(wg.arange(2), indexing="ji")
    with pytest.raises(ValueError, match="0-d or 1-d"):
        wg.meshgrid(wg.zeros(2, 2), indexing="ij")


@pytest.mark.parametrize("sizes", [(2, 3), (3,), (2, 1, 2)])
def test_cartesian_prod_as_pytorch(sizes, backend):
    got = wg.cartesian_prod(*[wg.arange(n, device=backend) + 10 * k for k, n in enumerate(sizes)])
    want = torch.cartesian_prod(*[torch.arange(n) + 10 * k for k, n in enumerate(sizes)])
    assert got.shape == tuple(want.shape) and got.tolist() == want.tolist()


@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (4, 3, -1), (3, 5, 2), (0, 2, 0), (3, 3, -5), (2, 4, 9)])
@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices_as_pytorch(name, row, col, offset, backend):
    got = getattr(wg, name)(row, col, offset, device=backend)
    want = getattr(torch, name)(row, col, offset)
    assert got.dtype == wg.int64 and got.shape == tuple(want.shape) and got.tolist() == want.tolist()
    assert getattr(wg, name)(row, col, offset, dtype=wg.int32).dtype == wg.int32


def test_triangle_indices_refusals():
    with pytest.raises(TypeError, match="tril_indices"):
        wg.tril_indices(2.0, 3)
    with pytest.raises(RuntimeError):
        wg.tril_indices(2, 2, requires_grad=True)   # integer tensors do not require grad, as in PyTorch


# ---------------------------------------------------------------- questions


def test_tensor_questions_as_pytorch(backend):
    for data in ([1.0], [2], [True], [[0.5]]):
        t, w = torch.tensor(data), wg.tensor(data, device=backend)
        assert wg.is_tensor(w) and not wg.is_tensor(data)
        assert wg.is_floating_point(w) == torch.is_floating_point(t)
        assert wg.is_complex(w) == torch.is_complex(t) is False
        assert wg.is_nonzero(w) == torch.is_nonzero(t)
        assert wg.numel(w) == torch.numel(t)
    with pytest.raises(RuntimeError, match="more than one value"):
        wg.is_nonzero(wg.tensor([1, 2], device=backend))
    with pytest.raises(RuntimeError, match="no values"):
        wg.is_nonzero(wg.zeros(0, device=backend))


def _wg(name):
    return getattr(wg, name)


def _torch(name):
    return getattr(torch, name)


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", DTYPES)
def test_promote_types_and_can_cast_as_pytorch(a, b):
    assert wg.promote_types(_wg(a), _wg(b)).name == str(torch.promote_types(_torch(a), _torch(b)))[6:]
    assert wg.can_cast(_wg(a), _wg(b)) == torch.can_cast(_torch(a), _torch(b))


OPERANDS = [
    (lambda m: m.tensor([1]), lambda m: 2.5), (lambda m: m.tensor([1.0]), lambda m: m.tensor([1], dtype=m.float64)),
    (lambda m: m.tensor(1.0, dtype=m.float64), lambda m: m.tensor([1.0])), (lambda m: m.tensor([True]), lambda m: 3),
    (lambda m: 2, lambda m: m.tensor([1], dtype=m.int32)), (lambda m: 1, lambda m: 2.0), (lambda m: True, lambda m: 1),
]


@pytest.mark.parametrize("make", OPERANDS)
def test_result_type_as_pytorch(make):
    a, b = make
    assert wg.result_type(a(wg), b(wg)).name == str(torch.result_type(a(torch), b(torch)))[6:]
    assert wg.result_type(tensor=a(wg), other=b(wg)) == wg.result_type(a(wg), b(wg))


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_as_pytorch(name):
    ours, theirs = wg.finfo(_wg(name)), torch.finfo(_torch(name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), (name, field)
    assert ours.dtype == theirs.dtype


@pytest.mark.parametrize("name", ["int32", "int64"])
def test_iinfo_as_pytorch(name):
    ours, theirs = wg.iinfo(_wg(name)), torch.iinfo(_torch(name))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (theirs.bits, theirs.min, theirs.max, theirs.dtype)


def test_finfo_defaults_and_refusals():
    assert wg.finfo().eps == torch.finfo().eps
    with pytest.raises(TypeError, match="iinfo"):
        wg.finfo(wg.int32)
    with pytest.raises(TypeError, match="iinfo"):
        wg.iinfo(wg.float32)


def test_size_as_pytorch():
    s, t = wg.Size([2, 3]), torch.Size([2, 3])
    assert s == t == (2, 3) and s.numel() == t.numel() == 6
    assert isinstance(s[1:], wg.Size) and s[1:] == t[1:] and isinstance(s + (4,), wg.Size)
    assert repr(s) == "webgrad.Size([2, 3])" and repr(t) == "torch.Size([2, 3])"
    assert wg.zeros(s).shape == s and wg.Size() == ()
    with pytest.raises(TypeError):
        wg.Size([2.5])


def test_meshgrid_gradient(backend):
    x = wg.tensor([1.0, 2.0], device=backend, requires_grad=True)
    y = wg.tensor([3.0, 4.0, 5.0], device=backend, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b = wg.meshgrid(x, y, indexing="xy")
    (a * b).sum().backward()
    tx, ty = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 4.0, 5.0], requires_grad=True)
    ta, tb = torch.meshgrid(tx, ty, indexing="xy")
    (ta * tb).sum().backward()
    assert x.grad.tolist() == tx.grad.tolist() and y.grad.tolist() == ty.grad.tolist()
