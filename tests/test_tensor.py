"""Tensor construction, data access, metadata and repr (PyTorch's behaviour where it has one)."""
import array
import asyncio

import numpy as np
import pytest
import torch

import webgrad as wg


# ---------------------------------------------------------------- construction

@pytest.mark.parametrize("data, dtype, shape", [
    (2.5, wg.float32, ()),
    (3, wg.int64, ()),
    (True, wg.bool, ()),
    ([1.0, 2.0], wg.float32, (2,)),
    ([1, 2, 3], wg.int64, (3,)),
    ([True, False], wg.bool, (2,)),
    ([1, 2.5], wg.float32, (2,)),
    ([[1, 2], [3, 4]], wg.int64, (2, 2)),
    ((1.0, (2.0,)[0]), wg.float32, (2,)),
    ([[[1.0]], [[2.0]]], wg.float32, (2, 1, 1)),
    ([], wg.float32, (0,)),
    ([[], []], wg.float32, (2, 0)),
])
def test_from_python(data, dtype, shape, backend):
    t = wg.tensor(data)
    assert t.dtype is dtype and t.shape == shape and t.device == backend
    assert t.tolist() == (data if not isinstance(data, tuple) else list(data))


def test_dtype_argument_converts():
    assert wg.tensor([1, 2], dtype=wg.float32).tolist() == [1.0, 2.0]
    assert wg.tensor([1.7, -1.7], dtype=wg.int32).tolist() == [1, -1]   # truncation, as torch
    assert wg.tensor([0, 2], dtype=wg.bool).tolist() == [False, True]
    assert wg.tensor([1.0], dtype="float64").dtype is wg.float64


def test_ragged_refused():
    with pytest.raises(ValueError, match="ragged"):
        wg.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match="ragged"):
        wg.tensor([[1, 2], 3])


def test_non_numbers_refused():
    with pytest.raises(TypeError, match="tensor"):
        wg.tensor(["a", "b"])


def test_python_int_overflow_refused(backend):
    assert wg.tensor([1, -2 ** 31]).tolist() == [1, -2 ** 31]
    with pytest.raises(OverflowError, match="int64"):
        wg.tensor([1, 2 ** 63])
    with pytest.raises(OverflowError, match="int32"):
        wg.tensor([1, 2 ** 31], dtype=wg.int32)


@pytest.mark.parametrize("code, dtype", [("f", wg.float32), ("d", wg.float64), ("i", wg.int32),
                                         ("q", wg.int64), ("b", wg.int64)])
def test_from_array_array(code, dtype):
    t = wg.tensor(array.array(code, [1, 2, 3]))
    assert t.dtype is dtype and t.shape == (3,) and t.tolist() == [1, 2, 3]


def test_from_memoryview_keeps_shape():
    buf = memoryview(np.arange(6, dtype=np.float32).reshape(2, 3))
    t = wg.tensor(buf)
    assert t.shape == (2, 3) and t.dtype is wg.float32
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_from_bytes_is_uint8_data():
    t = wg.tensor(b"\x01\x02\xff")
    assert t.tolist() == [1, 2, 255] and t.dtype is wg.int64


@pytest.mark.parametrize("np_dtype, dtype", [
    (np.float32, wg.float32), (np.float64, wg.float64), (np.int32, wg.int32), (np.bool_, wg.bool),
    (np.int64, wg.int64), (np.int16, wg.int16), (np.uint8, wg.uint8), (np.int8, wg.int8), (np.float16, wg.float16),
    (np.uint16, wg.int64), (np.uint32, wg.int64),
])
def test_from_numpy(np_dtype, dtype, backend):
    """numpy's dtypes as torch.from_numpy keeps them; those webgrad lacks (uint16, uint32) become int64."""
    a = np.array([[0, 1, 1], [1, 0, 1]]).astype(np_dtype)   # (a backend lacking dtype: deselected, see conftest)
    t = wg.tensor(a)
    assert t.dtype is dtype and t.shape == (2, 3) and t.device == backend
    np.testing.assert_array_equal(t.numpy(), a)


