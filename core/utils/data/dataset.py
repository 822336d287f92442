"""Datasets (PyTorch's ``torch.utils.data.dataset``): map-style ones answer ``dataset[i]`` and
``len(dataset)``, iterable-style ones ``iter(dataset)``; and the ways to join and split them."""
from __future__ import annotations

import bisect
import math
import warnings

from ...random import Generator, default_generator, permutation


def seeded(generator, op: str):
    """``generator`` as the random ops take it: a ``webgrad.Generator`` or None; an int is read as the
    seed of a new generator (webgrad.data's older spelling, kept working)."""
    if isinstance(generator, int) and not isinstance(generator, bool):
        return Generator().manual_seed(generator)
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{op}: generator must be a webgrad.Generator (or an int seed), got {type(generator).__name__}")
    return generator


class Dataset:
    """Base class of map-style datasets: subclasses define ``__getitem__`` (and usually ``__len__``;
    optionally ``__getitems__(indices)`` returning a list of samples, which the DataLoader then uses).
    ``a + b`` concatenates two datasets.

    >>> class Squares(Dataset):
    ...     def __getitem__(self, i): return i * i
    ...     def __len__(self): return 4
    >>> [Squares()[i] for i in range(4)], len(Squares() + Squares())
    ([0, 1, 4, 9], 8)
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of Dataset should implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base class of iterable-style datasets (streams): subclasses define ``__iter__``.
    ``a + b`` chains two of them.

    >>> class Count(IterableDataset):
    ...     def __iter__(self): return iter(range(3))
    >>> list(Count() + Count())
    [0, 1, 2, 0, 1, 2]
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of IterableDataset should implement __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Rows of tensors that share their first dimension: item ``i`` is ``(t[i] for t in tensors)``.

    >>> import webgrad as wg
    >>> ds = TensorDataset(wg.arange(6).reshape(3, 2), wg.tensor([0, 1, 0]))
    >>> len(ds), [t.tolist() for t in ds[1]]
    (3, [[2, 3], 1])
    """

    def __init__(self, *tensors):
        if not tensors or tensors[0].ndim == 0:
            raise IndexError("TensorDataset: needs at least one tensor with a first dimension to index, got "
                             f"{[tuple(t.shape) for t in tensors]}")
        if any(t.ndim == 0 or t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError(f"TensorDataset: size mismatch between tensors (first dimensions "
                                 f"{[t.shape[0] if t.ndim else None for t in tensors]})")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class ConcatDataset(Dataset):
    """Map-style datasets one after another.

    >>> ds = ConcatDataset([[1, 2], [3]])
    >>> len(ds), ds[2], ds[-1]
    (3, 3, 3)
    """

    @staticmethod
    def cumsum(sequence):
        """Running totals of the lengths of ``sequence``'s datasets."""
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("ConcatDataset: datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset (use ChainDataset)")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError(f"ConcatDataset: absolute value of index {idx} should not exceed the length "
                                 f"{len(self)}")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        if which == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {idx} is out of range for length {len(self)}")
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained on the fly.

    >>> class Count(IterableDataset):
    ...     def __iter__(self): return iter(range(2))
    >>> list(ChainDataset([Count(), Count()]))
    [0, 1, 0, 1]
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            _check_iterable(d)
            yield from d

    def __len__(self):
        return sum(len(_check_iterable(d)) for d in self.datasets)


def _check_iterable(d):
    if not isinstance(d, IterableDataset):
        raise AssertionError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")
    return d


class Subset(Dataset):
    """The items of ``dataset`` at ``indices``.

    >>> Subset([10, 11, 12, 13], [3, 0])[0]
    13
    """

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


class StackDataset(Dataset):
    """Datasets of one length side by side: item ``i`` is the tuple (given positionally) or the
    dict (given by keyword) of their items ``i`` (PyTorch's ``StackDataset``). Batched reads go
    through each dataset's ``__getitems__`` where it has one.

    >>> StackDataset([1, 2], ["a", "b"])[1], StackDataset(x=[1, 2], y=[3, 4])[0]
    ((2, 'b'), {'x': 1, 'y': 3})
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset: Supported either ``tuple``- (via ``args``) or ``dict``- (via ``kwargs``) "
                             "like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("StackDataset: At least one dataset should be passed")
        self.datasets = args or kwargs
        parts = list(args or kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError(f"StackDataset: Size mismatch between datasets (lengths {[len(d) for d in parts]})")

    def _named(self):
        return self.datasets.items() if isinstance(self.datasets, dict) else enumerate(self.datasets)

    def __getitem__(self, index):
        items = {k: d[index] for k, d in self._named()}
        return items if isinstance(self.datasets, dict) else tuple(items.values())

    def __getitems__(self, indices: list):
        columns = {k: _batch_of(d, indices) for k, d in self._named()}
        if isinstance(self.datasets, dict):
            return [{k: column[i] for k, column in columns.items()} for i in range(len(indices))]
        return [tuple(column[i] for column in columns.values()) for i in range(len(indices))]

    def __len__(self):
        return self._length


def _batch_of(dataset, indices):
    getitems = getattr(dataset, "__getitems__", None)
    if not callable(getitems):
        return [dataset[i] for i in indices]
    items = getitems(indices)
    if len(items) != len(indices):
        raise ValueError(f"StackDataset: Nested dataset's output size mismatch. Expected {len(indices)}, got "
                         f"{len(items)}")
    return items


def random_split(dataset, lengths, generator=default_generator):
    """Split ``dataset`` into non-overlapping random ``Subset``\\ s of the given lengths, or of the
    given fractions of its length (the remainder goes round-robin to the first splits).

    >>> import webgrad as wg
    >>> a, b = random_split(range(10), [0.8, 0.2], generator=wg.Generator().manual_seed(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (8, 2, True)
    """
    generator = seeded(generator, "random_split")
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _fraction_lengths(lengths, n)
    if sum(lengths) != n:
        raise ValueError(f"random_split: sum of input lengths {list(lengths)} does not equal the length of the "
                         f"input dataset ({n})")
    order, out, start = permutation(n, generator, "random_split"), [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out


def _fraction_lengths(fractions, n) -> list:
    for i, f in enumerate(fractions):
        if not 0 <= f <= 1:
            raise ValueError(f"random_split: fraction at index {i} is not between 0 and 1 (got {f})")
    lengths = [math.floor(n * f) for f in fractions]
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"random_split: length of split at index {i} is 0; this might result in an empty "
                          f"dataset", stacklevel=3)
    return lengths


__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset", "StackDataset",
           "random_split"]
