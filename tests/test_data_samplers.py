"""Samplers against PyTorch's: the same indices where they are deterministic, the same errors,
and seeded statistical checks where they are random (the draws happen on the host, from a
webgrad.Generator)."""
import itertools

import numpy as np
import pytest
import torch.utils.data as tud

import webgrad as wg
import webgrad.utils.data as wud
from test_random_ops import assert_fits


@pytest.mark.parametrize("make", [
    lambda m: m.SequentialSampler(range(7)),
    lambda m: m.BatchSampler(range(10), 3, False), lambda m: m.BatchSampler(range(10), 3, True),
    lambda m: m.BatchSampler(m.SequentialSampler(range(4)), 4, True), lambda m: m.BatchSampler([], 2, False),
])
def test_deterministic_samplers_as_pytorch(make):
    got, expected = make(wud), make(tud)
    assert list(got) == list(expected) and len(got) == len(expected)


@pytest.mark.parametrize("make", [
    lambda m: m.RandomSampler(range(3), num_samples=0), lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=1.5), lambda m: m.WeightedRandomSampler([1, 2], 0),
    lambda m: m.WeightedRandomSampler([1, 2], True), lambda m: m.WeightedRandomSampler([1, 2], 1, replacement=1),
    lambda m: m.WeightedRandomSampler([[1, 2]], 1), lambda m: list(m.WeightedRandomSampler([1, -2], 1)),
    lambda m: list(m.WeightedRandomSampler([1, float("nan")], 1)), lambda m: list(m.WeightedRandomSampler([0, 0], 1)),
    lambda m: list(m.WeightedRandomSampler([1, 2], 3, replacement=False)), lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), 2, 0), lambda m: m.DistributedSampler(range(10)),
    lambda m: m.DistributedSampler(range(10), num_replicas=2), lambda m: m.DistributedSampler(range(10), 2, 2),
    lambda m: m.DistributedSampler(range(10), 2, -1),
])
def test_sampler_errors_as_pytorch(make):
    with pytest.raises(Exception) as expected:
        make(tud)
    with pytest.raises(expected.type):
        make(wud)


def test_random_sampler():
    g = wg.Generator()
    first = list(wud.RandomSampler(range(10), generator=g.manual_seed(0)))
    assert sorted(first) == list(range(10))
    sampler = wud.RandomSampler(range(10), generator=g.manual_seed(0))
    assert list(sampler) == first and list(sampler) != first           # a new order each pass
    wg.manual_seed(1)
    default = list(wud.RandomSampler(range(10)))                       # no generator: the default one
    wg.manual_seed(1)
    assert list(wud.RandomSampler(range(10))) == default
    chained = list(wud.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(chained) == 10 and sorted(chained[:4]) == sorted(chained[4:8]) == [0, 1, 2, 3]
    assert set(chained[8:]) <= {0, 1, 2, 3} and len(set(chained[8:])) == 2
    drawn = list(wud.RandomSampler(range(5), replacement=True, num_samples=20000, generator=g))
    assert len(drawn) == 20000 and len(wud.RandomSampler(range(5), True, 7)) == 7
    assert_fits(drawn, {i: 0.2 for i in range(5)}, "RandomSampler with replacement")
    firsts = [next(iter(sampler)) for _ in range(5000)]
    assert_fits(firsts, {i: 0.1 for i in range(10)}, "RandomSampler's first index")


def test_subset_random_sampler():
    g = wg.Generator().manual_seed(2)
    indices = [10, 20, 30, 40]
    sampler = wud.SubsetRandomSampler(indices, generator=g)
    orders = [tuple(sampler) for _ in range(2400)]
    assert len(sampler) == 4
    assert_fits(orders, {p: 1 / 24 for p in itertools.permutations(indices)}, "SubsetRandomSampler")


@pytest.mark.parametrize("kind", ["list", "tensor", "numpy"])
def test_weighted_random_sampler(backend, kind):
    w = [0.5, 0.0, 1.5, 2.0]
    weights = {"list": w, "tensor": wg.tensor(w), "numpy": np.array(w)}[kind]
    g = wg.Generator().manual_seed(3)
    drawn = list(wud.WeightedRandomSampler(weights, 20000, generator=g))
    assert_fits(drawn, {i: x / 4 for i, x in enumerate(w)}, "WeightedRandomSampler")
    s = sum(w)
    pairs = {(i, j): w[i] / s * w[j] / (s - w[i]) for i in range(4) for j in range(4) if i != j and w[i] and w[j]}
    sampler = wud.WeightedRandomSampler(weights, 2, replacement=False, generator=g)
    assert_fits([tuple(sampler) for _ in range(6000)], pairs, "WeightedRandomSampler without replacement")
    everything = list(wud.WeightedRandomSampler(weights, 4, replacement=False, generator=g))
    assert sorted(everything) == [0, 1, 2, 3] and everything[-1] == 1          # the zero weight comes last
    assert len(sampler) == 2 and sampler.weights == w


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 4, False),
                                                   (11, 4, True)])
def test_distributed_sampler_as_pytorch(n, replicas, drop_last):
    for rank in range(replicas):
        got = wud.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        expected = tud.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(got) == list(expected) and len(got) == len(expected)
        assert (got.num_samples, got.total_size) == (expected.num_samples, expected.total_size)


def test_distributed_sampler_shuffles_alike_on_every_rank():
    def shares(epoch, seed=0):
        samplers = [wud.DistributedSampler(range(12), 3, r, seed=seed) for r in range(3)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]
    first = shares(0)
    assert sorted(sum(first, [])) == list(range(12))          # the ranks split one order between them
    assert shares(0) == first and shares(1) != first and shares(0, seed=5) != first
    assert sum(zip(*first), ()) != tuple(range(12))          # shuffled


def test_samplers_drive_a_loader(backend):
    ds = wud.TensorDataset(wg.arange(8))
    loader = wud.DataLoader(ds, batch_size=3, sampler=wud.DistributedSampler(ds, 2, 1, shuffle=False))
    assert [b[0].tolist() for b in loader] == [[1, 3, 5], [7]]
    loader = wud.DataLoader(ds, batch_sampler=wud.BatchSampler(wud.SubsetRandomSampler([0, 2, 4]), 2, False))
    batches = [b[0].tolist() for b in loader]
    assert sorted(sum(batches, [])) == [0, 2, 4] and [len(b) for b in batches] == [2, 1]
    loader = wud.DataLoader(ds, batch_size=4, sampler=wud.WeightedRandomSampler([0, 0, 1, 0, 0, 0, 0, 0], 8))
    assert [b[0].tolist() for b in loader] == [[2] * 4] * 2


def test_random_sampler_with_replacement_draws_as_iterated():
    """minGPT's Trainer samples ``num_samples=int(1e10)`` with replacement and takes a few batches:
    the indices must come one at a time, not as a list made up front."""
    g = wg.Generator().manual_seed(4)
    sampler = wud.RandomSampler(range(6), replacement=True, num_samples=int(1e10), generator=g)
    assert len(sampler) == 10 ** 10
    loader = wud.DataLoader(list(range(6)), batch_size=4, sampler=sampler)
    batches = list(itertools.islice(loader, 3))
    assert [b.shape for b in batches] == [(4,)] * 3
    assert all(0 <= i < 6 for b in batches for i in b.tolist())
