"""Datasets, samplers and loaders: PyTorch's ``torch.utils.data`` (``webgrad.data`` is the same
package, plus MNIST readers).

>>> import webgrad as wg
>>> from webgrad.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(wg.randn(10, 3), wg.arange(10))
>>> len(DataLoader(ds, batch_size=4, shuffle=True, generator=wg.Generator().manual_seed(0)))
3
"""
from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset", "StackDataset", "random_split",
           "default_collate", "default_convert", "get_worker_info", "DataLoader", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler"]
