"""Checkpoints: wg.save/wg.load with PyTorch's signatures, without pickle. Nested structures round
trip on every backend, a resumed training run equals an uninterrupted one, map_location places
tensors as PyTorch's does, and files go both ways with the ``safetensors`` package and PyTorch.
(Strict header checks and the fuzz test: test_serialization_checks.py; atomic saves:
test_serialization_atomic.py.)"""
import io
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import safetensors.numpy
import safetensors.torch
import torch

import webgrad as wg
import webgrad.nn as nn
from backends_under_test import BACKENDS


def checkpoint():
    """A training checkpoint's worth of everything a checkpoint may hold."""
    w = wg.tensor([[1.5, -2.0], [3.0, float("inf")]])
    return {"model": OrderedDict(weight=w, bias=wg.tensor([-0.0, float("nan")])),
            "optimizer": {"state": {0: {"step": 3, "exp_avg": wg.zeros(2, 2)}},
                          "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0], "foreach": None}]},
            "iteration": 2 ** 40, "name": "run-7 ✓", "done": False, "tied": (w, w), "dtype": wg.float32,
            "ints": wg.tensor([-2 ** 31, 2 ** 31 - 1]), "mask": wg.tensor([True, False]), "scalar": wg.tensor(2.5),
            "empty": wg.zeros(0, 3), (1, "a"): "a tuple key", 2.5: [None, float("-inf"), -0.0], "": {}}


def assert_same(a, b, where="obj"):
    """``a`` and ``b`` hold the same things: types, dict order, tensors' dtype/shape/backend/values
    (bit for bit: nan, -0.0), floats by repr."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, wg.Tensor):
        assert (a.dtype, a.shape, a.device, a.requires_grad) == (b.dtype, b.shape, b.device, b.requires_grad), where
        assert repr(a.tolist()) == repr(b.tolist()), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert repr(a) == repr(b), where


def test_nested_checkpoint_round_trips_through_paths_files_and_bytes(backend, tmp_path):
    ck = checkpoint()
    wg.save(ck, tmp_path / "a.pt")
    wg.save(ck, str(tmp_path / "b.pt"))
    buf = io.BytesIO(b"prefix")
    buf.seek(6)
    wg.save(ck, buf)
    buf.seek(6)
    for back in (wg.load(tmp_path / "a.pt"), wg.load(str(tmp_path / "b.pt")), wg.load(buf),
                 wg.load(buf.getvalue()[6:]), wg.load(tmp_path / "a.pt", mmap=True)):
        assert_same(back, ck)
        assert back["tied"][0] is back["tied"][1]          # one tensor saved once comes back as one
        assert back["model"]["weight"] is back["tied"][0]
    assert (tmp_path / "a.pt").read_bytes() == buf.getvalue()[6:]


@pytest.mark.float64
def test_float64_round_trips(backend):
    t = wg.tensor([1e-300, -2.0, math.pi], dtype=wg.float64)
    buf = io.BytesIO()
    wg.save([t], buf)
    assert_same(wg.load(buf.getvalue()), [t])


def test_a_tensor_alone_and_parameters_keep_their_kind(backend):
    p = nn.Parameter(wg.ones(2))
    frozen = nn.Parameter(wg.ones(2), requires_grad=False)
    leaf = wg.ones(3, requires_grad=True)
    as_saved = [p, frozen, leaf, (leaf * 2).detach().requires_grad_()]    # a non-leaf comes back a leaf
    for obj, want in ((p, p), ([p, frozen, leaf, leaf * 2], as_saved)):
        buf = io.BytesIO()
        wg.save(obj, buf)
        back = wg.load(buf.getvalue())
        assert_same(back, want)
        assert all(t.is_leaf for t in (back if isinstance(back, list) else [back]))


def test_a_state_dict_is_a_plain_safetensors_file(backend, tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    model(wg.randn(5, 3))
    sd = model.state_dict()
    wg.save(sd, tmp_path / "m.safetensors", metadata={"format": "pt"})
    got = safetensors.numpy.load_file(str(tmp_path / "m.safetensors"))
    assert list(got) and set(got) == set(sd)
    for k, t in sd.items():
        np.testing.assert_array_equal(got[k], t.numpy())
        assert got[k].dtype == t.numpy().dtype
    with safetensors.safe_open(str(tmp_path / "m.safetensors"), "np") as f:
        assert f.metadata()["format"] == "pt"
    fresh = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    fresh.load_state_dict(wg.load(tmp_path / "m.safetensors"))
    assert_same(fresh.state_dict(), sd)


def train(model, opt, x, y, steps):
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()


def test_a_resumed_run_trains_exactly_as_an_uninterrupted_one(backend, tmp_path):
    wg.manual_seed(0)
    x, y = wg.randn(8, 3), wg.randn(8, 2)
    straight = nn.Linear(3, 2)
    wg.save(straight.state_dict(), tmp_path / "init.pt")
    train(straight, wg.optim.Adam(straight.parameters(), lr=0.05), x, y, 6)

    first = nn.Linear(3, 2)
    first.load_state_dict(wg.load(tmp_path / "init.pt"))
    opt = wg.optim.Adam(first.parameters(), lr=0.05)
    train(first, opt, x, y, 3)
    wg.save({"model": first.state_dict(), "optimizer": opt.state_dict(), "iteration": 3,
             "config": {"lr": 0.05, "sizes": (3, 2)}}, tmp_path / "ckpt.pt")
    del first, opt

    resumed = nn.Linear(3, 2)
    opt = wg.optim.Adam(resumed.parameters(), lr=1.0)
    ck = wg.load(tmp_path / "ckpt.pt")
    resumed.load_state_dict(ck["model"])
    opt.load_state_dict(ck["optimizer"])
    assert ck["iteration"] == 3 and ck["config"] == {"lr": 0.05, "sizes": (3, 2)}
    assert opt.param_groups[0]["lr"] == 0.05 and opt.param_groups[0]["betas"] == (0.9, 0.999)
    train(resumed, opt, x, y, 3)
    for a, b in zip(straight.parameters(), resumed.parameters()):
        assert a.tolist() == b.tolist()


class Device:
    """A device as PyTorch's: ``.type`` names it."""

    def __init__(self, type):
        self.type = type


@pytest.mark.parametrize("src,dst", [(s, d) for s in BACKENDS for d in BACKENDS])
def test_map_location_places_tensors_as_pytorch_does(src, dst, tmp_path):
    path = tmp_path / "c.pt"
    wg.save({"w": wg.tensor([1.5, -2.0], device=src), "n": 3}, path)
    elsewhere = next((b for b in BACKENDS if b != src), src)
    previous = wg.get_backend().name
    wg.set_backend(elsewhere)
    try:
        placed = {"none": wg.load(path), "name": wg.load(path, map_location=dst),
                  "indexed name": wg.load(path, map_location=f"{dst}:0"),
                  "device": wg.load(path, map_location=Device(dst)),
                  "backend": wg.load(path, map_location=wg.backend(dst)),
                  "dict": wg.load(path, map_location={src: dst}),
                  "dict, other key": wg.load(path, map_location={"elsewhere": dst}),
                  "callable": wg.load(path, map_location=lambda t, loc: t.to(dst)),
                  "callable, None": wg.load(path, map_location=lambda t, loc: None)}
    finally:
        wg.set_backend(previous)
    want = {"none": src, "dict, other key": src, "callable, None": src}
    for form, ck in placed.items():
        assert ck["w"].device == want.get(form, dst), form
        assert ck["w"].tolist() == [1.5, -2.0] and ck["n"] == 3, form


def test_a_callable_map_location_sees_each_tensor_on_cpu_with_its_saved_backend(backend):
    buf = io.BytesIO()
    wg.save({"a": wg.ones(2), "b": [wg.zeros(1)]}, buf)
    seen = []
    back = wg.load(buf.getvalue(), map_location=lambda t, loc: seen.append((t.device, loc, t.shape)) or t)
    assert seen == [("cpu", backend, (2,)), ("cpu", backend, (1,))]
    assert back["a"].device == "cpu" and back["b"][0].tolist() == [0.0]
    with pytest.raises(TypeError, match="map_location returned a list for tensor 'a'"):
        wg.load(buf.getvalue(), map_location=lambda t, loc: [t])


def rewrite_header(blob: bytes, change) -> bytes:
    """``blob`` with its JSON header passed through ``change(header dict)``."""
    import json
    import struct
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    change(header)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + blob[8 + n:]


def test_tensors_saved_on_a_backend_not_here_need_a_map_location(backend):
    buf = io.BytesIO()
    wg.save({"w": wg.ones(2)}, buf)
    meta = lambda h: h["__metadata__"].update(  # noqa: E731
        {"webgrad.structure": h["__metadata__"]["webgrad.structure"].replace(f'"{backend}"', '"cuda"')})
    blob = rewrite_header(buf.getvalue(), meta)
    with pytest.raises(RuntimeError, match="tensor 'w' was saved on backend 'cuda'.*map_location='cpu'"):
        wg.load(blob)
    assert wg.load(blob, map_location=backend)["w"].device == backend
    assert wg.load(blob, map_location={"cuda": backend})["w"].device == backend


def test_map_location_errors():
    blob = io.BytesIO()
    wg.save({"w": wg.ones(1)}, blob)
    with pytest.raises(RuntimeError, match="webgrad has no 'cuda' backend"):
        wg.load(blob.getvalue(), map_location="cuda")
    with pytest.raises(TypeError, match="map_location must be a backend name.*got int"):
        wg.load(blob.getvalue(), map_location=3)


def test_arguments_as_pytorch(tmp_path):
    ck = {"w": wg.ones(2)}
    wg.save(ck, tmp_path / "c.pt", pickle_module=pickle, pickle_protocol=4, _use_new_zipfile_serialization=False,
            _disable_byteorder_record=True)
    for kwargs in ({"weights_only": True}, {"weights_only": False}, {"weights_only": None},
                   {"pickle_module": pickle}, {"encoding": "latin1"}, {"weights_only": False, "errors": "strict"},
                   {"mmap": True}, {"mmap": False}):
        assert_same(wg.load(tmp_path / "c.pt", **kwargs), {"w": wg.ones(2)})
    with pytest.raises(TypeError, match="unexpected keyword argument 'errors'"):   # as torch, with weights_only
        wg.load(tmp_path / "c.pt", errors="strict")
    with pytest.raises(TypeError, match="unexpected keyword argument 'device'"):
        wg.load(tmp_path / "c.pt", device="cpu")
    with open(tmp_path / "c.pt", "rb") as f, pytest.raises(ValueError, match="must be a file path.*mmap"):
        wg.load(f, mmap=True)
    with open(tmp_path / "c.pt", "r", encoding="latin1") as f, pytest.raises(TypeError, match="binary mode"):
        wg.load(f)
    with pytest.raises(TypeError, match="save: f must be a path .* got bytes"):
        wg.save(ck, b"c.pt")
    with pytest.raises(TypeError, match="load: f must be a path .* got int"):
        wg.load(3)
    with pytest.raises(FileNotFoundError):
        wg.load(tmp_path / "missing.pt")


def test_what_cannot_be_saved_is_refused_before_a_byte_is_written():
    loop = []
    loop.append(loop)
    cases = [({"a": {"b": object()}}, {}, TypeError, r"cannot store a object \(at a.b\)"),
             ({"a": {"f": lambda: 0}}, {}, TypeError, r"cannot store a function \(at a.f\)"),
             ({frozenset(): 1}, {}, TypeError, "dict key of type frozenset"),
             ({"x": np.int64(3)}, {}, TypeError, "cannot store a int64"),
             (loop, {}, ValueError, "contains itself"),
             ({"w": wg.ones(1)}, {"metadata": {"webgrad.structure": "x"}}, ValueError, "metadata must map str to str"),
             ({"w": wg.ones(1)}, {"metadata": {"n": 1}}, ValueError, "metadata must map str to str")]
    for obj, kwargs, error, message in cases:
        buf = io.BytesIO()
        with pytest.raises(error, match=message):
            wg.save(obj, buf, **kwargs)
        assert buf.getvalue() == b""


# ------------------------------------------------------------------ files from PyTorch
def torch_tensors():
    """Every safetensors dtype PyTorch writes that webgrad reads, on values that test its range."""
    return {"f32": torch.tensor([[1.5, -2.0], [float("inf"), -0.0]]),
            "bf16": torch.tensor([1.5, -2.25, 3e38, 1e-3], dtype=torch.bfloat16),
            "f16": torch.tensor([0.5, -65504.0, 6e-8, float("nan")], dtype=torch.float16),
            "i64": torch.tensor([-2 ** 31, 2 ** 31 - 1, 0]), "i32": torch.tensor([7, -7], dtype=torch.int32),
            "i16": torch.tensor([-32768, 32767], dtype=torch.int16), "i8": torch.tensor([-128, 127], dtype=torch.int8),
            "u8": torch.tensor([0, 255], dtype=torch.uint8), "bool": torch.tensor([[True], [False]]),
            "scalar": torch.tensor(3.0), "empty": torch.zeros(0, 2)}


# torch dtype -> the webgrad dtype it loads as (a backend without half precision holds float16 and bfloat16 as
# float32, one without 8/16-bit integers holds them as int64)
LOADED_AS = {torch.float32: wg.float32, torch.bfloat16: wg.bfloat16, torch.float16: wg.float16, torch.int64: wg.int64,
             torch.int32: wg.int32, torch.int16: wg.int16, torch.int8: wg.int8, torch.uint8: wg.uint8,
             torch.bool: wg.bool, torch.float64: wg.float64}


def assert_like_torch(got, want):
    dtype = LOADED_AS[want.dtype]
    if dtype not in got._backend.dtypes:   # the GPU backends: half precision as float32, 8/16-bit ints as int64
        dtype = wg.float32 if dtype.is_floating else wg.int64
    assert got.dtype is dtype and got.shape == tuple(want.shape)
    np.testing.assert_array_equal(got.float().numpy() if got.dtype.itemsize == 2 else got.numpy(),
                                  want.float().numpy() if want.dtype in (torch.float16, torch.bfloat16) else want.numpy())


def test_reads_safetensors_written_by_pytorch(backend, tmp_path):
    tensors = torch_tensors()
    safetensors.torch.save_file(tensors, str(tmp_path / "t.safetensors"))
    got = wg.load(tmp_path / "t.safetensors")
    assert set(got) == set(tensors)
    for k, want in tensors.items():
        assert got[k].device == backend, k        # no saved backend: the default one
        assert_like_torch(got[k], want)


@pytest.mark.float64
def test_reads_float64_safetensors_written_by_pytorch(backend, tmp_path):
    want = torch.tensor([1e-300, -2.5], dtype=torch.float64)
    safetensors.torch.save_file({"f64": want}, str(tmp_path / "t.safetensors"))
    assert_like_torch(wg.load(tmp_path / "t.safetensors")["f64"], want)


def test_a_pytorch_model_loads_into_webgrad_and_back(backend, tmp_path):
    tm = torch.nn.Linear(3, 2)
    safetensors.torch.save_file(tm.state_dict(), str(tmp_path / "t.safetensors"))
    wm = nn.Linear(3, 2)
    wm.load_state_dict(wg.load(tmp_path / "t.safetensors"))
    x = np.ones((1, 3), dtype=np.float32)
    np.testing.assert_allclose(wm(wg.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-6)
    wg.save(wm.state_dict(), tmp_path / "back.safetensors")
    tm2 = torch.nn.Linear(3, 2)
    tm2.load_state_dict(safetensors.torch.load_file(str(tmp_path / "back.safetensors")))
    assert torch.equal(tm2.weight, tm.weight) and torch.equal(tm2.bias, tm.bias)


@pytest.mark.parametrize("zipfile", [True, False], ids=["zip", "legacy"])
def test_a_torch_save_file_is_refused_with_what_to_do(tmp_path, zipfile):
    torch.save(torch.nn.Linear(2, 2).state_dict(), tmp_path / "t.pt", _use_new_zipfile_serialization=zipfile)
    with pytest.raises(ValueError, match=r"written by torch.save.*never unpickles.*safetensors.torch import save_file"):
        wg.load(tmp_path / "t.pt")
