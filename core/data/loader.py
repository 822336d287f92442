"""``DataLoader``: batches from a dataset, optionally shuffled by a seeded generator.

For a ``TensorDataset`` with the default collate, a batch is gathered with one
``index_select`` per tensor on the tensors' backend (no per-item Python work).
"""
from __future__ import annotations

import random as _random

from ..tensor import Tensor
from .dataset import TensorDataset


def _rng(generator):
    """A ``random.Random`` from a seed, a Random, or (None) webgrad's generator (``manual_seed``)."""
    if generator is None:
        from ..random import draw_seed
        return _random.Random(draw_seed(None, "DataLoader"))
    if isinstance(generator, int):
        return _random.Random(generator)
    return generator


def permutation(n: int, generator=None) -> list:
    """A random permutation of range(n) (``generator``: a seed, a ``random.Random``, or None)."""
    order = list(range(n))
    _rng(generator).shuffle(order)
    return order


def default_collate(batch):
    """Stack a list of samples: tensors -> stacked tensor, numbers -> tensor, tuples/lists and dicts
    element by element.

    >>> import webgrad as wg
    >>> x, y = default_collate([(wg.ones(2), 0), (wg.zeros(2), 1)])
    >>> x.shape, y.tolist()
    ((2, 2), [0, 1])
    """
    import webgrad as wg
    first = batch[0]
    if isinstance(first, Tensor):
        return wg.stack(batch)
    if isinstance(first, (bool, int, float)):
        return wg.tensor(batch)
    if isinstance(first, dict):
        return {k: default_collate([b[k] for b in batch]) for k in first}
    if isinstance(first, (tuple, list)):
        columns = [default_collate(list(items)) for items in zip(*batch)]
        return tuple(columns) if isinstance(first, tuple) else columns
    return batch


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size``; ``shuffle`` draws a new order each
    epoch from ``generator`` (a seed or a ``random.Random``; by default webgrad's seeded generator);
    ``drop_last`` drops a final short batch.

    >>> import webgrad as wg
    >>> ds = TensorDataset(wg.arange(10).float(), wg.arange(10))
    >>> [y.tolist() for _, y in DataLoader(ds, batch_size=4)]
    [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, generator=None, drop_last=False, collate_fn=None,
                 num_workers=0, **kwargs):
        if batch_size is None or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.collate_fn = collate_fn or default_collate
        self._rng = _rng(generator) if shuffle else None

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _batches(self):
        n = len(self.dataset)
        order = list(range(n))
        if self.shuffle:
            self._rng.shuffle(order)
        stop = n - n % self.batch_size if self.drop_last else n
        for start in range(0, stop, self.batch_size):
            yield order[start:start + self.batch_size]

    def __iter__(self):
        fast = isinstance(self.dataset, TensorDataset) and self.collate_fn is default_collate
        for idx in self._batches():
            if fast:
                yield tuple(_rows(t, idx) for t in self.dataset.tensors)
            else:
                yield self.collate_fn([self.dataset[i] for i in idx])


def _rows(t, idx):
    import webgrad as wg
    if idx == list(range(idx[0], idx[0] + len(idx))):
        return t[idx[0]:idx[0] + len(idx)]
    return t.index_select(0, wg.tensor(idx, dtype=wg.int32, backend=t._backend))


__all__ = ["DataLoader", "default_collate", "permutation"]
