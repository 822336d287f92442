"""The dtypes as PyTorch has them: int64 the default integer dtype (held in 32 bits on the GPU
backends, which refuse what does not fit), float16 and bfloat16 on cpu, their names and casts."""
import numpy as np
import pytest
import torch

import webgrad as wg
import webgrad.nn.functional as F

NAMES = ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("name", NAMES)
def test_names_and_aliases_match_torch(name):
    assert getattr(wg, name).name == str(getattr(torch, name))[6:]
    assert getattr(wg, name).itemsize == getattr(torch, name).itemsize
    assert getattr(wg, name).is_floating == getattr(torch, name).is_floating_point
    assert getattr(wg, name).is_signed == getattr(torch, name).is_signed
    for alias in ("half", "float", "double", "int", "long"):
        assert getattr(wg, alias).name == str(getattr(torch, alias))[6:]


def test_default_dtypes_are_torchs(backend):
    for data in (3, [1, 2], [[True, 1]]):
        assert wg.tensor(data).dtype.name == str(torch.tensor(data).dtype)[6:]
    assert wg.arange(3).dtype is wg.int64 and wg.arange(3.0).dtype is wg.float32
    x = wg.tensor([[1.0, 5.0], [7.0, 4.0]])
    assert x.argmax().dtype is wg.int64 and x.max(1).indices.dtype is wg.int64
    assert wg.tensor([True, False]).sum().dtype is wg.int64
    assert wg.tensor([1.5]).long().dtype is wg.int64 and wg.tensor([1.5]).int().dtype is wg.int32


def test_int64_works_as_an_index_and_a_target(backend):
    x = wg.arange(12.0).reshape(3, 4)
    idx = wg.tensor([2, 0], dtype=wg.int64)
    assert x[idx].tolist() == [[8.0, 9.0, 10.0, 11.0], [0.0, 1.0, 2.0, 3.0]]
    assert x.index_select(1, idx).tolist() == [[2.0, 0.0], [6.0, 4.0], [10.0, 8.0]]
    assert x.gather(1, wg.tensor([[1], [2], [3]])).tolist() == [[1.0], [6.0], [11.0]]
    logits = wg.tensor([[2.0, 0.5, 0.1], [0.3, 0.2, 3.0]])
    want = torch.nn.functional.cross_entropy(torch.tensor(logits.tolist()), torch.tensor([0, 2]))
    assert abs(F.cross_entropy(logits, wg.tensor([0, 2])).item() - want.item()) < 1e-6
    assert (wg.tensor([5, 7]) * 3 - 1).tolist() == [14, 20]


def _chain(lib, a, b, dtype):
    x = lib.tensor(a).to(dtype).requires_grad_()
    w = lib.tensor(b).to(dtype)
    y = ((x @ w).relu().exp() * 2 + 1).log_softmax(-1).sum() + (x * x).mean()
    y.backward()
    return y, x.grad


@pytest.mark.parametrize("name", ["float16", "bfloat16"])   # on the backends that hold it (conftest)
def test_half_precision_matches_torch(backend, name):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    y, g = _chain(wg, a, b, getattr(wg, name))
    ty, tg = _chain(torch, a, b, getattr(torch, name))
    assert y.dtype is getattr(wg, name) and g.dtype is getattr(wg, name)
    tol = {"float16": 1e-2, "bfloat16": 6e-2}[name]
    np.testing.assert_allclose(y.float().item(), ty.float().item(), rtol=tol)
    np.testing.assert_allclose(g.float().numpy(), tg.float().numpy(), rtol=tol, atol=tol)
    method = {"float16": "half", "bfloat16": "bfloat16"}[name]
    assert getattr(wg.tensor([1.0]), method)().dtype is getattr(wg, name)


@pytest.mark.parametrize("name", ["bfloat16", "float64"])   # float16 without shader-f16: test_gpu_half.py
def test_gpu_refuses_dtypes_it_cannot_hold(gpu, name):
    with pytest.raises(TypeError, match=f"dtype {name} is not supported on the GPU backend 'wgpu'.*float32"):
        wg.ones(2, dtype=getattr(wg, name), device="wgpu")


def test_gpu_int64_round_trip_and_arithmetic(gpu):
    a = np.array([-2 ** 31, -5, 0, 7, 2 ** 31 - 1], dtype=np.int64)
    t = wg.tensor(a, device="wgpu")
    assert t.dtype is wg.int64 and t.numpy().dtype == np.int64 and t.tolist() == a.tolist()
    assert (t[1:4] * 2 + 1).tolist() == [-9, 1, 15]
    assert wg.tensor([3, 1, 2], device="wgpu").argmax().dtype is wg.int64


def _arange(lib, args, dtype):
    try:
        return lib.arange(*args, **({} if dtype is None else {"dtype": getattr(lib, dtype)})).tolist()
    except (RuntimeError, ValueError) as e:
        return type(e)


@pytest.mark.parametrize("dtype", ["int32", "int64", None])
@pytest.mark.parametrize("args", [(-0.5, 2.5, 1), (0, 3.5, 1), (0.5, 3, 1.5), (-2.7, 3, 2.5), (5, 0.5, -1.5),
                                  (0, 3, 0.5), (-2.7, -1, 0.5), (0, -3, 1), (3, 0, 0.5), (0, 3, 0)])
def test_arange_arguments_and_errors_as_torch(args, dtype, backend):
    """PyTorch truncates integer arange's arguments, and counts the elements from the truncated ones for
    int64 (arange(-0.5, 2.5, 1) is [0, 1]; a step of 0.5 is refused), from those given for int32 ([0, 1, 2];
    a step of 0.5 repeats start); bounds against the step's sign and a step of 0 are RuntimeErrors."""
    got, want = _arange(wg, args, dtype), _arange(torch, args, dtype)
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, want), f"arange{args}: {got}, PyTorch's {want}"
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
