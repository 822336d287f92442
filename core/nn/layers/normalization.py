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

    def reset_parameters(self):
        """Running statistics to (0, 1, 0 batches), weight to ones, bias to zeros (PyTorch's)."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

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

    def _check_input_dim(self, input):
        if input.ndim not in self.ranks:
            raise ValueError(f"{type(self).__name__}: expected a {' or '.join(f'{r}D' for r in self.ranks)} input, "
                             f"got shape {tuple(input.shape)}")

    def forward(self, input):
        self._check_input_dim(input)
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


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics PyTorch synchronizes across the processes of a distributed run.
    Outside one (no process group, or one process) and in eval mode it is ``BatchNorm`` over any
    [N, C, ...] input, as in PyTorch. Training with several processes raises ValueError, as
    PyTorch's does for a CPU tensor: webgrad has no synchronized kernel. ``convert_sync_batchnorm``
    turns a model's batch norms into this.

    >>> import webgrad as wg
    >>> net = SyncBatchNorm.convert_sync_batchnorm(wg.nn.Sequential(wg.nn.BatchNorm2d(3)))
    >>> type(net[0]).__name__, net[0](wg.randn(2, 3, 4, 4)).shape
    ('SyncBatchNorm', webgrad.Size([2, 3, 4, 4]))
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"SyncBatchNorm: expected at least 2D input (got {input.ndim}D input)")
        if self.training and self._world_size() > 1:
            raise ValueError(f"SyncBatchNorm expected input tensor to be on GPU (PyTorch's CUDA); webgrad has no "
                             f"synchronized batch norm for {self._world_size()} processes: use BatchNorm (local "
                             f"statistics) or eval mode")

    def _world_size(self) -> int:
        from ...distributed import get_world_size, is_initialized
        return get_world_size(self.process_group) if is_initialized() else 1

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*d`` in it replaced by a ``SyncBatchNorm`` holding the same
        parameters, running statistics and mode (the module itself when it is one)."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group, bias=module.bias is not None)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                setattr(out, name, getattr(module, name))
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


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


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm", "RMSNorm"]