def test_from_numpy_takes_arrays_of_numpy_subclasses(tmp_path):
    """A memory-mapped file (nanoGPT's data loader) is an ndarray, as torch.from_numpy takes it."""
    data = np.memmap(tmp_path / "tokens.bin", dtype=np.uint16, mode="w+", shape=(8,))
    data[:] = np.arange(8)
    t = wg.from_numpy(data[2:5].astype(np.int64))
    assert t.tolist() == [2, 3, 4] and t.dtype is wg.int64
    assert wg.from_numpy(np.memmap(tmp_path / "tokens.bin", dtype=np.uint16, mode="r")).tolist() == list(range(8))
    with pytest.raises(TypeError, match="expected np.ndarray .got list"):
        wg.from_numpy([1, 2])


def test_from_numpy_copies():
    a = np.array([1.0, 2.0], dtype=np.float32)
    t = wg.tensor(a)
    a[0] = 100.0
    assert t.tolist() == [1.0, 2.0]


def test_from_numpy_non_contiguous_and_scalars():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2].T
    np.testing.assert_array_equal(wg.tensor(a).numpy(), a)
    assert wg.tensor(np.float64(2.5)).dtype is wg.float64
    assert wg.tensor(np.int64(3)).dtype is wg.int64 and wg.tensor(np.int64(3)).item() == 3
    assert wg.tensor([np.float32(1.5), np.float32(2.0)]).tolist() == [1.5, 2.0]


def test_gpu_int64_outside_32_bits_refused(gpu):
    """WebGPU has no 64-bit integers: the GPU backends hold int64 in 32 bits and refuse what does not fit."""
    big = [0, 2 ** 40]
    assert wg.tensor(np.array(big)).tolist() == big
    for data in (np.array(big), big):
        with pytest.raises(OverflowError, match="does not fit in int64 on wgpu, which holds it in 32 bits|"
                                                "do not fit in int64 on wgpu, which holds it in 32 bits"):
            wg.tensor(data, device="wgpu")
    assert wg.tensor(np.array([-2 ** 31, 2 ** 31 - 1]), device="wgpu").numpy().dtype == np.int64


def test_numpy_complex_arrays_keep_their_dtype():
    assert wg.tensor(np.array([1 + 2j])).dtype is wg.complex128
    assert wg.tensor(np.array([1 + 2j], np.complex64)).tolist() == [1 + 2j]
    with pytest.raises(TypeError, match="dtype"):
        wg.tensor(np.array([1 + 2j], np.clongdouble))


def test_tensor_of_tensor_copies_and_detaches():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = wg.tensor(x)
    assert not y.requires_grad and y.is_leaf and y.tolist() == [1.0, 2.0]
    assert wg.tensor(x, dtype=wg.float64).dtype is wg.float64


LEGACY_SIZES = ["(2, 3)", "()", "(lib.Size([2, 3]))", "(0, 4)"]
LEGACY_DATA = ["([1, 2])", "((2, 3))", "([[1, 2], [3, 4]], device='cpu')", "(np.ones(2))"]


@pytest.mark.parametrize("args", LEGACY_SIZES + LEGACY_DATA)
def test_legacy_constructor_as_torch(args):
    """``torch.Tensor(...)``: sizes make an uninitialised tensor, data a tensor, both in the default dtype."""
    ours, theirs = (eval(f"lib.Tensor{args}", {"lib": lib, "np": np}) for lib in (wg, torch))
    assert ours.shape == theirs.shape and ours.dtype.name == str(theirs.dtype).split(".")[1]
    if args in LEGACY_DATA:
        assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("args", ["([1.0], requires_grad=True)", "([1], dtype=lib.float64)", "(3.5)", "(True)",
                                  "(-1, 2)", "(2.0, 3)"])
def test_legacy_constructor_refuses_as_torch(args):
    for lib in (wg, torch):
        with pytest.raises((TypeError, RuntimeError)) as caught:
            eval(f"lib.Tensor{args}", {"lib": lib})
        assert type(caught.value).__name__ == ("RuntimeError" if "-1" in args else "TypeError")


def test_legacy_constructor_of_a_tensor_is_an_alias():
    x = wg.ones(2, dtype=wg.float64, requires_grad=True)
    y = wg.Tensor(x)
    assert y.dtype is wg.float64 and y.requires_grad and not y.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    z = wg.ones(2)
    wg.Tensor(z).add_(1)
    assert z.tolist() == [2.0, 2.0]


