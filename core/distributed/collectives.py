"""The collectives and point-to-point calls on tensors, under PyTorch's names and signatures.

Each runs as one non-blocking MPI call on the default group. ``async_op=True`` returns its
``Work`` (``wait()`` puts the results in the tensors); otherwise the call returns once done, with
None (``recv``: the sender's rank). Results are written as an in-place op writes (``buffers``):
views see them, version counters count them, autograd does not record them.
"""
from __future__ import annotations

from ..tensor import Tensor
from .buffers import divide, fresh, host_flat, piece, spec, value_like, write
from .group import default_group, peer_rank
from .mpi import ReduceOp, mpi_op_name, wire_dtype


def _run(g, who, begin, finish, async_op):
    work = g.start(who, begin, finish, watch=async_op)
    if async_op:
        return work
    work.wait()
    return None


def _tensor(who, name, t) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{who}: expected a webgrad Tensor as {name}, got {type(t).__name__}")
    return t


def _tag(who, tag) -> int:
    if type(tag) is not int or tag < 0:
        raise ValueError(f"{who}: tag must be an int >= 0, got {tag!r}")
    return tag


def _same(who, name, t, like, numel) -> None:
    """``t`` (argument ``name``) must have ``like``'s dtype and ``numel`` elements."""
    _tensor(who, name, t)
    if t._dtype is not like._dtype or t.numel() != numel:
        raise RuntimeError(f"{who}: {name} must be {like.dtype.name} with {numel} elements, got "
                           f"{t.dtype.name} of shape {tuple(t.shape)}")


