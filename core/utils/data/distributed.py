"""``DistributedSampler`` (PyTorch's ``torch.utils.data.distributed``): each of ``num_replicas``
processes reads its own share of a dataset, padded (or trimmed) to equal shares; the number of
replicas and this one's rank come from the default process group unless given."""
from __future__ import annotations

import math

from ...distributed.group import get_rank, get_world_size
from ...random import Generator, permutation
from .sampler import Sampler


class DistributedSampler(Sampler):
    """This replica's indices: every ``num_replicas``-th index from ``rank`` of the dataset's order,
    which is shuffled by ``seed + epoch`` when ``shuffle`` (call ``set_epoch`` each epoch). Without
    ``drop_last`` the order is padded by wrapping round so every replica gets as many indices.
    ``num_replicas`` and ``rank`` default to the default process group's world size and rank
    (``webgrad.distributed.init_process_group``; a ValueError says so when there is none).

    >>> list(DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False))
    [1, 4, 7, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        num_replicas = get_world_size() if num_replicas is None else num_replicas
        rank = get_rank() if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise ValueError(f"DistributedSampler: invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank, self.epoch = dataset, num_replicas, rank, 0
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        indices = permutation(n, Generator().manual_seed(self.seed + self.epoch), "DistributedSampler") \
            if self.shuffle else list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        elif indices:
            indices = (indices * math.ceil(self.total_size / n))[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, so a shuffling sampler gives a new order (the same on every replica)."""
        self.epoch = epoch


__all__ = ["DistributedSampler"]
