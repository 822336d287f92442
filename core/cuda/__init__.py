"""``webgrad.cuda``: PyTorch's ``torch.cuda`` on a library without CUDA, so scripts that ask take the
other road. ``is_available()`` is False (webgrad's GPU is ``wgpu``/``webgpu``: see
``webgrad.accelerator``); what PyTorch does silently without CUDA (seeding, emptying the cache,
memory figures of 0) works the same, and what needs a CUDA device raises an error naming the way
to the GPU here.

>>> import webgrad as wg
>>> device = "cuda" if wg.cuda.is_available() else "cpu"
>>> device
'cpu'
"""
from __future__ import annotations

import inspect

from . import amp  # noqa: F401  (webgrad.cuda.amp, as torch.cuda.amp)


def is_available() -> bool:
    """False: webgrad has no CUDA backend."""
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, as PyTorch answers without CUDA."""
    return False


def manual_seed(seed) -> None:
    """Ignored without CUDA, as in PyTorch (seed webgrad's generator with ``webgrad.manual_seed``)."""


manual_seed_all = manual_seed


def seed() -> None:
    """Ignored without CUDA, as in PyTorch."""


seed_all = seed


def empty_cache() -> None:
    """Nothing to free without CUDA (webgrad's GPU pool: ``webgrad.backend('wgpu').empty_pool()``)."""


def memory_allocated(device=None) -> int:
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def reset_peak_memory_stats(device=None) -> None:
    """Nothing to reset without CUDA."""


def _no_cuda(name, params):
    """A function with PyTorch's parameters ``params`` (so an unknown keyword is a TypeError, as
    there) that raises: it needs a CUDA device."""
    def fn(*args, **kwargs):
        try:
            signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"cuda.{name}(): {e}") from None
        raise RuntimeError(f"cuda.{name}: webgrad has no CUDA backend (webgrad.cuda.is_available() is False); its GPU "
                           f"backend is 'wgpu' natively and 'webgpu' in a page: see webgrad.accelerator")
    signature = inspect.Signature([inspect.Parameter(p.strip("*"), _KINDS[p.count("*")], default=None)
                                   for p in params])
    fn.__name__, fn.__qualname__, fn.__signature__ = name, name, signature
    fn.__doc__ = f"Raises: ``torch.cuda.{name}`` needs a CUDA device, which webgrad does not have."
    return fn


_KINDS = {0: inspect.Parameter.POSITIONAL_OR_KEYWORD, 1: inspect.Parameter.KEYWORD_ONLY}
synchronize = _no_cuda("synchronize", ["device"])
current_device = _no_cuda("current_device", [])
set_device = _no_cuda("set_device", ["device"])
get_device_name = _no_cuda("get_device_name", ["device"])
get_device_capability = _no_cuda("get_device_capability", ["device"])
get_device_properties = _no_cuda("get_device_properties", ["device"])
Event = _no_cuda("Event", ["enable_timing", "blocking", "interprocess", "external"])
Stream = _no_cuda("Stream", ["device", "priority"])