def _reduced(g, op, flat):
    """``flat`` (a fresh reduction result) after the last step of ``op``: AVG divides by the ranks."""
    return divide(flat, g.size()) if op is ReduceOp.AVG else flat


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across every rank with ``op`` and leave the result in every rank's ``tensor``.

    >>> import webgrad as wg, webgrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = wg.tensor([1.0, 2.0]) * (dist.get_rank() + 1)
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM); t.tolist()   # a world of one: unchanged
    [1.0, 2.0]
    >>> dist.destroy_process_group()
    """
    who = "all_reduce"
    g = default_group(who, group)
    _tensor(who, "tensor", tensor)
    mpi_op = getattr(g.MPI, mpi_op_name(who, op, tensor._dtype))
    send = host_flat(tensor)
    recv = fresh(send.numel(), send._dtype)
    return _run(g, who, lambda: [g.comm.Iallreduce(spec(send, g.MPI), spec(recv, g.MPI), mpi_op)],
                lambda: [write(tensor, value_like(_reduced(g, op, recv), tensor), who)], async_op)


def all_reduce_owned(flat, op=ReduceOp.SUM, async_op=False):
    """``all_reduce`` of a 1-D ``cpu`` tensor of a wire dtype whose memory no other tensor holds
    (DistributedDataParallel's buckets): reduced in place, with no receive buffer. Returns the
    work, whose ``result()`` is ``[the reduced tensor]`` (``flat``, or for AVG its quotient)."""
    who = "all_reduce"
    g = default_group(who)
    mpi_op = getattr(g.MPI, mpi_op_name(who, op, flat._dtype))
    return g.start(who, lambda: [g.comm.Iallreduce(g.MPI.IN_PLACE, spec(flat, g.MPI), mpi_op)],
                   lambda: [_reduced(g, op, flat)], watch=async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into every other rank's ``tensor`` (of the same shape and dtype).

    >>> import webgrad as wg, webgrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = wg.arange(3.0) if dist.get_rank() == 0 else wg.zeros(3)
    >>> dist.broadcast(t, src=0); t.tolist()
    [0.0, 1.0, 2.0]
    >>> dist.destroy_process_group()
    """
    who = "broadcast"
    g = default_group(who, group)
    _tensor(who, "tensor", tensor)
    root = peer_rank(who, g, src, group_src, "src")
    if g.rank() == root:
        buf, finish = host_flat(tensor), lambda: [tensor]
    else:
        buf = fresh(tensor.numel(), wire_dtype(tensor._dtype))
        finish = lambda: [write(tensor, value_like(buf, tensor), who)]   # noqa: E731
    return _run(g, who, lambda: [g.comm.Ibcast(spec(buf, g.MPI), root=root)], finish, async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fill ``tensor_list[i]`` with rank ``i``'s ``tensor`` (one tensor per rank, each of
    ``tensor``'s dtype and number of elements).

    >>> import webgrad as wg, webgrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = [wg.zeros(2) for _ in range(dist.get_world_size())]
    >>> dist.all_gather(out, wg.ones(2) * dist.get_rank()); [t.tolist() for t in out]
    [[0.0, 0.0]]
    >>> dist.destroy_process_group()
    """
    who = "all_gather"
    g = default_group(who, group)
    _tensor(who, "tensor", tensor)
    if not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != g.size():
        raise RuntimeError(f"{who}: tensor_list must be a list of {g.size()} tensors (one per rank), got "
                           f"{len(tensor_list) if isinstance(tensor_list, (list, tuple)) else type(tensor_list).__name__}")
    n = tensor.numel()
    for i, out in enumerate(tensor_list):
        _same(who, f"tensor_list[{i}]", out, tensor, n)
    send = host_flat(tensor)
    recv = fresh(n * g.size(), send._dtype)

    def finish():
        return [write(out, value_like(piece(recv, i, n), out), who) for i, out in enumerate(tensor_list)]
    return _run(g, who, lambda: [g.comm.Iallgather(spec(send, g.MPI), spec(recv, g.MPI))], finish, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather every rank's ``input_tensor`` into ``output_tensor``, rank by rank along its first
    dimension (``output_tensor`` holds world-size times ``input_tensor``'s elements: shaped
    ``[world * d0, ...]`` or ``[world, d0, ...]``).

    >>> import webgrad as wg, webgrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = wg.zeros(dist.get_world_size(), 2)
    >>> dist.all_gather_into_tensor(out, wg.tensor([1.0, 2.0])); out.tolist()
    [[1.0, 2.0]]
    >>> dist.destroy_process_group()
    """
    who = "all_gather_into_tensor"
    g = default_group(who, group)
    _tensor(who, "input_tensor", input_tensor)
    _same(who, "output_tensor", output_tensor, input_tensor, input_tensor.numel() * g.size())
    send = host_flat(input_tensor)
    recv = fresh(output_tensor.numel(), send._dtype)
    return _run(g, who, lambda: [g.comm.Iallgather(spec(send, g.MPI), spec(recv, g.MPI))],
                lambda: [write(output_tensor, value_like(recv, output_tensor), who)], async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` across the ranks with ``op`` and leave rank ``i`` the ``i``-th of
    world-size equal parts of the result, in ``output`` (``input`` holds world-size times
    ``output``'s elements).

    >>> import webgrad as wg, webgrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = wg.zeros(2)
    >>> dist.reduce_scatter_tensor(out, wg.tensor([3.0, 4.0])); out.tolist()
    [3.0, 4.0]
    >>> dist.destroy_process_group()
    """
    who = "reduce_scatter_tensor"
    g = default_group(who, group)
    _tensor(who, "output", output)
    _same(who, "input", input, output, output.numel() * g.size())
    mpi_op = getattr(g.MPI, mpi_op_name(who, op, output._dtype))
    send = host_flat(input)
    recv = fresh(output.numel(), send._dtype)
    return _run(g, who, lambda: [g.comm.Ireduce_scatter_block(spec(send, g.MPI), spec(recv, g.MPI), mpi_op)],
                lambda: [write(output, value_like(_reduced(g, op, recv), output), who)], async_op)


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank has called ``barrier`` (``device_ids`` has no effect here; ``timeout``,
    a ``timedelta``, replaces the group's for this call)."""
    who = "barrier"
    g = default_group(who, group)
    work = g.start(who, lambda: [g.comm.Ibarrier()], watch=async_op)
    if async_op:
        return work
    work.wait(timeout)
    return None


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst``; returns the ``Work``."""
    who = "isend"
    g = default_group(who, group)
    _tensor(who, "tensor", tensor)
    dest = peer_rank(who, g, dst, group_dst, "dst")
    if dest == g.rank():
        raise ValueError(f"{who}: invalid destination rank {dest}: should not be the same as the rank of the "
                         f"current process")
    buf, tag = host_flat(tensor), _tag(who, tag)
    return g.start(who, lambda: [g.comm.Isend(spec(buf, g.MPI), dest=dest, tag=tag)], lambda: [tensor], watch=True)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None; the work's
    ``source_rank()`` says which); returns the ``Work``."""
    who = "irecv"
    g = default_group(who, group)
    _tensor(who, "tensor", tensor)
    source = g.MPI.ANY_SOURCE if src is None and group_src is None else peer_rank(who, g, src, group_src, "src")
    buf, tag = fresh(tensor.numel(), wire_dtype(tensor._dtype)), _tag(who, tag)
    return g.start(who, lambda: [g.comm.Irecv(spec(buf, g.MPI), source=source, tag=tag)],
                   lambda: [write(tensor, value_like(buf, tensor), who)], watch=True)


def send(tensor, dst=None, group=None, tag=0, group_dst=None) -> None:
    """Send ``tensor`` to rank ``dst`` (which calls ``recv``), returning once it is sent.

    >>> # rank 0: dist.send(wg.ones(2), dst=1)      rank 1: dist.recv(t, src=0) -> 0
    """
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the sender's rank."""
    return irecv(tensor, src, group, tag, group_src).source_rank()


__all__ = ["all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "barrier",
           "isend", "irecv", "send", "recv"]
