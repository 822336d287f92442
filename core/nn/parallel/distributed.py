"""``DistributedDataParallel``: data-parallel training over the ranks of the default process
group (PyTorch's ``torch.nn.parallel.DistributedDataParallel``), on ``webgrad.distributed``."""
from __future__ import annotations

import warnings
from contextlib import contextmanager

from ...distributed.collectives import broadcast
from ...distributed.group import default_group
from ...distributed.objects import all_gather_object
from ...engine import is_grad_enabled, no_grad
from ..module import Module
from .reducer import DEFAULT_BUCKET_CAP_MB, DEFAULT_FIRST_BUCKET_BYTES, MIB, Reducer

# Arguments PyTorch takes that change nothing here (see the class docstring), and those that would
# change results and are not implemented (they must keep their defaults).
_NO_EFFECT = ("device_ids", "output_device", "dim", "check_reduction", "gradient_as_bucket_view", "static_graph",
              "delay_all_reduce_named_params", "param_to_hook_all_reduce", "skip_all_reduce_unused_params",
              "batched_grad_copy")
_NOT_IMPLEMENTED = ("mixed_precision", "device_mesh")


class DistributedDataParallel(Module):
    """Train ``module`` data-parallel: every rank holds a replica, runs it on its own share of the
    batch, and ``backward()`` leaves in every replica's ``.grad`` the gradients averaged over the
    ranks, so one optimizer step keeps the replicas equal.

    At wrap time the parameters (and buffers) of rank 0 are broadcast to every rank. During
    ``backward()`` the gradients are all-reduced in buckets as soon as each bucket's gradients
    are ready, overlapping communication with the rest of the backward pass (``bucket_cap_mb``
    sets the bucket size, 25 MiB by default and 1 MiB for the first bucket). Buffers are
    broadcast from rank 0 at the start of each forward unless ``forward_sync_buffers`` (or the
    older ``broadcast_buffers``) is False. ``no_sync()`` accumulates gradients locally;
    ``find_unused_parameters=True`` lets a forward leave parameters out; ``module`` is the model.

    PyTorch's ``device_ids``, ``output_device``, ``dim``, ``check_reduction``,
    ``gradient_as_bucket_view``, ``static_graph``, ``delay_all_reduce_named_params``,
    ``param_to_hook_all_reduce``, ``skip_all_reduce_unused_params`` and ``batched_grad_copy``
    are accepted and change nothing here (the results do not depend on them);
    ``mixed_precision`` and ``device_mesh`` are not implemented.

    >>> import webgrad as wg, webgrad.distributed as dist
    >>> dist.init_process_group("mpi")                   # a world of one when not launched
    >>> model = wg.nn.parallel.DistributedDataParallel(wg.nn.Linear(3, 1))
    >>> model(wg.ones(4, 3)).sum().backward()
    >>> model.module.bias.grad.tolist()                  # averaged over the ranks
    [4.0]
    >>> dist.destroy_process_group()
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None):
        super().__init__()
        who = "DistributedDataParallel"
        for name, value in (("mixed_precision", mixed_precision), ("device_mesh", device_mesh)):
            if value is not None:
                raise NotImplementedError(f"{who}: {name} is not implemented in webgrad")
        if not isinstance(module, Module):
            raise TypeError(f"{who}: module must be a webgrad.nn.Module, got {type(module).__name__}")
        group = default_group(who, process_group)
        self.process_group, self.module = group, module
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(f"{who} is not needed when a module doesn't have any parameter that requires a "
                               f"gradient.")
        self.forward_sync_buffers, init_sync_buffers = _buffer_sync(broadcast_buffers, forward_sync_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = self.require_forward_param_sync = True
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.static_graph, self.gradient_as_bucket_view = static_graph, gradient_as_bucket_view
        caps = _bucket_caps(who, bucket_cap_mb, bucket_cap_mb_list)
        self.bucket_bytes_cap = caps[-1]
        if init_sync:
            _verify_same_model(who, group, named)
            _broadcast_from_rank0([p for _, p in module.named_parameters()] +
                                  (list(module.buffers()) if init_sync_buffers else []))
        self.reducer = Reducer([p for _, p in named], [n for n, _ in named], caps, group.size(), group.rank())

    @property
    def broadcast_buffers(self) -> bool:
        """Whether buffers are broadcast from rank 0 at the start of each forward (PyTorch's older
        name of ``forward_sync_buffers``)."""
        return self.forward_sync_buffers

    @broadcast_buffers.setter
    def broadcast_buffers(self, value: bool) -> None:
        self.forward_sync_buffers = value

    def forward(self, *inputs, **kwargs):
        if self.forward_sync_buffers and self.require_forward_param_sync and self.process_group.size() > 1:
            _broadcast_from_rank0(list(self.module.buffers()))
        output = self.module(*inputs, **kwargs)
        self.require_forward_param_sync = is_grad_enabled() and self.require_backward_grad_sync
        if self.require_forward_param_sync:
            self.reducer.prepare_for_backward(output, self.find_unused_parameters)
        elif is_grad_enabled():     # under no_sync: this forward's backward accumulates locally
            self.reducer.skip_backward()
        return output

    @contextmanager
    def no_sync(self):
        """Inside this context, forward and backward passes accumulate gradients on this rank only;
        the first synchronised backward after it averages the accumulated gradients.

        >>> # with ddp.no_sync():
        >>> #     ddp(x1).sum().backward()    # local accumulation
        >>> # ddp(x2).sum().backward()        # averages the sum of both
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


def _buffer_sync(broadcast_buffers, forward_sync_buffers) -> tuple:
    """(sync buffers at each forward, sync them at wrap time), as PyTorch 2.13 reads its two arguments."""
    if broadcast_buffers is not None:
        warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: unlike "
                      "`broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at init.",
                      FutureWarning, stacklevel=3)
    if forward_sync_buffers is not None:
        return forward_sync_buffers, True
    effective = True if broadcast_buffers is None else broadcast_buffers
    return effective, effective


def _bucket_caps(who, bucket_cap_mb, bucket_cap_mb_list) -> list:
    """Byte caps of the buckets in order (the last one repeating)."""
    if bucket_cap_mb_list:
        caps = [int(mb * MIB) for mb in bucket_cap_mb_list]
    elif bucket_cap_mb is None:
        caps = [DEFAULT_FIRST_BUCKET_BYTES, DEFAULT_BUCKET_CAP_MB * MIB]
    else:
        caps = [int(bucket_cap_mb * MIB)]
    if any(c < 0 for c in caps):
        raise ValueError(f"{who}: bucket sizes must be >= 0 MiB, got {bucket_cap_mb_list or bucket_cap_mb}")
    return caps


def _verify_same_model(who, group, named) -> None:
    """Every rank must hold parameters of the same shapes and dtypes, in the same order."""
    mine = [(tuple(p.shape), p.dtype.name) for _, p in named]
    everyone = [None] * group.size()
    all_gather_object(everyone, mine)
    for rank, theirs in enumerate(everyone):
        if theirs != mine:
            raise RuntimeError(f"{who} expects same model across all ranks, but rank {group.rank()} has {len(mine)} "
                               f"params {mine}, while rank {rank} has inconsistent {len(theirs)} params {theirs}")


def _broadcast_from_rank0(tensors) -> None:
    with no_grad():
        works = [broadcast(t, src=0, async_op=True) for t in tensors]
        for w in works:
            w.wait()


__all__ = ["DistributedDataParallel"]
