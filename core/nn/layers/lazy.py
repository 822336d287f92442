"""Lazy layers: ``LazyLinear`` infers ``in_features`` from its first input, then becomes a ``Linear``
(PyTorch's ``cls_to_become``). Its weight and bias are Parameters from the start (empty until the
first call fills them in place), so an optimizer built before that call trains them."""
from __future__ import annotations

from ...ops.creation import empty
from ..parameter import Parameter
from .linear import Linear


class LazyLinear(Linear):
    """A ``Linear`` whose ``in_features`` is the last dim of its first input.

    >>> import webgrad as wg
    >>> layer = LazyLinear(3)
    >>> layer(wg.ones(2, 5)).shape, type(layer).__name__, layer.weight.shape
    (webgrad.Size([2, 3]), 'Linear', webgrad.Size([3, 5]))
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        super(Linear, self).__init__()
        self.in_features, self.out_features = 0, out_features
        self.weight = Parameter(empty(0, dtype=dtype, device=device))
        self.bias = Parameter(empty(0, dtype=dtype, device=device)) if bias else None

    def has_uninitialized_params(self) -> bool:
        """True until the first input (or a loaded state_dict) sets the weight's shape."""
        return self.in_features == 0

    def reset_parameters(self):
        if not self.has_uninitialized_params():
            super().reset_parameters()

    def _materialize(self, in_features):
        weight, bias = self.weight, self.bias
        weight.data = empty(self.out_features, in_features, dtype=weight.dtype, device=weight.device)
        if bias is not None:
            bias.data = empty(self.out_features, dtype=bias.dtype, device=bias.device)
        self.in_features = in_features
        Linear.reset_parameters(self)
        self.__class__ = self.cls_to_become

    def initialize_parameters(self, input):
        """Give the weight its shape [out_features, input.shape[-1]] and PyTorch's default init."""
        if self.has_uninitialized_params():
            if input.ndim < 1:
                raise RuntimeError("LazyLinear: cannot infer in_features from a 0-d input")
            self._materialize(input.shape[-1])

    def _materialize_from_state(self, state_dict, prefix):
        """Take in_features from a state_dict's weight (load_state_dict calls this before copying)."""
        weight = state_dict.get(prefix + "weight")
        if self.has_uninitialized_params() and weight is not None and len(weight.shape) == 2:
            self._materialize(weight.shape[1])

    def forward(self, input):
        self.initialize_parameters(input)
        return Linear.forward(self, input)


__all__ = ["LazyLinear"]
