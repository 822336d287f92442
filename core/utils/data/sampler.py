"""Samplers (PyTorch's ``torch.utils.data.sampler``): iterables of dataset indices, or of lists of
them (``BatchSampler``). Random ones draw what PyTorch's draw, from a ``webgrad.Generator`` (PyTorch's
numbers, on the host), so a seeded loader gives PyTorch's order on every backend."""
from __future__ import annotations

import itertools
import math

from ...dtypes import float64
from ...host import flatten
from ...random import Generator, draw, draw_seed64, permutation
from .dataset import seeded


def _positive_int(op, name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{op}: {name} should be a positive integer value, but got {name}={value!r}")
    return value


def _boolean(op, name, value, error=ValueError):
    if not isinstance(value, bool):
        raise error(f"{op}: {name} should be a boolean value, but got {name}={value!r}")
    return value


class Sampler:
    """Base class of samplers: subclasses define ``__iter__`` (and usually ``__len__``)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of Sampler should implement __iter__")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``.

    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in random order: a new permutation each pass (``num_samples`` beyond the length
    chains permutations), or ``num_samples`` independent draws with ``replacement``. Without a
    ``generator``, each pass seeds a generator of its own from the default one (``webgrad.manual_seed``)
    at its first index, as PyTorch's does.

    >>> import webgrad as wg
    >>> sorted(RandomSampler(range(5), generator=wg.Generator().manual_seed(0)))
    [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self._num_samples = data_source, num_samples
        self.replacement = _boolean("RandomSampler", "replacement", replacement, TypeError)
        self.generator = seeded(generator, "RandomSampler")
        _positive_int("RandomSampler", "num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, count = len(self.data_source), self.num_samples
        generator = self.generator
        if generator is None:
            generator = Generator().manual_seed(draw_seed64(None, "RandomSampler"))
        if self.replacement:   # PyTorch's chunks of 32, drawn as iterated (minGPT's trainer asks for 1e10 samples)
            for start in range(0, count, 32):
                yield from draw(generator, "RandomSampler", "integers", min(32, count - start), 0, n).tolist()
            return
        for _ in range(count // n):
            yield from permutation(n, generator, "RandomSampler")
        yield from permutation(n, generator, "RandomSampler")[:count % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a new random order each pass.

    >>> sorted(SubsetRandomSampler([5, 7, 9]))
    [5, 7, 9]
    """

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, seeded(generator, "SubsetRandomSampler")

    def __iter__(self):
        for i in permutation(len(self.indices), self.generator, "SubsetRandomSampler"):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``weights`` (non-negative, any total), drawn with probability
    proportional to their weight, with or without ``replacement``.

    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _positive_int("WeightedRandomSampler", "num_samples", num_samples)
        _boolean("WeightedRandomSampler", "replacement", replacement)
        flat, shape, _ = flatten(weights.tolist() if hasattr(weights, "tolist") else list(weights))
        if len(shape) != 1:
            raise ValueError(f"WeightedRandomSampler: weights should be a 1d sequence but given weights have "
                             f"shape {shape}")
        self.weights = [float(w) for w in flat]
        self.num_samples, self.replacement = num_samples, replacement
        self.generator = seeded(generator, "WeightedRandomSampler")

    def __iter__(self):
        w, k = self.weights, self.num_samples
        if not all(0 <= x < math.inf for x in w):
            raise RuntimeError("WeightedRandomSampler: probability tensor contains either `inf`, `nan` or element < 0")
        if not sum(w) > 0:
            raise RuntimeError("WeightedRandomSampler: invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement and k > len(w):
            raise RuntimeError(f"WeightedRandomSampler: cannot sample n_sample > prob_dist.size(-1) samples without "
                               f"replacement ({k} > {len(w)})")
        from ...ops.random import multinomial
        from ...tensor import tensor
        weights = tensor(w, dtype=float64, backend="cpu")     # PyTorch's: a double tensor, multinomial
        return iter(multinomial(weights, k, self.replacement, generator=self.generator).tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; ``drop_last`` drops a short final list.

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        self.batch_size = _positive_int("BatchSampler", "batch_size", batch_size)
        self.drop_last = _boolean("BatchSampler", "drop_last", drop_last)
        self.sampler = sampler

    def __iter__(self):
        indices = iter(self.sampler)
        batch = list(itertools.islice(indices, self.batch_size))
        while batch and (len(batch) == self.batch_size or not self.drop_last):
            yield batch
            batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]
