"""uint8, int8 and int16 as PyTorch has them: names, promotion against every dtype and Python scalar,
creation, casts, wrap-around arithmetic, reductions' dtypes, printing, errors, numpy and file round
trips, and an MNIST-like uint8 pipeline. The GPU backends refuse them by name (8- and 16-bit integers
would need wrap-around WGSL's 32-bit integers do not give), so their tests with a small-int dtype
parameter are deselected there (tests/conftest.py) and the refusal is tested on its own."""
import io
import itertools

import numpy as np
import pytest
import torch

import webgrad as wg
from webgrad.utils.data import DataLoader, TensorDataset

SMALL = ["uint8", "int8", "int16"]
ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
       "complex64", "complex128"]
# values that cross every small dtype's range, as int64 (what casts and wrap-around start from)
WIDE = [0, 1, -1, 127, 128, -128, -129, 255, 256, 300, -300, 32767, 32768, -32769, 70000]


def name(dtype) -> str:
    return str(dtype).split(".")[-1]


def both(values, dtype):
    """(webgrad tensor, torch tensor) of ``values`` in ``dtype`` (a name)."""
    return wg.tensor(values, dtype=getattr(wg, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))


def assert_same(got, want):
    assert name(got.dtype) == name(want.dtype), (got.dtype, want.dtype)
    assert got.tolist() == want.tolist()


# ------------------------------------------------------------------ names and limits
@pytest.mark.parametrize("dtype", SMALL)
def test_names_limits_and_sizes_are_torchs(dtype):
    w, t = getattr(wg, dtype), getattr(torch, dtype)
    assert w.name == name(t) and w.itemsize == t.itemsize and w.is_signed == t.is_signed
    assert w.is_floating == t.is_floating_point and w.is_complex == t.is_complex
    info, want = wg.iinfo(w), torch.iinfo(t)
    assert (info.min, info.max, info.bits, info.dtype) == (want.min, want.max, want.bits, want.dtype)
    assert wg.short is wg.int16 and name(torch.short) == wg.short.name
    assert wg.tensor([1, 2], dtype=w).element_size() == torch.tensor([1, 2], dtype=t).element_size()


# ------------------------------------------------------------------ promotion
@pytest.mark.parametrize("a, b", list(itertools.product(SMALL, ALL)))
def test_promote_types_is_torchs(a, b):
    want = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert wg.promote_types(getattr(wg, a), getattr(wg, b)).name == name(want)
    assert wg.promote_types(getattr(wg, b), getattr(wg, a)).name == name(want)


@pytest.mark.parametrize("a, b", list(itertools.product(SMALL, ALL)))
def test_result_type_of_tensors_with_and_without_dims_is_torchs(a, b):
    wa, ta = wg.ones(2, dtype=getattr(wg, a), device="cpu"), torch.ones(2, dtype=getattr(torch, a))
    wb, tb = wg.ones((), dtype=getattr(wg, b), device="cpu"), torch.ones((), dtype=getattr(torch, b))
    for (x, y), (tx, ty) in [((wa, wb), (ta, tb)), ((wb, wa), (tb, ta)), ((wa[:1] * 0 + wa[0], wb), (ta, tb))]:
        assert wg.result_type(x, y).name == name(torch.result_type(tx, ty))
    wa0, ta0 = wg.ones((), dtype=getattr(wg, a), device="cpu"), torch.ones((), dtype=getattr(torch, a))
    wb1, tb1 = wg.ones(2, dtype=getattr(wg, b), device="cpu"), torch.ones(2, dtype=getattr(torch, b))
    assert wg.result_type(wa0, wb1).name == name(torch.result_type(ta0, tb1))


@pytest.mark.parametrize("dtype", SMALL)
@pytest.mark.parametrize("scalar", [True, 3, -3, 1000, 2.5, 1j])
def test_result_type_with_python_scalars_is_torchs(dtype, scalar):
    w, t = wg.ones(2, dtype=getattr(wg, dtype), device="cpu"), torch.ones(2, dtype=getattr(torch, dtype))
    assert wg.result_type(w, scalar).name == name(torch.result_type(t, scalar))
    assert wg.result_type(scalar, w).name == name(torch.result_type(scalar, t))