# ---------------------------------------------------------------- data access

def test_tolist_and_item():
    assert wg.tensor(2.5).tolist() == 2.5
    assert wg.tensor([[1, 2]]).tolist() == [[1, 2]]
    assert wg.tensor([[7.0]]).item() == 7.0
    assert isinstance(wg.tensor(3).item(), int) and isinstance(wg.tensor(True).item(), bool)


def test_item_on_many_elements_refused():
    with pytest.raises(RuntimeError, match="item: a Tensor with 2 elements cannot be converted to Scalar"):
        wg.tensor([1.0, 2.0]).item()   # RuntimeError, as PyTorch's


def test_numpy_and_asarray():
    t = wg.tensor([[1.0, 2.0]])
    a = t.numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.float32 and a.shape == (1, 2)
    b = np.asarray(t)
    assert b.dtype == np.float32 and b.tolist() == [[1.0, 2.0]]
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.asarray(wg.tensor(3)).shape == ()


def test_numpy_refused_when_requires_grad():
    t = wg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        t.numpy()
    assert t.detach().numpy().tolist() == [1.0]


def test_async_data():
    t = wg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert asyncio.run(t.read()) == [[1.0, 2.0], [3.0, 4.0]]


# ---------------------------------------------------------------- metadata and Python protocols

def test_metadata():
    t = wg.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.dim() == 3
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.numel() == 24 and len(t) == 2
    assert t.dtype is wg.float32 and t.is_floating_point() and t.element_size() == 4
    assert wg.tensor(1.0).numel() == 1 and wg.zeros(0, 3).numel() == 0
    with pytest.raises(IndexError, match="size"):
        t.size(3)


def test_len_and_iter_of_scalar_refused():
    with pytest.raises(TypeError, match="0-d"):
        len(wg.tensor(1.0))
    with pytest.raises(TypeError, match="0-d"):
        iter(wg.tensor(1.0))


def test_iter_yields_rows():
    rows = list(wg.tensor([[1, 2], [3, 4]]))
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]


def test_scalar_conversions():
    assert bool(wg.tensor([1.0])) is True and bool(wg.tensor(0)) is False
    assert float(wg.tensor(2)) == 2.0 and int(wg.tensor(2.9)) == 2
    assert [10, 20, 30][wg.tensor(1)] == 20
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(wg.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="index"):
        [1, 2][wg.tensor(1.0)]


LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_tensor_types_construct_as_torch(name):
    """torch.FloatTensor(2, 3) (sizes), FloatTensor([..]) and FloatTensor((2, 3)) (data), FloatTensor():
    cpu tensors of the type's dtype."""
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(wg, name), getattr(torch, name)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    for args in [(2, 3), ([1, 0, 2],), ((2, 3),), ([[1.5], [0.0]],), ()]:
        got, want = ours(*args), theirs(*args)
        assert got.shape == tuple(want.shape) and got.dtype is ours.dtype and got.device == "cpu"
        if args and not all(isinstance(a, int) for a in args):
            assert got.tolist() == (want.float() if name in ("HalfTensor", "BFloat16Tensor") else want).tolist()


def test_legacy_tensor_types_instance_checks_alias_and_convert(backend):
    torch = pytest.importorskip("torch")
    x = wg.ones(2, 3, device="cpu")
    assert isinstance(x, wg.FloatTensor) and not isinstance(x, wg.LongTensor) and not isinstance([1.0], wg.FloatTensor)
    assert isinstance(wg.ones(2), wg.FloatTensor) == (backend == "cpu")   # CPU types, as torch's
    alias = wg.FloatTensor(x)                       # a tensor of the type: shares its data, as torch's
    alias[0, 0] = 5.0
    assert x[0, 0].item() == 5.0
    with pytest.raises(TypeError, match=r"FloatTensor\(\): expected a cpu float32 tensor, got a cpu int64"):
        wg.FloatTensor(wg.ones(2, dtype=wg.long, device="cpu"))
    with pytest.raises(TypeError, match=r"FloatTensor\(\): expected sizes"):
        wg.FloatTensor(2, 3.0)
    t, tt = wg.ones(2, device=backend) * 1.5, torch.ones(2) * 1.5
    assert t.type(wg.LongTensor).tolist() == tt.type(torch.LongTensor).tolist()   # dtype = torch.LongTensor
    assert t.type(wg.IntTensor).dtype is wg.int32


