"""Parallel training modules (PyTorch's ``torch.nn.parallel``): ``DistributedDataParallel`` and
``DataParallel`` (which, without CUDA, runs its module as PyTorch's does).

>>> import webgrad as wg
>>> wg.nn.parallel.DistributedDataParallel.__name__
'DistributedDataParallel'
"""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel", "DataParallel"]
