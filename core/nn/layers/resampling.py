"""Modules that reshape the grid: Upsample (and its nearest/bilinear 2-d forms), PixelShuffle,
PixelUnshuffle, the padding modules, channel dropout, and the distance modules."""
from __future__ import annotations

from .. import functional as F
from ..module import Module
from .dropout import Dropout


class Upsample(Module):
    """``F.interpolate`` as a module.

    >>> import webgrad as wg
    >>> Upsample(scale_factor=2)(wg.ones(1, 1, 2)).shape
    (1, 1, 4)
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self):
        what = f"scale_factor={_floats(self.scale_factor)}" if self.scale_factor is not None else f"size={self.size}"
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of [N, C, H, W] (PyTorch's deprecated module, kept working)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling with ``align_corners=True`` (PyTorch's deprecated module)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _Shuffle(Module):
    fn, arg = "", ""

    def __init__(self, factor: int):
        super().__init__()
        setattr(self, self.arg, factor)

    def forward(self, input):
        return getattr(F, self.fn)(input, getattr(self, self.arg))

    def extra_repr(self):
        return f"{self.arg}={getattr(self, self.arg)}"


def _floats(factor):
    """A scale factor as PyTorch's Upsample keeps it: a float, or a tuple of floats."""
    return tuple(float(f) for f in factor) if isinstance(factor, (tuple, list)) else float(factor)


class PixelShuffle(_Shuffle):
    """[*, C * r * r, H, W] to [*, C, H * r, W * r].

    >>> import webgrad as wg
    >>> PixelShuffle(2)(wg.ones(1, 4, 3, 3)).shape
    (1, 1, 6, 6)
    """

    fn, arg = "pixel_shuffle", "upscale_factor"

    def __init__(self, upscale_factor: int):
        super().__init__(upscale_factor)


class PixelUnshuffle(_Shuffle):
    """[*, C, H * r, W * r] to [*, C * r * r, H, W]."""

    fn, arg = "pixel_unshuffle", "downscale_factor"

    def __init__(self, downscale_factor: int):
        super().__init__(downscale_factor)


class ChannelShuffle(_Shuffle):
    """Interleave the channels of [N, C, *] in ``groups`` groups (ShuffleNet).

    >>> import webgrad as wg
    >>> ChannelShuffle(2)(wg.arange(4.0).reshape(1, 4, 1)).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    fn, arg = "channel_shuffle", "groups"

    def __init__(self, groups: int):
        super().__init__(groups)


class _Pad(Module):
    """``F.pad(input, padding, mode, value)`` with ``padding`` an int (every side) or 2 * dims ints."""

    dims, mode = 1, "constant"

    def __init__(self, padding, value: float = 0.0):
        super().__init__()
        self.padding = (padding,) * (2 * self.dims) if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != 2 * self.dims:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {2 * self.dims} ints, got {padding!r}")
        self.value = value

    def forward(self, input):
        if self.mode != "constant" and input.ndim not in (self.dims + 1, self.dims + 2):   # PyTorch's errors
            if self.mode == "circular":
                raise ValueError(f"{type(self).__name__}: expected {self.dims + 1}D or {self.dims + 2}D input (got "
                                 f"{input.ndim}D input)")
            raise NotImplementedError(f"{type(self).__name__}: padding size {2 * self.dims} is not supported for "
                                      f"{input.ndim}D input tensor (it needs {self.dims + 1}D or {self.dims + 2}D)")
        return F.pad(input, self.padding, self.mode, self.value)

    def extra_repr(self):
        return f"{self.padding}"


class _ValuePad(_Pad):
    def __init__(self, padding, value: float):
        super().__init__(padding, value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _PlainPad(_Pad):
    def __init__(self, padding):
        super().__init__(padding)


def _pad(name, dims, mode, with_value, doc):
    return type(name, (_ValuePad if with_value else _PlainPad,), {"dims": dims, "mode": mode, "__doc__": doc,
                                                                  "__module__": __name__})


_PADS = {"Constant": ("constant", True), "Zero": ("constant", False), "Reflection": ("reflect", False),
         "Replication": ("replicate", False), "Circular": ("circular", False)}
_PAD_CLASSES = {f"{kind}Pad{d}d": _pad(f"{kind}Pad{d}d", d, mode, with_value,
                                       f"Pad the last {d} dim(s) ({mode}{', with value' if with_value else ''}).")
                for kind, (mode, with_value) in _PADS.items() for d in (1, 2, 3)}
globals().update(_PAD_CLASSES)


class _ChannelDropout(Dropout):
    fn = ""

    def forward(self, input):
        return getattr(F, self.fn)(input, self.p, self.training, self.inplace)


Dropout1d = type("Dropout1d", (_ChannelDropout,), {"fn": "dropout1d", "__module__": __name__,
                                                   "__doc__": "Zero whole channels of [N, C, L] while training."})
Dropout2d = type("Dropout2d", (_ChannelDropout,), {"fn": "dropout2d", "__module__": __name__,
                                                   "__doc__": "Zero whole channels of [N, C, H, W] while training."})
Dropout3d = type("Dropout3d", (_ChannelDropout,), {"fn": "dropout3d", "__module__": __name__,
                                                   "__doc__": "Zero whole channels of [N, C, D, H, W] while training."})


class CosineSimilarity(Module):
    """``F.cosine_similarity(x1, x2, dim, eps)`` as a module."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``F.pairwise_distance(x1, x2, p, eps, keepdim)`` as a module."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
           "Dropout1d", "Dropout2d", "Dropout3d", "CosineSimilarity", "PairwiseDistance", *_PAD_CLASSES]