def test_legacy_types_of_the_small_integers():
    for name, dtype in [("ByteTensor", "uint8"), ("CharTensor", "int8"), ("ShortTensor", "int16")]:
        got, want = getattr(wg, name)([1, 2]), getattr(torch, name)([1, 2])
        assert got.dtype.name == dtype == str(want.dtype)[6:] and got.tolist() == want.tolist()
        assert got.type() == want.type() == f"torch.{name}" and isinstance(got, getattr(wg, name))


def test_hashable_by_identity():
    a, b = wg.tensor(1.0), wg.tensor(1.0)
    assert len({a, b, a}) == 2


def test_to_dtype():
    t = wg.tensor([1.5, -2.5])
    assert t.to(wg.int32).tolist() == [1, -2]
    assert t.to(wg.float64).dtype is wg.float64
    assert t.to("float64").dtype is wg.float64
    assert t.to(dtype=wg.bool).tolist() == [True, True]
    assert t.to(wg.float32) is t
    assert t.to(wg.tensor([1], dtype=wg.float64)).dtype is wg.float64
    assert t.type() == "torch.FloatTensor" and t.type(wg.float64).dtype is wg.float64
    with pytest.raises(ValueError, match="unknown backend 'uint16'"):   # a string names a device, as in torch
        t.to("uint16")


def test_to_dtype_is_differentiable():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    y = x.to(wg.float64)
    assert y.requires_grad and y.grad_fn is not None
    y.backward(wg.tensor([1.0, 3.0], dtype=wg.float64))
    assert x.grad.dtype is wg.float32 and x.grad.tolist() == [1.0, 3.0]


def test_to_int_cuts_the_graph():
    x = wg.tensor([1.0, 2.0], requires_grad=True)
    assert not x.to(wg.int32).requires_grad


def test_to_same_backend_is_identity(backend):
    t = wg.tensor([1.0])
    assert t.to(backend) is t and t.device == backend and t.cpu().device == "cpu"


# ---------------------------------------------------------------- repr, like PyTorch's

