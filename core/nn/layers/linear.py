"""Affine layers: Identity, Linear, Bilinear."""
from __future__ import annotations

import math

from .. import functional as F
from .. import init
from ...ops.creation import empty
from ..module import Module
from ..parameter import Parameter


class Identity(Module):
    """Returns its input (arguments are accepted and ignored, as in PyTorch).

    >>> import webgrad as wg
    >>> Identity()(wg.ones(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with weight [out_features, in_features], PyTorch's default init.

    >>> import webgrad as wg
    >>> Linear(3, 2)(wg.ones(4, 3)).shape
    webgrad.Size([4, 2])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype, device=device))
        self.bias = Parameter(empty(out_features, dtype=dtype, device=device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        init.default_init_(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's ``Linear`` subclass for ``MultiheadAttention.out_proj`` (a marker for its quantization
    tools): the same layer, under the name scripts allowlist and printouts show."""


class Bilinear(Module):
    """``y[n, o] = x1[n] @ weight[o] @ x2[n] + bias[o]`` with weight [out, in1, in2].

    >>> import webgrad as wg
    >>> Bilinear(3, 4, 2)(wg.ones(5, 3), wg.ones(5, 4)).shape
    webgrad.Size([5, 2])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, dtype=dtype, device=device))
        self.bias = Parameter(empty(out_features, dtype=dtype, device=device)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        if input1.shape[-1] != self.in1_features or input2.shape[-1] != self.in2_features:
            raise ValueError(f"Bilinear: expected inputs [..., {self.in1_features}] and [..., {self.in2_features}], "
                             f"got {tuple(input1.shape)} and {tuple(input2.shape)}")
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear", "Bilinear"]
