"""Pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d,
LPPool1d/2d, MaxUnpool1d/2d (thin wrappers over the functional forms)."""
from __future__ import annotations

from .. import functional as F
from ..functional._utils import ntuple
from ..module import Module


def _sizes_repr(module, dims: int) -> str:
    """kernel_size, stride and padding as tuples of ``dims`` ints, as PyTorch shows AvgPool1d and MaxUnpoolNd."""
    return ", ".join(f"{n}={ntuple(getattr(module, n), dims, type(module).__name__, n)}"
                     for n in ("kernel_size", "stride", "padding"))


class _MaxPoolNd(Module):
    """Max over windows; ``stride`` defaults to ``kernel_size``; ``return_indices`` also returns each
    maximum's flat position in the spatial dims."""

    fn = ""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, kernel_size if stride is None else stride, padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, input):
        return getattr(F, self.fn)(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                   ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max over windows of [N, C, L] (or [C, L]).

    >>> import webgrad as wg
    >>> MaxPool1d(2)(wg.ones(1, 1, 4)).shape
    webgrad.Size([1, 1, 2])
    """

    fn = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    """Max over windows of [N, C, H, W] (or [C, H, W]).

    >>> import webgrad as wg
    >>> MaxPool2d(2)(wg.ones(1, 1, 4, 4)).shape
    webgrad.Size([1, 1, 2, 2])
    """

    fn = "max_pool2d"


class AvgPool2d(Module):
    """Mean over windows of [N, C, H, W]; ``stride`` defaults to ``kernel_size``.

    >>> import webgrad as wg
    >>> AvgPool2d(2)(wg.ones(1, 1, 4, 4)).tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, kernel_size if stride is None else stride, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(Module):
    """Mean over windows of [N, C, L] (or [C, L]); ``stride`` defaults to ``kernel_size``.

    >>> import webgrad as wg
    >>> AvgPool1d(2)(wg.ones(1, 1, 4)).tolist()
    [[[1.0, 1.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, kernel_size if stride is None else stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return _sizes_repr(self, 1)


class _AdaptiveAvgPoolNd(Module):
    fn = ""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return getattr(F, self.fn)(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average-pool [N, C, L] (or [C, L]) down to length ``output_size``.

    >>> import webgrad as wg
    >>> AdaptiveAvgPool1d(2)(wg.ones(2, 3, 5)).shape
    webgrad.Size([2, 3, 2])
    """

    fn = "adaptive_avg_pool1d"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average-pool [N, C, H, W] down to ``output_size`` (an int, a pair, None keeps a dimension).

    >>> import webgrad as wg
    >>> AdaptiveAvgPool2d(1)(wg.ones(2, 3, 5, 5)).shape
    webgrad.Size([2, 3, 1, 1])
    """

    fn = "adaptive_avg_pool2d"


class _AdaptiveMaxPoolNd(Module):
    fn = ""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return getattr(F, self.fn)(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max-pool [N, C, L] (or [C, L]) down to length ``output_size``.

    >>> import webgrad as wg
    >>> AdaptiveMaxPool1d(2)(wg.ones(2, 3, 5)).shape
    webgrad.Size([2, 3, 2])
    """

    fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max-pool [N, C, H, W] (or [C, H, W]) down to ``output_size`` (an int, a pair, None keeps a dim).

    >>> import webgrad as wg
    >>> AdaptiveMaxPool2d((2, 1))(wg.ones(2, 3, 5, 5)).shape
    webgrad.Size([2, 3, 2, 1])
    """

    fn = "adaptive_max_pool2d"


class MaxPool3d(_MaxPoolNd):
    """Max over windows of [N, C, D, H, W] (or [C, D, H, W]); ``return_indices`` is not supported.

    >>> import webgrad as wg
    >>> MaxPool3d(2)(wg.ones(1, 1, 4, 4, 4)).shape
    webgrad.Size([1, 1, 2, 2, 2])
    """

    fn = "max_pool3d"


class AvgPool3d(AvgPool2d):
    """Mean over windows of [N, C, D, H, W] (or [C, D, H, W]), with PyTorch's divisors.

    >>> import webgrad as wg
    >>> AvgPool3d(2)(wg.ones(1, 1, 4, 4, 4)).shape
    webgrad.Size([1, 1, 2, 2, 2])
    """

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average-pool [N, C, D, H, W] (or [C, D, H, W]) down to ``output_size``.

    >>> import webgrad as wg
    >>> AdaptiveAvgPool3d(1)(wg.ones(2, 3, 4, 5, 5)).shape
    webgrad.Size([2, 3, 1, 1, 1])
    """

    fn = "adaptive_avg_pool3d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max-pool [N, C, D, H, W] (or [C, D, H, W]) down to ``output_size``.

    >>> import webgrad as wg
    >>> AdaptiveMaxPool3d((1, 2, 2))(wg.ones(2, 3, 4, 5, 5)).shape
    webgrad.Size([2, 3, 1, 2, 2])
    """

    fn = "adaptive_max_pool3d"


class _LPPoolNd(Module):
    fn = ""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return getattr(F, self.fn)(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling of [N, C, L]: (sum of x^p over each window)^(1/p).

    >>> import webgrad as wg
    >>> LPPool1d(2, 2)(wg.ones(1, 1, 4)).shape
    webgrad.Size([1, 1, 2])
    """

    fn = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    """Power-average pooling of [N, C, H, W].

    >>> import webgrad as wg
    >>> LPPool2d(2, 2)(wg.ones(1, 1, 4, 4)).shape
    webgrad.Size([1, 1, 2, 2])
    """

    fn = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    """Power-average pooling of [N, C, D, H, W].

    >>> import webgrad as wg
    >>> LPPool3d(2, 2)(wg.ones(1, 1, 4, 4, 4)).shape
    webgrad.Size([1, 1, 2, 2, 2])
    """

    fn = "lp_pool3d"


class _MaxUnpoolNd(Module):
    fn = ""

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, kernel_size if stride is None else stride, padding

    def forward(self, input, indices, output_size=None):
        return getattr(F, self.fn)(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return _sizes_repr(self, int(self.fn[-2]))


class MaxUnpool1d(_MaxUnpoolNd):
    """Put ``MaxPool1d(return_indices=True)``'s maxima back at their indices (zeros elsewhere).

    >>> import webgrad as wg
    >>> y, i = MaxPool1d(2, return_indices=True)(wg.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
    >>> MaxUnpool1d(2)(y, i).tolist()
    [[[0.0, 3.0, 2.0, 0.0]]]
    """

    fn = "max_unpool1d"


class MaxUnpool2d(_MaxUnpoolNd):
    """Put ``MaxPool2d(return_indices=True)``'s maxima back at their indices (zeros elsewhere).

    >>> import webgrad as wg
    >>> y, i = MaxPool2d(2, return_indices=True)(wg.arange(16.0).reshape(1, 1, 4, 4))
    >>> MaxUnpool2d(2)(y, i).shape
    webgrad.Size([1, 1, 4, 4])
    """

    fn = "max_unpool2d"


class MaxUnpool3d(_MaxUnpoolNd):
    """Put 3-d max-pool maxima back at their flat D*H*W indices (zeros elsewhere).

    >>> import webgrad as wg
    >>> MaxUnpool3d(2)(wg.ones(1, 1, 1, 1, 1), wg.zeros(1, 1, 1, 1, 1, dtype=wg.long)).shape
    webgrad.Size([1, 1, 2, 2, 2])
    """

    fn = "max_unpool3d"


__all__ = ["LPPool3d", "MaxUnpool3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "MaxUnpool1d",
           "MaxUnpool2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]
