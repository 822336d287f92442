"""``webgrad.cuda.amp``: PyTorch's deprecated ``torch.cuda.amp`` names, ``autocast`` and ``GradScaler``
for ``cuda``; without CUDA both warn and stay off, as PyTorch's do.

>>> import webgrad as wg
>>> scaler = wg.cuda.amp.GradScaler(enabled=False)
>>> scaler.is_enabled()
False
"""
from __future__ import annotations

from .. import amp


class autocast(amp.autocast):
    """``torch.cuda.amp.autocast(enabled=True, dtype=float16, cache_enabled=True)``: ``amp.autocast("cuda")``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled=True):
        super().__init__("cuda", dtype, enabled, cache_enabled)


class GradScaler(amp.GradScaler):
    """``torch.cuda.amp.GradScaler(...)``: ``amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


custom_fwd, custom_bwd = amp.custom_fwd, amp.custom_bwd

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]
