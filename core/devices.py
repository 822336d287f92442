"""Devices, PyTorch's name for where a tensor lives: here a backend (``cpu``, ``wgpu``, ``webgpu``).

``wg.device("wgpu")`` is ``torch.device``: a type and an optional index, parsed from ``"type"`` or
``"type:index"``, hashable, equal to another device of the same type and index, and (a courtesy
PyTorch does not offer) equal to its own string, so ``t.device == "cpu"`` reads as before. Device types
of PyTorch that webgrad has no backend for (``cuda``, ``mps``, ...) can be named, as in PyTorch, but
making a tensor there raises an error that says to use the GPU through ``wgpu``.
"""
from __future__ import annotations

from . import registry
from .registry import FOREIGN_DEVICES


class device:
    """Where a tensor lives: a backend name and an optional index, as ``torch.device``.

    >>> import webgrad as wg
    >>> d = wg.device("wgpu:0")
    >>> d.type, d.index, str(d), wg.device("cpu") == "cpu"
    ('wgpu', 0, 'wgpu:0', True)
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device: an index cannot be given with a device")
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            type, index = _accelerator_type(), type
        elif not isinstance(type, str):
            raise TypeError(f"device: expected a string, a device or an int, got {type.__class__.__name__}")
        elif ":" in type:
            if index is not None:
                raise RuntimeError(f"device: type (string) must not include an index because index was passed "
                                   f"explicitly: {type}")
            type, _, text = type.partition(":")
            if not text.isdigit():
                raise RuntimeError(f"device: invalid device string: '{type}:{text}'")
            index = int(text)
        if type not in known_types():
            raise RuntimeError(f"device: expected one of {', '.join(known_types())} device type at start of "
                               f"device string: {type}")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"device: device index must be a non-negative int, got {index!r}")
        self._type, self._index = type, index

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self):
        return self._index

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self):
        return f"device(type='{self._type}')" if self._index is None else \
            f"device(type='{self._type}', index={self._index})"

    def __eq__(self, other):
        if isinstance(other, device):
            return (self._type, self._index) == (other._type, other._index)
        if isinstance(other, str):
            return other == str(self)
        return NotImplemented

    def __hash__(self):
        return hash(str(self))

    def __reduce__(self):
        return (device, (self._type, self._index))


_Device = device


def known_types() -> tuple:
    """The device types that can be named: the registered backends, then PyTorch's others."""
    return tuple(registry._backend_entries) + tuple(t for t in FOREIGN_DEVICES if t not in registry._backend_entries)


_DEVICES: dict = {}


def device_of(backend_name: str) -> device:
    """The (shared) device object of a backend, what ``Tensor.device`` returns."""
    d = _DEVICES.get(backend_name)
    if d is None:
        d = _DEVICES[backend_name] = device(backend_name)
    return d


def _accelerator_type() -> str:
    from .accelerator import current_accelerator
    acc = current_accelerator()
    if acc is None:
        raise RuntimeError("device: an int names an accelerator's index, and none is available here")
    return acc.type


def set_default_device(device) -> None:  # noqa: F811  (torch's parameter name; the class is _Device here)
    """Make ``device`` (a device, a backend name, or None for the automatic choice) the default backend
    for new tensors, as ``torch.set_default_device``.

    >>> import webgrad as wg
    >>> wg.set_default_device("cpu"); wg.get_default_device()
    device(type='cpu')
    """
    if device is None:
        registry._current[0] = None
        return
    registry._current[0] = registry.backend(_Device(device) if isinstance(device, int) else device)


def get_default_device() -> device:
    """The device new tensors go to (the default backend), as ``torch.get_default_device``."""
    return device_of(registry.get_backend().name)


__all__ = ["device", "set_default_device", "get_default_device"]