# ------------------------------------------------------------------ creation
@pytest.mark.parametrize("dtype", SMALL)
def test_creation_as_torchs(backend, dtype):
    info = torch.iinfo(getattr(torch, dtype))
    edge = [info.min, info.max, 0] + ([-1, -255] if dtype == "uint8" else [])   # uint8 takes -255..-1, wrapped
    assert_same(*both(edge, dtype))
    for bad in (info.max + 1, -256 if dtype == "uint8" else info.min - 1):
        with pytest.raises(RuntimeError, match=f"{bad}.*{dtype}"):
            wg.tensor([bad], dtype=getattr(wg, dtype))
        with pytest.raises(RuntimeError):
            torch.tensor([bad], dtype=getattr(torch, dtype))
    assert_same(wg.arange(5, dtype=getattr(wg, dtype)), torch.arange(5, dtype=getattr(torch, dtype)))
    assert_same(wg.zeros(2, 3, dtype=getattr(wg, dtype)), torch.zeros(2, 3, dtype=getattr(torch, dtype)))
    assert_same(wg.full((2,), 7, dtype=getattr(wg, dtype)), torch.full((2,), 7, dtype=getattr(torch, dtype)))
    assert_same(wg.ones_like(wg.tensor([1.5, 2.5]), dtype=getattr(wg, dtype)),
                torch.ones_like(torch.tensor([1.5, 2.5]), dtype=getattr(torch, dtype)))
    assert wg.tensor([1], dtype=getattr(wg, dtype)).device == backend


@pytest.mark.parametrize("dtype", SMALL)
def test_numpy_round_trips_keep_the_dtype(backend, dtype):
    a = np.array([[0, 1, 100], [2, 3, 127]], dtype=dtype)
    for make in (wg.tensor, wg.from_numpy, wg.as_tensor):
        t = make(a)
        assert t.dtype.name == name(torch.from_numpy(a).dtype) == dtype
        back = t.numpy()
        assert back.dtype == a.dtype and np.array_equal(back, a)
    assert wg.tensor([np.int8(3), np.uint8(4)]).dtype.name == name(torch.tensor([np.int8(3), np.uint8(4)]).dtype)


def test_a_gpu_refuses_the_small_ints_by_name(backend):
    if wg.uint8 in wg.get_backend().dtypes:
        assert wg.tensor([1], dtype=wg.uint8).dtype is wg.uint8
        return
    for dtype in SMALL:
        with pytest.raises(TypeError, match=rf"{dtype} is not supported on the GPU backend '{backend}'.*\.float\(\)"):
            wg.tensor([1, 2], dtype=getattr(wg, dtype))
        with pytest.raises(TypeError, match=rf"{dtype} is not supported on the GPU backend '{backend}'.*\.long\(\)"):
            wg.tensor([1, 2], dtype=getattr(wg, dtype), device="cpu").to(backend)
        with pytest.raises(TypeError, match=dtype):
            wg.ones(3).to(getattr(wg, dtype))
    image = np.array([[0, 255], [128, 7]], dtype=np.uint8)      # numpy's uint8 becomes int64 there, exactly
    t = wg.tensor(image)
    assert t.dtype is wg.int64 and t.tolist() == image.tolist()
    assert (t.float() / 255).tolist() == (torch.from_numpy(image).float() / 255).tolist()


