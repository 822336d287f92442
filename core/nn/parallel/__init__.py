"""Parallel training modules (PyTorch's ``torch.nn.parallel``): ``DistributedDataParallel``.

>>> import webgrad as wg
>>> wg.nn.parallel.DistributedDataParallel.__name__
'DistributedDataParallel'
"""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
