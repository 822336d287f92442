"""Utilities under PyTorch's names: ``webgrad.utils.data`` is ``torch.utils.data``,
``webgrad.utils.checkpoint`` is ``torch.utils.checkpoint``.

>>> import webgrad as wg
>>> from webgrad.utils.data import DataLoader, TensorDataset
>>> len(DataLoader(TensorDataset(wg.arange(10)), batch_size=4))
3
"""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]
