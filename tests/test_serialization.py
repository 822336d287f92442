"""Checkpoints: webgrad.save/load in the safetensors format, interoperable both ways with the
``safetensors`` package (and through it with PyTorch), plus nested (optimizer) state dicts."""
import io

import numpy as np
import pytest

import webgrad as wg
import webgrad.nn as nn


def sample():
    return {"f32": wg.tensor([[1.5, -2.0], [3.0, 4.25]]), "f64": wg.tensor([1e-300, 2.0], dtype=wg.float64),
            "i32": wg.tensor([-7, 2 ** 31 - 1]), "bool": wg.tensor([True, False, True]), "scalar": wg.tensor(3.0),
            "empty": wg.zeros(0, 3)}


def assert_same(a, b):
    assert set(a) == set(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        assert a[k].tolist() == b[k].tolist(), k


def test_round_trip_path_file_bytes(tmp_path):
    sd = sample()
    path = tmp_path / "x.safetensors"
    wg.save(sd, str(path))
    assert_same(wg.load(str(path)), sd)
    assert_same(wg.load(path), sd)
    buf = io.BytesIO()
    wg.save(sd, buf)
    assert_same(wg.load(buf.getvalue()), sd)
    buf.seek(0)
    assert_same(wg.load(buf), sd)


def test_module_checkpoint(tmp_path):
    a, b = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)), nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    a(wg.randn(5, 3))
    wg.save(a.state_dict(), tmp_path / "m.safetensors")
    b.load_state_dict(wg.load(tmp_path / "m.safetensors"))
    assert_same(b.state_dict(), a.state_dict())


def test_nested_optimizer_state(tmp_path):
    model = nn.Linear(2, 2)
    opt = wg.optim.Adam(model.parameters(), lr=0.01)
    model(wg.ones(1, 2)).sum().backward()
    opt.step()
    wg.save(opt.state_dict(), tmp_path / "o.safetensors")
    back = wg.load(tmp_path / "o.safetensors")
    want = opt.state_dict()
    assert back["param_groups"] == want["param_groups"]
    assert back["state"][0]["step"] == 1
    assert back["state"][1]["exp_avg"].tolist() == want["state"][1]["exp_avg"].tolist()
    opt2 = wg.optim.Adam(model.parameters())
    opt2.load_state_dict(back)
    assert opt2.param_groups[0]["lr"] == 0.01 and opt2.param_groups[0]["betas"] == (0.9, 0.999)


def test_file_is_readable_by_safetensors(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    sd = sample()
    wg.save(sd, tmp_path / "w.safetensors", metadata={"format": "pt"})
    got = st.load_file(str(tmp_path / "w.safetensors"))
    for k, t in sd.items():
        np.testing.assert_array_equal(got[k], t.numpy())
        assert got[k].dtype == t.numpy().dtype


def test_reads_safetensors_and_torch_files(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, -2], dtype=np.int64),
              "c": np.array([0.5, 1.5], dtype=np.float16), "d": np.array([1, 255], dtype=np.uint8),
              "e": np.array([[True], [False]])}
    st.save_file(arrays, str(tmp_path / "n.safetensors"))
    got = wg.load(tmp_path / "n.safetensors")
    for k, a in arrays.items():
        assert got[k].tolist() == a.tolist(), k
    assert got["b"].dtype == wg.int64 and got["c"].dtype == wg.float32 and got["e"].dtype == wg.bool
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file
    save_file({"h": torch.tensor([1.5, -2.25], dtype=torch.bfloat16)}, str(tmp_path / "bf.safetensors"))
    assert wg.load(tmp_path / "bf.safetensors")["h"].tolist() == [1.5, -2.25]
    tm = torch.nn.Linear(3, 2)
    save_file(tm.state_dict(), str(tmp_path / "t.safetensors"))
    wm = nn.Linear(3, 2)
    wm.load_state_dict(wg.load(tmp_path / "t.safetensors"))
    x = np.ones((1, 3), dtype=np.float32)
    np.testing.assert_allclose(wm(wg.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-6)
    wg.save(wm.state_dict(), tmp_path / "back.safetensors")
    tm2 = torch.nn.Linear(3, 2)
    tm2.load_state_dict(load_file(str(tmp_path / "back.safetensors")))
    assert torch.equal(tm2.weight, tm.weight)


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="load: not a safetensors file"):
        wg.load(b"\x01")
    with pytest.raises(TypeError, match="save: cannot store a object"):
        wg.save({"a": {"b": object()}}, io.BytesIO())
    big = b'{"x":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}'
    data = len(big).to_bytes(8, "little") + big + (2 ** 40).to_bytes(8, "little")
    assert wg.load(data)["x"].tolist() == [2 ** 40]
    if "wgpu" in wg.backends():   # the GPU holds int64 in 32 bits
        with pytest.raises(OverflowError, match="int64 on wgpu"):
            wg.load(data, device="wgpu")
    bad = b'{"x":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}}'
    with pytest.raises(ValueError, match="C64"):
        wg.load(len(bad).to_bytes(8, "little") + bad + bytes(8))
