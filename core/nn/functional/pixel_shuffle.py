"""``pixel_shuffle`` and ``pixel_unshuffle``: channels to space and back, as a reshape, a
permutation and a reshape (PyTorch's layout: channel ``c * r * r + i * r + j`` goes to ``(c, h*r + i, w*r + j)``)."""
from __future__ import annotations

from ...ops.common import check_tensor


def pixel_shuffle(input, upscale_factor):
    """[*, C * r * r, H, W] to [*, C, H * r, W * r].

    >>> import webgrad as wg
    >>> pixel_shuffle(wg.arange(4.0).reshape(1, 4, 1, 1), 2).tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    check_tensor("pixel_shuffle", input)
    r = upscale_factor
    if input.ndim < 3 or input.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle: expected an input of at least 3 dims whose channels divide by "
                           f"upscale_factor ** 2 = {r * r}, got shape {tuple(input.shape)}")
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    k = len(lead)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H * r, W * r] to [*, C * r * r, H, W] (the inverse of ``pixel_shuffle``).

    >>> import webgrad as wg
    >>> pixel_unshuffle(wg.arange(4.0).reshape(1, 1, 2, 2), 2).reshape(-1).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    check_tensor("pixel_unshuffle", input)
    r = downscale_factor
    if input.ndim < 3 or input.shape[-2] % r or input.shape[-1] % r:
        raise RuntimeError(f"pixel_unshuffle: expected an input of at least 3 dims whose height and width divide "
                           f"by downscale_factor {r}, got shape {tuple(input.shape)}")
    *lead, c, h, w = input.shape
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    k = len(lead)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """Split the C channels of [N, C, *] into ``groups`` groups and interleave them (ShuffleNet's shuffle).

    >>> import webgrad as wg
    >>> channel_shuffle(wg.arange(4.0).reshape(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    check_tensor("channel_shuffle", input)
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle: expected an input of at least 3 dims, got shape {tuple(input.shape)}")
    n, c = input.shape[:2]
    if not isinstance(groups, int) or groups < 1 or c % groups:
        raise RuntimeError(f"channel_shuffle: the {c} channels must be divisible by groups, a positive int; got "
                           f"groups={groups!r}")
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


def native_channel_shuffle(input, groups):
    """PyTorch's kernel-level name for ``channel_shuffle`` (the same result).

    >>> import webgrad as wg
    >>> native_channel_shuffle(wg.arange(4.0).reshape(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    return channel_shuffle(input, groups)


__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]
