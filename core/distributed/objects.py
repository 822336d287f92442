"""Collectives on picklable Python objects (PyTorch's ``all_gather_object`` and
``broadcast_object_list``): the pickles travel as bytes, their lengths first."""
from __future__ import annotations

import pickle
from array import array

from .group import default_group, peer_rank


def _wait(g, who, begin) -> None:
    g.start(who, begin).wait()


def _int64s(values) -> memoryview:
    return memoryview(array("q", values))


def all_gather_object(object_list, obj, group=None) -> None:
    """Fill ``object_list`` (one slot per rank) with every rank's ``obj`` (picklable).

    >>> import webgrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = [None] * dist.get_world_size()
    >>> dist.all_gather_object(out, {"rank": dist.get_rank()}); out
    [{'rank': 0}]
    >>> dist.destroy_process_group()
    """
    who = "all_gather_object"
    g = default_group(who, group)
    if not isinstance(object_list, list) or len(object_list) != g.size():
        raise ValueError(f"{who}: object_list must be a list with one slot per rank ({g.size()})")
    data = pickle.dumps(obj)
    sizes = _int64s([0] * g.size())
    _wait(g, who, lambda: [g.comm.Iallgather([_int64s([len(data)]), g.MPI.INT64_T], [sizes, g.MPI.INT64_T])])
    starts = [sum(sizes[:i]) for i in range(g.size())]
    gathered = bytearray(sum(sizes))
    _wait(g, who, lambda: [g.comm.Iallgatherv([data, g.MPI.BYTE], [gathered, (list(sizes), starts), g.MPI.BYTE])])
    object_list[:] = [pickle.loads(gathered[s:s + n]) for s, n in zip(starts, sizes)]


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None) -> None:
    """Replace the objects of ``object_list`` with rank ``src``'s (lists of one length on every
    rank; ``device`` has no effect here).

    >>> import webgrad.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> objs = ["config", 3] if dist.get_rank() == 0 else [None, None]
    >>> dist.broadcast_object_list(objs, src=0); objs
    ['config', 3]
    >>> dist.destroy_process_group()
    """
    who = "broadcast_object_list"
    g = default_group(who, group)
    root = peer_rank(who, g, src, group_src, "src")
    data = pickle.dumps(list(object_list)) if g.rank() == root else b""
    size = _int64s([len(data)])
    _wait(g, who, lambda: [g.comm.Ibcast([size, g.MPI.INT64_T], root=root)])
    buf = bytearray(data) if g.rank() == root else bytearray(size[0])
    _wait(g, who, lambda: [g.comm.Ibcast([buf, g.MPI.BYTE], root=root)])
    objects = pickle.loads(buf)
    if len(objects) != len(object_list):
        raise RuntimeError(f"{who}: rank {root} broadcast {len(objects)} objects but this rank's object_list "
                           f"holds {len(object_list)}")
    object_list[:] = objects


__all__ = ["all_gather_object", "broadcast_object_list"]
