"""Fold and Unfold: the sliding-window layouts of ``F.fold``/``F.unfold`` as modules."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class Fold(Module):
    """Sum sliding blocks [N, C*prod(kernel_size), L] back into [N, C, *output_size].

    >>> import webgrad as wg
    >>> Fold((3, 3), 2)(wg.ones(1, 4, 4)).shape
    webgrad.Size([1, 1, 3, 3])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size, self.dilation = output_size, kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extract sliding blocks of [N, C, H, W] as [N, C*prod(kernel_size), L].

    >>> import webgrad as wg
    >>> Unfold(2)(wg.ones(1, 2, 3, 3)).shape
    webgrad.Size([1, 8, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


__all__ = ["Fold", "Unfold"]
