"""Normalisation layers: BatchNorm1d/2d/3d, LayerNorm, GroupNorm, RMSNorm."""
from __future__ import annotations

from .. import functional as F
from .. import init
from ...dtypes import int64
from ...ops.creation import ones, zeros
from ..module import Module
from ..parameter import Parameter


class _NormBase(Module):
    """PyTorch's base of the batch and instance norms: per-channel weight/bias and the running
    statistics buffers (running_mean, running_var, num_batches_tracked)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(ones(num_features, dtype=dtype, device=device)) if affine else None
        self.bias = Parameter(zeros(num_features, dtype=dtype, device=device)) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", zeros((), dtype=int64, device=device))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked = zeros((), dtype=int64, device=self.running_mean.device)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    """Per-channel normalisation of [N, C, ...] over the batch, with learned scale/shift and running statistics."""

    ranks = ()

    def forward(self, input):
        if input.ndim not in self.ranks:
            raise ValueError(f"{type(self).__name__}: expected a {' or '.join(f'{r}D' for r in self.ranks)} input, "
                             f"got shape {tuple(input.shape)}")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked = self.num_batches_tracked + 1
            if self.momentum is None:
                momentum = 1.0 / self.num_batches_tracked.item()
        use_batch = self.training or not self.track_running_stats
        return F.batch_norm(input, self.running_mean if not self.training or self.track_running_stats else None,
                            self.running_var if not self.training or self.track_running_stats else None,
                            self.weight, self.bias, use_batch, momentum, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of [N, C] or [N, C, L].

    >>> import webgrad as wg
    >>> BatchNorm1d(3)(wg.randn(4, 3)).shape
    webgrad.Size([4, 3])
    """

    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of [N, C, H, W].

    >>> import webgrad as wg
    >>> BatchNorm2d(2)(wg.randn(4, 2, 3, 3)).shape
    webgrad.Size([4, 2, 3, 3])
    """

    ranks = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of [N, C, D, H, W].

    >>> import webgrad as wg
    >>> BatchNorm3d(2)(wg.randn(4, 2, 3, 3, 3)).shape
    webgrad.Size([4, 2, 3, 3, 3])
    """

    ranks = (5,)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dimensions, then scale and shift.

    >>> import webgrad as wg
    >>> LayerNorm(4)(wg.randn(2, 4)).shape
    webgrad.Size([2, 4])
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(ones(shape, dtype=dtype, device=device)) if elementwise_affine else None
        self.bias = Parameter(zeros(shape, dtype=dtype, device=device)) if elementwise_affine and bias else None

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise [N, C, ...] over groups of ``C / num_groups`` channels (and all spatial positions),
    then scale and shift per channel.

    >>> import webgrad as wg
    >>> GroupNorm(2, 4)(wg.randn(3, 4, 5)).shape
    webgrad.Size([3, 4, 5])
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Parameter(ones(num_channels, dtype=dtype, device=device)) if affine else None
        self.bias = Parameter(zeros(num_channels, dtype=dtype, device=device)) if affine and bias else None

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"




class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims, then a learned scale.

    >>> import webgrad as wg
    >>> RMSNorm(2)(wg.tensor([[3.0, 4.0]])).shape
    webgrad.Size([1, 2])
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(ones(*shape, dtype=dtype, device=device)) if elementwise_affine else None

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm"]