# ------------------------------------------------------------------ casts
@pytest.mark.parametrize("dtype", SMALL)
def test_casts_from_wider_types_wrap_as_torchs(dtype):
    assert_same(wg.tensor(WIDE).to(getattr(wg, dtype)), torch.tensor(WIDE).to(getattr(torch, dtype)))
    floats = [0.0, 1.7, -1.7, 127.9, 255.5, 300.0, -300.0, 1000.0, 70000.0]
    for f in ("float32", "float64"):
        assert_same(both(floats, f)[0].to(getattr(wg, dtype)), both(floats, f)[1].to(getattr(torch, dtype)))
    assert_same(both([True, False], "bool")[0].to(getattr(wg, dtype)), torch.tensor([True, False]).to(getattr(torch, dtype)))


@pytest.mark.parametrize("dtype, target", list(itertools.product(SMALL, ALL)))
def test_casts_to_every_dtype_as_torchs(dtype, target):
    values = torch.tensor(WIDE).to(getattr(torch, dtype)).tolist()
    w, t = both(values, dtype)
    got, want = w.to(getattr(wg, target)), t.to(getattr(torch, target))
    assert name(got.dtype) == name(want.dtype)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("method, dtype", [("byte", "uint8"), ("char", "int8"), ("short", "int16")])
def test_cast_methods_and_type_names(method, dtype):
    w, t = wg.tensor(WIDE), torch.tensor(WIDE)
    assert_same(getattr(w, method)(), getattr(t, method)())
    assert getattr(w, method)().type() == getattr(t, method)().type()
    assert w.type(getattr(t, method)().type()).dtype.name == dtype


# ------------------------------------------------------------------ arithmetic
BINARY = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "floor_divide": lambda m, a, b: a // b, "remainder": lambda m, a, b: a % b,
    "fmod": lambda m, a, b: m.fmod(a, b), "trunc_div": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "true_div": lambda m, a, b: a / b, "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b), "and": lambda m, a, b: a & b, "or": lambda m, a, b: a | b,
    "xor": lambda m, a, b: a ^ b, "lt": lambda m, a, b: a < b, "eq": lambda m, a, b: a == b,
}


def operands(dtype):
    """Two rows in ``dtype`` whose sums, differences and products overflow it (no zero divisor)."""
    info = torch.iinfo(getattr(torch, dtype))
    a = [info.max, info.min, info.max - 1, 7, -7 if info.min else 200, 100, 0]
    b = [1, -1 if info.min else 3, info.max, 3, -3 if info.min else 9, 100, 5]
    return a, b


@pytest.mark.parametrize("dtype", SMALL)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_ops_wrap_around_as_torchs(backend, dtype, op):
    a, b = operands(dtype)
    (wa, ta), (wb, tb) = both(a, dtype), both(b, dtype)
    got, want = BINARY[op](wg, wa, wb), BINARY[op](torch, ta, tb)
    assert name(got.dtype) == name(want.dtype)
    np.testing.assert_allclose(np.array(got.tolist(), dtype=float), np.array(want.tolist(), dtype=float), rtol=1e-6)


@pytest.mark.parametrize("dtype", SMALL)
@pytest.mark.parametrize("scalar", [1, 300, -1, 70000, 2.5, True])
def test_python_scalars_wrap_into_the_dtype_as_torchs(dtype, scalar):
    w, t = both(operands(dtype)[0], dtype)
    for op in ("add", "sub", "mul") if scalar is not True else ("add", "mul"):   # (- True raises, tested elsewhere)
        assert_same(BINARY[op](wg, w, scalar), BINARY[op](torch, t, scalar))
        assert_same(BINARY[op](wg, scalar, w), BINARY[op](torch, scalar, t))


def test_mixed_small_ints_promote_and_compute_as_torchs():
    pairs = [("uint8", "int8"), ("uint8", "int16"), ("int8", "int16"), ("uint8", "int64"), ("bool", "uint8"),
             ("uint8", "int32"), ("int8", "float16"), ("uint8", "float32")]
    for a, b in pairs:
        (wa, ta), (wb, tb) = both([1, 0, 1], a), both([100, 127, 1], b)
        for op in ("add", "mul", "sub") if "bool" not in (a, b) else ("add", "mul"):
            assert_same(BINARY[op](wg, wa, wb), BINARY[op](torch, ta, tb))
    assert_same(wg.tensor([200], dtype=wg.uint8) + wg.tensor(1000), torch.tensor([200], dtype=torch.uint8) + torch.tensor(1000))


