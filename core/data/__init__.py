"""Datasets and loaders (PyTorch's ``torch.utils.data``), plus MNIST-style IDX datasets.

>>> import webgrad as wg
>>> ds = wg.data.TensorDataset(wg.randn(10, 3), wg.arange(10))
>>> len(wg.data.DataLoader(ds, batch_size=4, shuffle=True, generator=0))
3
"""
from .dataset import Dataset, Subset, TensorDataset, random_split
from .loader import DataLoader, default_collate
from .mnist import MNIST, FashionMNIST, read_idx

__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "DataLoader", "default_collate", "MNIST",
           "FashionMNIST", "read_idx"]
