"""Pooling layers: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d (thin wrappers over the functional forms)."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class MaxPool2d(Module):
    """Max over windows of [N, C, H, W]; ``stride`` defaults to ``kernel_size``.

    >>> import webgrad as wg
    >>> MaxPool2d(2)(wg.ones(1, 1, 4, 4)).shape
    (1, 1, 2, 2)
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        if return_indices:
            raise NotImplementedError("MaxPool2d: return_indices=True is not supported")
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over windows of [N, C, H, W]; ``stride`` defaults to ``kernel_size``.

    >>> import webgrad as wg
    >>> AvgPool2d(2)(wg.ones(1, 1, 4, 4)).tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average-pool [N, C, H, W] down to ``output_size`` (an int, a pair, None keeps a dimension).

    >>> import webgrad as wg
    >>> AdaptiveAvgPool2d(1)(wg.ones(2, 3, 5, 5)).shape
    (2, 3, 1, 1)
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]