@pytest.mark.parametrize("dtype", SMALL)
def test_unary_ops_as_torchs(dtype):
    w, t = both(operands(dtype)[0], dtype)
    for fn in ("neg", "abs", "sign", "bitwise_not", "square", "clone"):
        assert_same(getattr(w, fn)(), getattr(t, fn)())
    assert_same(w.clamp(0, 100), t.clamp(0, 100))
    assert_same(w << 1, t << 1)
    assert_same(w >> 1, t >> 1)
    assert_same(w.pow(2), t.pow(2))
    for fn in ("sqrt", "exp", "sin"):   # floating functions give the default float, as PyTorch's
        np.testing.assert_allclose(getattr(w, fn)().numpy(), getattr(t, fn)().numpy(), rtol=1e-6)
        assert getattr(w, fn)().dtype is wg.float32


@pytest.mark.parametrize("dtype", SMALL)
def test_integer_division_by_zero_raises_as_torchs(dtype):
    w, t = both([1, 2], dtype)
    zw, zt = both([1, 0], dtype)
    for op in ("floor_divide", "remainder", "fmod", "trunc_div"):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            BINARY[op](torch, t, zt)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            BINARY[op](wg, w, zw)
    assert_same(w / zw, t / zt)   # true division: floats, inf


# ------------------------------------------------------------------ reductions
@pytest.mark.parametrize("dtype", SMALL)
def test_reductions_give_torchs_dtypes(backend, dtype):
    a = torch.tensor(operands(dtype)[0], dtype=getattr(torch, dtype)).reshape(-1, 1).repeat(1, 3)
    w, t = wg.tensor(a.tolist(), dtype=getattr(wg, dtype)), a
    for fn in ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all", "count_nonzero"):
        assert_same(getattr(w, fn)(), getattr(t, fn)())
    for fn in ("cumsum", "cumprod", "sum", "amax"):
        assert_same(getattr(w, fn)(0), getattr(t, fn)(0))
    assert_same(w.sum(1, dtype=getattr(wg, dtype)), t.sum(1, dtype=getattr(torch, dtype)))   # wraps, as asked
    assert_same(w.max(0).values, t.max(0).values)
    assert_same(w.sort(0).values, t.sort(0).values)
    with pytest.raises(RuntimeError, match="mean"):
        w.mean()
    assert w.float().mean().item() == pytest.approx(t.float().mean().item())


# ------------------------------------------------------------------ printing, errors
@pytest.mark.parametrize("dtype", SMALL)
def test_printing_is_torchs(dtype):
    for values in ([1, 2, 100], [[0, 1], [2, 3]], 7, []):
        w, t = both(values, dtype)
        assert repr(w) == repr(t).replace("torch.", "webgrad.")
        assert str(w) == str(t).replace("torch.", "webgrad.")


@pytest.mark.parametrize("dtype", SMALL)
def test_small_ints_cannot_require_grad(dtype):
    with pytest.raises(RuntimeError):
        torch.tensor([1], dtype=getattr(torch, dtype)).requires_grad_()
    with pytest.raises(RuntimeError, match=dtype):
        wg.tensor([1], dtype=getattr(wg, dtype)).requires_grad_()


# ------------------------------------------------------------------ files
@pytest.mark.parametrize("dtype", SMALL)
def test_save_and_load_keep_the_dtype(backend, dtype, tmp_path):
    w = wg.tensor(torch.tensor(WIDE).to(getattr(torch, dtype)).tolist(), dtype=getattr(wg, dtype))
    buf = io.BytesIO()
    wg.save({"x": w}, buf)
    got = wg.load(io.BytesIO(buf.getvalue()))["x"]
    assert got.dtype is w.dtype and got.tolist() == w.tolist()
    safetensors_torch = pytest.importorskip("safetensors.torch")
    wg.save({"x": w}, tmp_path / "x.safetensors")
    back = safetensors_torch.load_file(str(tmp_path / "x.safetensors"))["x"]
    assert name(back.dtype) == dtype and back.tolist() == w.tolist()


