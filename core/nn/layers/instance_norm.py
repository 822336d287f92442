"""Instance normalisation (InstanceNorm1d/2d/3d: per sample and channel, over the spatial dims) and
LocalResponseNorm (across neighbouring channels)."""
from __future__ import annotations

import warnings

from .. import functional as F
from ..module import Module
from .normalization import _NormBase


class _InstanceNorm(_NormBase):
    """PyTorch's _InstanceNorm: no affine parameters and no running statistics unless asked; the
    parameters and buffers (weight, bias, running_mean, running_var, num_batches_tracked) named as
    BatchNorm's (both on _NormBase, as PyTorch's)."""

    spatial = 1

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        name, unbatched = type(self).__name__, self.spatial + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise ValueError(f"{name}: expected a {unbatched}D or {unbatched + 1}D input, got shape "
                             f"{tuple(input.shape)}")
        channels = input.shape[input.ndim - unbatched]
        if channels != self.num_features:
            if self.affine:
                raise ValueError(f"{name}: expected input's size at dim={input.ndim - unbatched} to match "
                                 f"num_features ({self.num_features}), got {channels}")
            warnings.warn(f"{name}: input's size at dim={input.ndim - unbatched} does not match num_features; "
                          f"num_features is not used because affine=False", stacklevel=2)
        x = input.unsqueeze(0) if input.ndim == unbatched else input
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return y.squeeze(0) if input.ndim == unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of [N, C, L] (or [C, L]).

    >>> import webgrad as wg
    >>> InstanceNorm1d(3)(wg.randn(2, 3, 5)).shape
    webgrad.Size([2, 3, 5])
    """


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of [N, C, H, W] (or [C, H, W]), as style-transfer networks use it.

    >>> import webgrad as wg
    >>> InstanceNorm2d(3, affine=True)(wg.randn(2, 3, 4, 4)).shape
    webgrad.Size([2, 3, 4, 4])
    """

    spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of [N, C, D, H, W] (or [C, D, H, W]).

    >>> import webgrad as wg
    >>> InstanceNorm3d(2)(wg.randn(1, 2, 3, 3, 3)).shape
    webgrad.Size([1, 2, 3, 3, 3])
    """

    spatial = 3


class LocalResponseNorm(Module):
    """Normalise each channel by its ``size`` neighbours' mean square: x / (k + alpha * mean)^beta.

    >>> import webgrad as wg
    >>> LocalResponseNorm(2)(wg.ones(1, 4, 3, 3)).shape
    webgrad.Size([1, 4, 3, 3])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_windows(channels: int, size: int) -> list:
    """Row c: which channels' squares PyTorch's legacy CrossMapLRN2d sums for channel c (its running
    window: the first ``pre_pad`` channels, then one in and, from channel ``pre_pad + 1``, one out)."""
    pre_pad = int((size - 1) / 2 + 1)
    rows, window = [], set(range(min(pre_pad, channels)))
    rows.append(sorted(window))
    for c in range(1, channels):
        if c < channels - pre_pad + 1:
            window.add(c + pre_pad - 1)
        if c > pre_pad:
            window.discard(c - pre_pad)
        rows.append(sorted(window))
    return [[1.0 if j in row else 0.0 for j in range(channels)] for row in rows]


class CrossMapLRN2d(Module):
    """PyTorch's legacy cross-channel normalisation of [N, C, H, W]: ``x * (k + alpha / size * s)^-beta``
    with ``s`` the sum of squares over PyTorch's running channel window (which differs from
    ``LocalResponseNorm``'s centred one).

    >>> import webgrad as wg
    >>> CrossMapLRN2d(3)(wg.ones(1, 4, 2, 2)).shape
    webgrad.Size([1, 4, 2, 2])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
        from ...tensor import tensor
        windows = tensor(_cross_map_windows(input.shape[1], self.size), dtype=input.dtype, device=input.device)
        squares = (input * input).movedim(1, -1)                        # [N, H, W, C]
        scale = (squares @ windows.T).movedim(-1, 1) * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "CrossMapLRN2d"]