@pytest.mark.parametrize("make, text", [
    (lambda: wg.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: wg.tensor(3.0), "tensor(3.)"),
    (lambda: wg.tensor([1.5, 2.25]), "tensor([1.5000, 2.2500])"),
    (lambda: wg.tensor([1.0, 10.0]), "tensor([ 1., 10.])"),
    (lambda: wg.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
    (lambda: wg.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: wg.tensor([1, -20]), "tensor([  1, -20])"),
    (lambda: wg.tensor([True, False]), "tensor([ True, False])"),
    (lambda: wg.tensor([1.0, 2.0], dtype=wg.float64), "tensor([1., 2.], dtype=webgrad.float64)"),
    (lambda: wg.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: wg.tensor([float("nan"), 1.0, float("inf")]), "tensor([nan, 1., inf])"),
])
def test_repr(make, text):
    assert repr(make()) == text


def test_repr_matches_torch():
    torch = pytest.importorskip("torch")
    for v in ([1.5, 2.25], [[1.0, 2.0], [30.0, 4.0]], [[[1.0, 2.0]], [[3.0, 40.0]]], [1e-5, 1.0], 3.5, -0.0,
              [1e9, 1.0], [True, False], [0.1, 0.25, 123.5]):
        assert repr(wg.tensor(v)) == repr(torch.tensor(v)), v


@pytest.mark.parametrize("n", [3, 300, 1025])
def test_bool_fills_of_any_size(n, backend):
    """Found by tests/fuzz: on the GPU a bool fill past the upload threshold failed to compile
    (a float converted into vec4<u32>)."""
    for v in (True, False):
        assert wg.full((n,), v).tolist() == [v] * n
        assert wg.zeros(n, dtype=wg.bool).fill_(v).tolist() == [v] * n


def test_integer_linspace_truncates_as_torch(backend):
    """Found by tests/fuzz: an integer linspace stepped in integers (linspace(0, 1, 3) gave 0, 0, 0);
    PyTorch's takes the ends as integers and truncates the float values between them."""
    assert wg.linspace(0, 1, 3, dtype=wg.int32).tolist() == [0, 0, 1]
    assert wg.linspace(1, 2.5, 4, dtype=wg.int64).tolist() == [1, 1, 1, 2]
    assert wg.linspace(-3, 4, 5, dtype=wg.int64).tolist() == [-3, -1, 0, 2, 4]


RANGE_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32"]
LINSPACES = [(0, 1, 7), (-3.3, 7.1, 100), (1e-3, 5, 33), (-1, 1, 1000), (2, -5, 17), (0.1, 0.7, 30000), (3, 3, 4),
             (0, 1, 1), (5, 9, 0), (-100, 100, 77)]
ARANGES = [(0, 1, 0.1), (-3.3, 7.1, 0.37), (0.001, 5, 0.013), (-1, 1, 0.002), (0, 3, 1e-4), (0, 50, 0.7)]  # within 32768 values: see float_range


def _same_as_torch(ours, theirs, backend):
    """Bit for bit on cpu; on the GPU backends (float32 arithmetic; WGSL's fma need not be fused) within an
    ulp of the largest value."""
    ulp = 2.0 ** -23 if ours.dtype.itemsize >= 4 else 2.0 ** -10
    ours, theirs = ours.cpu().double().numpy(), theirs.double().numpy()
    if backend == "cpu":
        np.testing.assert_array_equal(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=ulp * max(1.0, np.abs(theirs).max(initial=0)))


@pytest.mark.parametrize("dtype", RANGE_DTYPES)
def test_linspace_is_torchs_to_the_last_bit(dtype, backend):
    """PyTorch's linspace: the first half from start, the rest back from end, each a fused multiply-add
    (float16/bfloat16: each operation rounded to the dtype); integers computed in float64 and truncated."""
    for start, end, steps in LINSPACES:
        _same_as_torch(wg.linspace(start, end, steps, dtype=getattr(wg, dtype)),
                       torch.linspace(start, end, steps, dtype=getattr(torch, dtype)), backend)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_float_arange_is_torchs_to_the_last_bit(dtype, backend):
    """PyTorch's float arange computes by vectors of lanes (see backends/cpu/creation.float_range)."""
    for start, end, step in ARANGES:
        _same_as_torch(wg.arange(start, end, step, dtype=getattr(wg, dtype)),
                       torch.arange(start, end, step, dtype=getattr(torch, dtype)), backend)


@pytest.mark.parametrize("convert", [int, float])
def test_int_and_float_of_many_elements_raise_torchs_value_error(convert):
    for lib in (wg, torch):
        with pytest.raises(ValueError, match="only one element tensors"):
            convert(lib.tensor([1, 2]))
    assert convert(wg.tensor([[2.5]])) == convert(torch.tensor([[2.5]]))


NUMPY_SCALAR_LISTS = [[np.float64(1.5)], [np.float32(1.5)], [np.int32(1)], [np.float16(1)], [np.bool_(True)],
                      [1, np.float64(2.5)], [[np.float64(1)], [2.0]], [np.int32(1), 2], [np.float32(1), 2.5],
                      [np.float16(1), 2.5], [True, np.int32(2)], [np.float32(1), np.float64(2)], [1, 2], [1.5]]


@pytest.mark.parametrize("data", NUMPY_SCALAR_LISTS, ids=repr)
def test_numpy_scalars_in_lists_bring_their_dtype_as_in_torch(data, backend):
    """torch.tensor promotes over every element's type: a numpy scalar counts with its dtype (an RL
    program's numpy rewards make a float64 tensor), a Python float with the default dtype."""
    theirs = torch.tensor(data)
    if str(theirs.dtype).split(".")[1] not in {d.name for d in wg.get_backend().dtypes}:
        with pytest.raises(TypeError, match="not supported"):   # float64 on a GPU backend, as a float64 array
            wg.tensor(data)
        return
    ours = wg.tensor(data)
    assert ours.dtype.name == str(theirs.dtype).split(".")[1] and ours.tolist() == theirs.tolist()
