"""Datasets and loaders: ``webgrad.utils.data`` (PyTorch's ``torch.utils.data``) under a shorter
name, plus MNIST-style IDX datasets.

>>> import webgrad as wg
>>> wg.data.DataLoader is wg.utils.data.DataLoader
True
>>> ds = wg.data.TensorDataset(wg.randn(10, 3), wg.arange(10))
>>> len(wg.data.DataLoader(ds, batch_size=4, shuffle=True, generator=0))
3
"""
from ..utils.data import *  # noqa: F401,F403
from ..utils.data import __all__ as _utils_data_all
from .mnist import MNIST, FashionMNIST, read_idx

__all__ = _utils_data_all + ["MNIST", "FashionMNIST", "read_idx"]