# ------------------------------------------------------------------ an MNIST-like pipeline
def test_uint8_images_through_a_data_loader_as_torchs(backend):
    """``torch.from_numpy(uint8 images)``, a TensorDataset, a DataLoader, then ``x.float() / 255`` and a
    linear layer, on the cpu (the GPU backends get the float batch, as they hold no uint8)."""
    rng = np.random.default_rng(0)
    images, labels = rng.integers(0, 256, (10, 4, 4), dtype=np.uint8), rng.integers(0, 10, 10)
    wdata = TensorDataset(wg.from_numpy(images).to("cpu"), wg.from_numpy(labels).to("cpu"))
    tdata = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
    weight = rng.standard_normal((16, 3)).astype(np.float32)
    for (wx, wy), (tx, ty) in zip(DataLoader(wdata, batch_size=4), torch.utils.data.DataLoader(tdata, batch_size=4)):
        assert wx.dtype is wg.uint8 and name(tx.dtype) == "uint8" and wx.tolist() == tx.tolist()
        wx = (wx.float() / 255).to(backend).flatten(1)
        tx = (tx.float() / 255).flatten(1)
        np.testing.assert_allclose(wx.numpy(), tx.numpy(), rtol=1e-7)
        out = wx @ wg.tensor(weight)
        np.testing.assert_allclose(out.numpy(), (tx @ torch.from_numpy(weight)).numpy(), rtol=1e-5, atol=1e-6)
        assert wy.tolist() == ty.tolist()


# ------------------------------------------------------------------ as indices, masks, targets, fills
def test_uint8_index_is_a_mask_and_the_others_are_refused_as_torchs():
    x, tx = wg.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    with pytest.warns(UserWarning, match="uint8"):
        got = x[wg.tensor([1, 0], dtype=wg.uint8)]
    with pytest.warns(UserWarning, match="uint8"):
        want = tx[torch.tensor([1, 0], dtype=torch.uint8)]
    assert got.tolist() == want.tolist()
    with pytest.warns(UserWarning, match="uint8"):
        assert x[:, wg.tensor([1, 0, 2], dtype=wg.uint8)].tolist() == tx[:, torch.tensor([1, 0, 2], dtype=torch.uint8)].tolist()
    for dtype in ("int8", "int16"):
        with pytest.raises(IndexError, match="long, int, byte or bool"):
            tx[torch.tensor([1, 0], dtype=getattr(torch, dtype))]
        with pytest.raises(IndexError, match=f"long, int, byte or bool.*{dtype}"):
            x[wg.tensor([1, 0], dtype=getattr(wg, dtype))]
    for dtype in SMALL:   # PyTorch raises RuntimeError, webgrad TypeError (as for any non-index dtype here)
        index = wg.tensor([[1], [0]], dtype=getattr(wg, dtype))
        for call in (lambda: x.index_select(0, index[:, 0]), lambda: x.gather(1, index),
                     lambda: wg.nn.functional.one_hot(index), lambda: wg.nn.functional.embedding(index, x)):
            with pytest.raises(TypeError, match=f"int64 or int32|long or int.*{dtype}"):
                call()


def test_uint8_condition_and_targets_as_torchs():
    cond = [1, 0, 2]
    with pytest.warns(UserWarning, match="uint8 condition"):
        got = wg.where(wg.tensor(cond, dtype=wg.uint8), 1.0, 0.0)
    with pytest.warns(UserWarning, match="uint8 condition"):
        want = torch.where(torch.tensor(cond, dtype=torch.uint8), 1.0, 0.0)
    assert got.tolist() == want.tolist()
    logits = [[0.5, 1.5, -1.0], [2.0, 0.0, 1.0]]
    got = wg.nn.functional.cross_entropy(wg.tensor(logits), wg.tensor([2, 0], dtype=wg.uint8))
    want = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor([2, 0], dtype=torch.uint8))
    assert got.item() == pytest.approx(want.item(), rel=1e-6)


