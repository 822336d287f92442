"""Utilities under PyTorch's names: ``webgrad.utils.data`` is ``torch.utils.data``.

>>> import webgrad as wg
>>> from webgrad.utils.data import DataLoader, TensorDataset
>>> len(DataLoader(TensorDataset(wg.arange(10)), batch_size=4))
3
"""
from . import data

__all__ = ["data"]
