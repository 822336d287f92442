"""``webgrad.accelerator``: PyTorch's ``torch.accelerator``, answering with webgrad's GPU backend.

Scripts written for ``torch.accelerator`` ask it for the device to train on; here the answer is the
GPU backend (``webgpu`` in a page, ``wgpu`` natively) when it is what webgrad would choose: the default
backend already, or a real GPU adapter (a software one, such as Mesa's lavapipe, is slower than
``cpu`` and is not offered; ``WEBGRAD_BACKEND=wgpu`` or ``wg.set_default_device("wgpu")`` chooses it).

>>> import webgrad as wg
>>> device = wg.accelerator.current_accelerator() or wg.device("cpu")
"""
from __future__ import annotations

from . import registry
from .devices import device, device_of

GPU_BACKENDS = ("webgpu", "wgpu")


def current_accelerator(check_available: bool = False):
    """The accelerator's device, or None when there is none (``check_available`` is accepted as in PyTorch)."""
    default = registry.get_backend()
    if default.name in GPU_BACKENDS:
        return device_of(default.name)
    cpu = registry.backend_priority("cpu") if "cpu" in registry._backend_entries else 0
    for name in GPU_BACKENDS:
        if name in registry._backend_entries and registry.backend_priority(name) > cpu:
            try:
                registry.backend(name)
            except RuntimeError:
                continue
            return device_of(name)
    return None


def is_available() -> bool:
    """Whether an accelerator (a GPU backend webgrad would choose) is here."""
    return current_accelerator() is not None


def device_count() -> int:
    """1 when an accelerator is here (webgrad drives one GPU), else 0."""
    return int(is_available())


def current_device_index() -> int:
    """The accelerator's index: 0 (raises when there is none, as PyTorch does)."""
    _require()
    return 0


def set_device_index(device, /) -> None:
    """Only index 0 exists (webgrad drives one GPU)."""
    _require()
    if int(getattr(device, "index", device) or 0) != 0:
        raise RuntimeError(f"accelerator: device index {device} is out of range: there is one device, index 0")


set_device_idx = set_device_index
current_device_idx = current_device_index


def synchronize(device=None) -> None:
    """Wait until the accelerator has finished the work recorded so far."""
    be = registry.backend(_require().type if device is None else device)
    finish = getattr(be, "synchronize", None)
    if finish is not None:
        finish()


def _require() -> device:
    acc = current_accelerator()
    if acc is None:
        raise RuntimeError("accelerator: no accelerator is available (webgrad's GPU backend is 'wgpu' natively, "
                           "'webgpu' in a page; a software adapter is not offered: WEBGRAD_BACKEND=wgpu chooses it)")
    return acc


__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index", "set_device_index",
           "synchronize"]