@pytest.mark.parametrize("dtype", SMALL)
def test_fills_and_bounds_wrap_or_raise_as_torchs(dtype):
    info = torch.iinfo(getattr(torch, dtype))
    for value in (-1, info.max, info.min, 2.7, True):
        assert_same(wg.full((2,), value, dtype=getattr(wg, dtype)), torch.full((2,), value, dtype=getattr(torch, dtype)))
        assert_same(wg.zeros(2, dtype=getattr(wg, dtype)).fill_(value), torch.zeros(2, dtype=getattr(torch, dtype)).fill_(value))
    for bad in (info.max + 1, -256 if dtype == "uint8" else info.min - 1):
        with pytest.raises(RuntimeError):
            torch.full((2,), bad, dtype=getattr(torch, dtype))
        with pytest.raises(RuntimeError, match=f"full: integer {bad} does not fit in {dtype}"):
            wg.full((2,), bad, dtype=getattr(wg, dtype))
        with pytest.raises(RuntimeError, match=f"fill_: integer {bad}"):
            wg.zeros(2, dtype=getattr(wg, dtype)).fill_(bad)
    w, t = both(operands(dtype)[0], dtype)
    for low, high in ((-5, None), (None, 100), (3, 100)):
        assert_same(w.clamp(low, high), t.clamp(low, high))
    with pytest.raises(RuntimeError):
        t.clamp(None, 70000)
    with pytest.raises(RuntimeError, match=f"clamp: integer 70000 does not fit in {dtype}"):
        w.clamp(None, 70000)


@pytest.mark.parametrize("dtype", SMALL)
def test_frombuffer_and_seeded_random_integers_are_torchs(dtype):
    raw = bytearray(b"\x01\xff\x02\x80\x7f\x00")
    assert_same(wg.frombuffer(raw, dtype=getattr(wg, dtype)), torch.frombuffer(raw, dtype=getattr(torch, dtype)))
    draws = {"random_": lambda m: m.empty(6, dtype=getattr(m, dtype)).random_(),
             "random_(3, 9)": lambda m: m.empty(6, dtype=getattr(m, dtype)).random_(3, 9),
             "randint": lambda m: m.randint(0, 100, (6,), dtype=getattr(m, dtype)),
             "randperm": lambda m: m.randperm(6, dtype=getattr(m, dtype))}
    for make in draws.values():
        wg.manual_seed(3)
        torch.manual_seed(3)
        assert_same(make(wg), make(torch))


@pytest.mark.parametrize("dtype", SMALL)
def test_linspace_and_float_values_as_torchs(dtype):
    """Found by drawing the small ints in the fuzz suite: linspace ran the half-float path for 2-byte and
    1-byte ints, and a float value beyond the dtype's range (uint8's -0.5) was truncated, not refused."""
    for args in ((0, 1, 3), (0, 10, 4), (3, 100, 7), (0, 100, 11)):
        assert_same(wg.linspace(*args, dtype=getattr(wg, dtype)), torch.linspace(*args, dtype=getattr(torch, dtype)))
    info = torch.iinfo(getattr(torch, dtype))
    for bad in (info.min - 0.5, info.max + 0.5, float("nan"), float("inf")):
        for make in (lambda m: m.full((1,), bad, dtype=getattr(m, dtype)),
                     lambda m: m.tensor([bad], dtype=getattr(m, dtype))):
            with pytest.raises(RuntimeError):
                make(torch)
            with pytest.raises(RuntimeError, match=f"does not fit in {dtype}"):
                make(wg)
    assert_same(wg.tensor([2.7, -0.0], dtype=getattr(wg, dtype)), torch.tensor([2.7, -0.0], dtype=getattr(torch, dtype)))
