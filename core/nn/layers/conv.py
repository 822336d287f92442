"""Convolutions: Conv1d, Conv2d, Conv3d, ConvTranspose1d/2d/3d (weights laid out as in PyTorch)."""
from __future__ import annotations

from .. import functional as F
from .. import init
from ...ops.creation import empty
from ..functional._utils import ntuple
from ..module import Module
from ..parameter import Parameter


class _ConvNd(Module):
    """Shared by the convolutions: hyper-parameters, weight/bias, PyTorch's default init."""

    dims = 2
    transposed = False

    def _build(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
               output_padding, device, dtype):
        super().__init__()
        name, n = type(self).__name__, self.dims
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        if padding_mode != "zeros":
            raise NotImplementedError(f"{name}: only padding_mode='zeros' is supported, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ntuple(kernel_size, n, name, "kernel_size")
        self.stride, self.dilation = ntuple(stride, n, name, "stride"), ntuple(dilation, n, name, "dilation")
        self.padding = padding if isinstance(padding, str) else ntuple(padding, n, name, "padding")
        self.output_padding = ntuple(output_padding, n, name, "output_padding")
        self.padding_mode = padding_mode
        shape = ((in_channels, out_channels // groups) if self.transposed else
                 (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        self.bias = Parameter(empty(out_channels, dtype=dtype, device=device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        init.default_init_(self.weight, self.bias)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding not in ((0,) * self.dims, "valid"):
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.dilation != (1,) * self.dims:
            s += f", dilation={self.dilation}"
        if self.transposed and self.output_padding != (0,) * self.dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        return s + (", bias=False" if self.bias is None else "")


class _Conv(_ConvNd):
    """A forward convolution's constructor, PyTorch's (no ``output_padding``)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        self._build(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, 0,
                    device, dtype)


class Conv1d(_Conv):
    """1-d convolution over [N, C, L] (or [C, L]).

    >>> import webgrad as wg
    >>> Conv1d(2, 3, 3, padding=1)(wg.ones(1, 2, 5)).shape
    webgrad.Size([1, 3, 5])
    """

    dims = 1

    def forward(self, input):
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_Conv):
    """2-d convolution over [N, C, H, W] (or [C, H, W]).

    >>> import webgrad as wg
    >>> Conv2d(1, 4, 3)(wg.ones(2, 1, 8, 8)).shape
    webgrad.Size([2, 4, 6, 6])
    """

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv3d(_Conv):
    """3-d convolution over [N, C, D, H, W] (or [C, D, H, W]).

    >>> import webgrad as wg
    >>> Conv3d(1, 2, 3)(wg.ones(1, 1, 4, 5, 5)).shape
    webgrad.Size([1, 2, 2, 3, 3])
    """

    dims = 3

    def forward(self, input):
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution's constructor and ``output_size`` (PyTorch's: it picks the output_padding)."""

    transposed = True
    fn = ""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        self._build(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                    output_padding, device, dtype)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = self.dims
        lead = 2 if input.ndim == n + 2 else 1
        size = tuple(output_size)
        size = size[lead:] if len(size) == lead + n else size
        if len(size) != n:
            raise ValueError(f"{type(self).__name__}: for {input.ndim}D input, output_size must have {n} or "
                             f"{lead + n} elements (got {len(tuple(output_size))})")
        low = [(i - 1) * s - 2 * p + d * (k - 1) + 1 for i, s, p, d, k in
               zip(input.shape[lead:], self.stride, self.padding, self.dilation, self.kernel_size)]
        high = [lo + s - 1 for lo, s in zip(low, self.stride)]
        if any(not lo <= o <= hi for o, lo, hi in zip(size, low, high)):
            raise ValueError(f"{type(self).__name__}: requested an output size of {size}, but valid sizes range "
                             f"from {low} to {high} (for an input of {tuple(input.shape[lead:])})")
        return tuple(o - lo for o, lo in zip(size, low))

    def forward(self, input, output_size=None):
        return getattr(F, self.fn)(input, self.weight, self.bias, self.stride, self.padding,
                                   self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution over [N, C, L] (or [C, L]); weight [in, out/groups, k].

    >>> import webgrad as wg
    >>> ConvTranspose1d(4, 2, 3, stride=2)(wg.ones(1, 4, 3)).shape
    webgrad.Size([1, 2, 7])
    """

    dims = 1
    fn = "conv_transpose1d"


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution (the gradient of Conv2d w.r.t. its input); weight [in, out/groups, kh, kw].

    >>> import webgrad as wg
    >>> ConvTranspose2d(4, 1, 3, stride=2)(wg.ones(1, 4, 3, 3)).shape
    webgrad.Size([1, 1, 7, 7])
    """

    fn = "conv_transpose2d"


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-d convolution over [N, C, D, H, W] (or unbatched); weight [in, out/groups, kd, kh, kw].

    >>> import webgrad as wg
    >>> ConvTranspose3d(2, 1, 3, stride=2)(wg.ones(1, 2, 2, 2, 2)).shape
    webgrad.Size([1, 1, 5, 5, 5])
    """

    dims = 3
    fn = "conv_transpose3d"


__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
