"""Data-parallel training beyond one process, on MPI (PyTorch's ``torch.distributed``).

The ranks are processes started by ``python -m webgrad.distributed.run --nproc N script.py``
(or ``mpiexec``, on one machine or several); ``init_process_group`` joins them and the
collectives (``all_reduce``, ``broadcast``, ``all_gather``, ``all_gather_into_tensor``,
``reduce_scatter_tensor``, ``send``/``recv``, ``barrier``, ...) move tensors between them through
mpi4py. ``import webgrad`` never needs MPI: mpi4py is imported by ``init_process_group``
(``pip install 'webgrad[distributed]'``). ``webgrad.nn.parallel.DistributedDataParallel`` builds
data-parallel training on these.

``cpu`` tensors are sent from the numpy array behind them and received into one fresh array,
which becomes the tensor's value as an in-place op's result does (views and version counters
stay right); tensors on the GPU go through a host copy each way; float16 and bfloat16 travel as
float32. Only the default group exists (no ``new_group``).

>>> import webgrad as wg, webgrad.distributed as dist
>>> dist.init_process_group("mpi")                   # a world of one when not launched
>>> t = wg.ones(2) * (dist.get_rank() + 1)
>>> dist.all_reduce(t, op=dist.ReduceOp.AVG); t.tolist()
[1.0, 1.0]
>>> dist.destroy_process_group()
"""
from .collectives import (all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast, irecv, isend,
                          recv, reduce_scatter_tensor, send)
from .group import (GroupMember, ProcessGroup, default_pg_timeout, destroy_process_group, get_backend, get_rank,
                    get_world_size, group, init_process_group, is_available, is_gloo_available, is_initialized,
                    is_mpi_available, is_nccl_available)
from .mpi import ReduceOp
from .objects import all_gather_object, broadcast_object_list
from .work import Work

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "is_available", "is_mpi_available",
           "is_gloo_available", "is_nccl_available", "get_rank", "get_world_size", "get_backend", "group",
           "GroupMember", "ProcessGroup", "default_pg_timeout", "ReduceOp", "Work", "all_reduce", "broadcast",
           "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "barrier", "send", "recv", "isend",
           "irecv", "all_gather_object", "broadcast_object_list"]
