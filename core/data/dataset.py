"""Datasets: anything with ``__getitem__`` and ``__len__``; ``TensorDataset`` pairs tensors by row."""
from __future__ import annotations


class Dataset:
    """Base class of map-style datasets: subclasses define ``__getitem__`` and ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class TensorDataset(Dataset):
    """Rows of tensors that share their first dimension: item ``i`` is ``(t[i] for t in tensors)``.

    >>> import webgrad as wg
    >>> ds = TensorDataset(wg.arange(6).reshape(3, 2), wg.tensor([0, 1, 0]))
    >>> len(ds), [t.tolist() for t in ds[1]]
    (3, [[2, 3], 1])
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset: give at least one tensor")
        n = tensors[0].shape[0] if tensors[0].ndim else None
        if any(t.ndim == 0 or t.shape[0] != n for t in tensors):
            raise ValueError(f"TensorDataset: size mismatch between tensors (first dimensions "
                             f"{[t.shape[0] if t.ndim else None for t in tensors]})")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The items of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random ``Subset``\\ s of the given lengths (or fractions).

    >>> import webgrad as wg
    >>> a, b = random_split(TensorDataset(wg.arange(10)), [0.8, 0.2], generator=0)
    >>> len(a), len(b)
    (8, 2)
    """
    from .loader import permutation
    n = len(dataset)
    if all(isinstance(x, float) for x in lengths):
        sizes = [int(n * f) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
    else:
        sizes = list(lengths)
    if sum(sizes) != n:
        raise ValueError(f"random_split: lengths {list(lengths)} do not add up to the dataset's length {n}")
    order, out, start = permutation(n, generator), [], 0
    for s in sizes:
        out.append(Subset(dataset, order[start:start + s]))
        start += s
    return out


__all__ = ["Dataset", "TensorDataset", "Subset", "random_split"]
