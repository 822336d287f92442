"""Half precision on the GPU backend: webgrad's WGSL kernels have no float16 forms yet, so a float16
tensor on ``wgpu`` is refused with an error naming the backend, the adapter and what is missing
(WebGPU's shader-f16 feature, or the kernels when the adapter has it); bfloat16 has no WGSL type."""
import pytest

import webgrad as wg

MAKERS = {
    "factory": lambda dt: wg.ones(2, dtype=dt, device="wgpu"),
    "upload": lambda dt: wg.ones(2, dtype=dt).to("wgpu"),
    "cast": lambda dt: wg.ones(2, device="wgpu").to(dt),
    "method": lambda dt: wg.ones(2, device="wgpu").half() if dt is wg.float16 else wg.ones(2, device="wgpu").bfloat16(),
}


@pytest.mark.parametrize("how", sorted(MAKERS))
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_on_the_gpu_is_refused_with_the_reason(gpu, name, how):
    with pytest.raises(TypeError) as info:
        MAKERS[how](getattr(wg, name))
    message = str(info.value)
    assert f"dtype {name} is not supported on the GPU backend 'wgpu'" in message
    assert ("shader-f16" if name == "float16" else "no bfloat16") in message
    assert "t.to(webgrad.float32)" in message


@pytest.mark.parametrize("offered", [True, False])
def test_the_reason_says_whether_the_adapter_offers_shader_f16(gpu, monkeypatch, offered):
    monkeypatch.setattr(gpu.device, "adapter_features", frozenset({"shader-f16"} if offered else ()))
    with pytest.raises(TypeError) as info:
        wg.zeros(3, dtype=wg.half, device="wgpu")
    message = str(info.value)
    adapter = gpu.device.info.get("description") or gpu.device.info.get("device")
    assert adapter in message
    if offered:
        assert "offers WebGPU's shader-f16 feature, but webgrad's WGSL kernels have no float16 forms" in message
    else:
        assert "needs WebGPU's shader-f16 feature, which" in message and "does not offer" in message


def test_the_adapter_features_are_the_adapters(gpu):
    assert gpu.device.adapter_features == frozenset(gpu.device.adapter.features)


def test_float16_stays_usable_on_cpu_beside_the_gpu(gpu):
    x = wg.tensor([1.0, 2.0], dtype=wg.float16)
    assert (x * 3).tolist() == [3.0, 6.0] and (x * 3).dtype is wg.float16
    assert x.float().to("wgpu").tolist() == [1.0, 2.0]
