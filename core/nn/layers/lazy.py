"""Lazy layers (PyTorch's ``LazyModuleMixin``): ``LazyLinear``, ``LazyConv1d/2d/3d``,
``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d`` infer
their input size from the first input, then become the plain layer (``cls_to_become``). Their
weights are ``UninitializedParameter``\\ s until then, materialized in place, so an optimizer built
before the first call trains them. A ``load_state_dict`` before the first call takes the shapes
from the state (and the layer becomes the plain one there and then, as webgrad's LazyLinear did).
"""
from __future__ import annotations

from ...dtypes import int64
from ...engine import no_grad
from ...ops.creation import zeros
from ..parameter import UninitializedBuffer, UninitializedParameter, UninitializedTensorMixin
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instance_norm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d


def _infer_parameters(module, args):
    """The forward pre-hook of a lazy module: size its tensors from the input, then become the plain layer."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
    module._become()


class LazyModuleMixin:
    """What lazy layers share: ``has_uninitialized_params``, the first-call hook and the state_dict path."""

    cls_to_become = None
    inferred = ""   # the size attribute the first input sets (0 until then)

    def _lazy_weights(self, bias, device, dtype):
        """Uninitialized ``weight`` (and ``bias``), then the first-call hook."""
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._lazy_setup()

    def reset_parameters(self):
        if not self.has_uninitialized_params() and getattr(self, self.inferred) != 0:
            super().reset_parameters()

    def _lazy_setup(self):
        self.__dict__["_initialize_hook"] = self.register_forward_pre_hook(_infer_parameters)

    def _lazy_tensors(self):
        return [(table, name, t) for table in ("_parameters", "_buffers") for name, t in self.__dict__[table].items()
                if isinstance(t, UninitializedTensorMixin)]

    def has_uninitialized_params(self) -> bool:
        """True while a parameter or buffer has no shape yet."""
        return bool(self._lazy_tensors())

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _become(self):
        self.__dict__.pop("_initialize_hook").remove()
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _materialize_from_state(self, state_dict, prefix):
        """Give each uninitialized tensor the shape of its entry in ``state_dict`` (load_state_dict calls this)."""
        found = [(t, state_dict[prefix + name]) for _, name, t in self._lazy_tensors() if prefix + name in state_dict]
        for t, value in found:
            t.materialize(tuple(value.shape))
        if found and not self.has_uninitialized_params():
            self._sizes_from_state()
            self._become()


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dim of its first input.

    >>> import webgrad as wg
    >>> layer = LazyLinear(3)
    >>> layer(wg.ones(2, 5)).shape, type(layer).__name__, layer.weight.shape
    (webgrad.Size([2, 3]), 'Linear', webgrad.Size([3, 5]))
    """

    cls_to_become = Linear
    inferred = "in_features"

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__(0, 0, False, device=device, dtype=dtype)
        self.out_features = out_features
        self._lazy_weights(bias, device, dtype)

    def initialize_parameters(self, input):
        """Give the weight its shape [out_features, input.shape[-1]] and PyTorch's default init."""
        if self.has_uninitialized_params():
            if input.ndim < 1:
                raise RuntimeError("LazyLinear: cannot infer in_features from a 0-d input")
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

    def _sizes_from_state(self):
        self.in_features = self.weight.shape[1]


class _LazyConvXdMixin(LazyModuleMixin):
    """The lazy convolutions: ``in_channels`` from the first input's channel dim."""

    inferred = "in_channels"

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.out_channels = out_channels
        self._lazy_weights(bias, device, dtype)

    def _get_in_channels(self, input) -> int:
        unbatched = self.dims + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise ValueError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                             f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.ndim == unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input, *args):
        """Give the weight its shape from the input's channels and PyTorch's default init."""
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups:
            raise ValueError(f"{type(self).__name__}: in_channels ({self.in_channels}) must be divisible by groups "
                             f"({self.groups})")
        self._materialize_weights()
        with no_grad():
            self.reset_parameters()

    def _materialize_weights(self):
        channels = (self.in_channels, self.out_channels // self.groups) if self.transposed else \
            (self.out_channels, self.in_channels // self.groups)
        self.weight.materialize(channels + self.kernel_size)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))

    def _sizes_from_state(self):
        self.in_channels = self.weight.shape[0] if self.transposed else self.weight.shape[1] * self.groups


def _lazy_class(name, mixin, base, __init__, args, example, value):
    """The lazy form of ``base`` (PyTorch's constructor ``__init__``), with a docstring example."""
    doc = (f"A ``{base.__name__}`` whose ``{mixin.inferred}`` comes from its first input.\n\n"
           f"    >>> import webgrad as wg\n    >>> m = {name}({args})\n"
           f"    >>> _ = m({example}); type(m).__name__, m.{mixin.inferred}\n    ('{base.__name__}', {value})\n")
    return type(name, (mixin, base), {"__init__": __init__, "cls_to_become": base, "__module__": __name__,
                                      "__doc__": doc})


def _lazy_conv(name, base, dims):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device=device,
                      dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)
    return _lazy_class(name, _LazyConvXdMixin, base, __init__, "4, 3", f"wg.ones(1, 2{', 5' * dims})", 2)


def _lazy_conv_transpose(name, base, dims):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                      device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)
    return _lazy_class(name, _LazyConvXdMixin, base, __init__, "4, 3", f"wg.ones(1, 2{', 5' * dims})", 2)


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv(f"LazyConv{d}d", b, d) for d, b in
                                      ((1, Conv1d), (2, Conv2d), (3, Conv3d)))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv_transpose(f"LazyConvTranspose{d}d", b, d) for d, b in
    ((1, ConvTranspose1d), (2, ConvTranspose2d), (3, ConvTranspose3d)))


class _LazyNormBase(LazyModuleMixin):
    """The lazy batch and instance norms: ``num_features`` from the first input's dim 1 (PyTorch's rule,
    also for an unbatched instance-norm input)."""

    inferred = "num_features"

    def _lazy_init(self, affine, track_running_stats, device, dtype, bias):
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype) if bias else None
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.register_buffer("num_batches_tracked", zeros((), dtype=int64, device=device))
        self._lazy_setup()

    def initialize_parameters(self, input):
        """Size the weight, bias and running statistics from ``input.shape[1]``; PyTorch's init."""
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        for _, _, t in self._lazy_tensors():
            t.materialize((self.num_features,))
        with no_grad():
            self.reset_parameters()

    def _sizes_from_state(self):
        self.num_features = (self.weight if self.affine else self.running_mean).shape[0]


def _lazy_norm(name, base, affine, track):
    def __init__(self, eps=1e-5, momentum=0.1, affine=affine, track_running_stats=track, device=None, dtype=None, *,
                 bias=True):
        base.__init__(self, 0, eps, momentum, False, False, device=device, dtype=dtype)
        self._lazy_init(affine, track_running_stats, device, dtype, bias)
    return _lazy_class(name, _LazyNormBase, base, __init__, "", f"wg.randn(2, 3, 4{', 4' * (int(name[-2]) - 1)})", 3)


LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (_lazy_norm(f"LazyBatchNorm{d}d", b, True, True) for d, b in
                                                     ((1, BatchNorm1d), (2, BatchNorm2d), (3, BatchNorm3d)))
# PyTorch's lazy instance norms default to affine=True, track_running_stats=True (unlike InstanceNorm's)
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy_norm(f"LazyInstanceNorm{d}d", b, True, True) for d, b in
    ((1, InstanceNorm1d), (2, InstanceNorm2d), (3, InstanceNorm3d)))


__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
