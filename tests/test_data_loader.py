"""DataLoader against PyTorch's: the same batches for every deterministic configuration, the same
errors for contradictory arguments, unknown keywords refused, seeded shuffling that repeats on
each backend, iterable datasets, the in-process answer to num_workers, and the TensorDataset gather
giving the rows the item-by-item road gives."""
import warnings

import pytest
import torch
import torch.utils.data as tud

import webgrad as wg
import webgrad.utils.data as wud
from backends_under_test import FLOAT64_BACKENDS
from test_data import plain


class Items:
    """A map-style dataset in plain Python: item i is (i, i / 2, 'i')."""

    def __init__(self, n=10):
        self.n = n

    def __getitem__(self, i):
        return i, i / 2, str(i)

    def __len__(self):
        return self.n


def tensors(m, n=10):
    return m.utils.data.TensorDataset(m.arange(2 * n).reshape(n, 2).float(), m.arange(n))


def run(m, make, **kwargs):
    """(len, list of batches) of a DataLoader of library ``m`` over ``make(m)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # PyTorch's: pin_memory without an accelerator
        loader = m.utils.data.DataLoader(make(m), **kwargs)
        return len(loader), list(loader)


def sampler_kwargs(m, name):
    data = m.utils.data
    return {"sampler": dict(sampler=[3, 1, 4, 1, 5], batch_size=2),
            "sequential": dict(sampler=data.SequentialSampler(range(7)), batch_size=3, drop_last=True),
            "batch_sampler": dict(batch_sampler=[[1, 2], [0], [9, 8, 7]]),
            "BatchSampler": dict(batch_sampler=data.BatchSampler(range(10), 4, False)),
            "no batching": dict(batch_size=None),
            "no batching, sampler": dict(batch_size=None, sampler=[2, 0])}[name]


CONFIGS = [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=10),
           dict(batch_size=20, drop_last=True), dict(batch_size=4, shuffle=False),
           dict(batch_size=2, collate_fn=lambda b: len(b)), dict(batch_size=2, pin_memory=True),
           dict(batch_size=2, in_order=False, pin_memory_device="cuda", worker_init_fn=print)]
SAMPLERS = ["sampler", "sequential", "batch_sampler", "BatchSampler", "no batching", "no batching, sampler"]


@pytest.mark.parametrize("make", [lambda m: Items(), tensors], ids=["items", "tensors"])
@pytest.mark.parametrize("kwargs", CONFIGS + SAMPLERS, ids=lambda k: k if isinstance(k, str) else str(sorted(k)))
def test_batches_as_pytorch(backend, make, kwargs):
    pick = (lambda m: sampler_kwargs(m, kwargs)) if isinstance(kwargs, str) else (lambda m: kwargs)
    n, got = run(wg, make, **pick(wg))
    n_torch, expected = run(torch, make, **pick(torch))
    assert n == n_torch and plain(got) == plain(expected, float64=backend in FLOAT64_BACKENDS)


class Stream(tud.IterableDataset, wud.IterableDataset):
    """An iterable dataset both libraries accept (it subclasses both base classes)."""

    def __init__(self, n=7, sized=True):
        self.n, self.sized = n, sized

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.sized:
            raise TypeError("Stream has no length")
        return self.n


@pytest.mark.parametrize("kwargs", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=None), dict(batch_size=2, collate_fn=list)])
def test_iterable_dataset_as_pytorch(backend, kwargs):
    got = wud.DataLoader(Stream(), **kwargs)
    expected = tud.DataLoader(Stream(), **kwargs)
    assert len(got) == len(expected) and plain(list(got)) == plain(list(expected))
    assert plain(list(got)) == plain(list(expected))             # a second epoch starts over
    with pytest.raises(TypeError):
        len(wud.DataLoader(Stream(sized=False), batch_size=2))
    assert plain(list(wud.DataLoader(Stream(sized=False), batch_size=4))) == \
        plain(list(tud.DataLoader(Stream(sized=False), batch_size=4)))


ERRORS = [dict(sampler=[1, 2], shuffle=True), dict(batch_sampler=[[1, 2]], batch_size=2),
          dict(batch_sampler=[[1, 2]], shuffle=True), dict(batch_sampler=[[1, 2]], sampler=[1]),
          dict(batch_sampler=[[1, 2]], drop_last=True), dict(batch_size=None, drop_last=True),
          dict(num_workers=-1), dict(prefetch_factor=2), dict(num_workers=1, prefetch_factor=-1),
          dict(persistent_workers=True), dict(multiprocessing_context="spawn"),
          dict(num_workers=1, multiprocessing_context="no-such-method"), dict(num_workers=1, multiprocessing_context=3),
          dict(timeout=-1), dict(batch_size=0), dict(batch_size=2.0), dict(batch_size=-1), dict(drop_last=1),
          dict(bogus=1), dict(shuffle=True, generator="seed")]
ITERABLE_ERRORS = [dict(shuffle=True), dict(sampler=[1]), dict(batch_sampler=[[1]])]


@pytest.mark.parametrize("kwargs", ERRORS, ids=lambda k: str(sorted(k)))
def test_contradictory_arguments_raise_as_pytorch(kwargs):
    with pytest.raises(Exception) as expected:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            list(tud.DataLoader(Items(), **kwargs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(expected.type, match="DataLoader|BatchSampler|bogus|generator"):
            wud.DataLoader(Items(), **kwargs)


@pytest.mark.parametrize("kwargs", ITERABLE_ERRORS, ids=lambda k: str(sorted(k)))
def test_iterable_dataset_refuses_samplers_as_pytorch(kwargs):
    with pytest.raises(ValueError, match="IterableDataset") as expected:
        tud.DataLoader(Stream(), **kwargs)
    with pytest.raises(expected.type, match="DataLoader with IterableDataset"):
        wud.DataLoader(Stream(), **kwargs)


def test_timeout_without_workers_fails_on_iteration_as_pytorch():
    with pytest.raises(AssertionError, match="timeout"):
        iter(tud.DataLoader(Items(), timeout=3))
    loader = wud.DataLoader(Items(), timeout=3)
    with pytest.raises(AssertionError, match="timeout"):
        iter(loader)


def test_unknown_keywords_are_named():
    with pytest.raises(TypeError, match="shuffel"):
        wud.DataLoader(Items(), shuffel=True)


def test_attributes_fixed_after_init_as_pytorch():
    loader = wud.DataLoader(Items(), batch_size=2)
    for name in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset", "persistent_workers"):
        with pytest.raises(ValueError, match=name):
            setattr(loader, name, None)
    loader.num_workers = 0                       # others may change, as in PyTorch
    assert isinstance(loader.sampler, wud.SequentialSampler) and isinstance(loader.batch_sampler, wud.BatchSampler)
    assert loader.generator is None and loader.prefetch_factor is None and loader.collate_fn is wud.default_collate
    assert wud.DataLoader(Items(), batch_size=None).collate_fn is wud.default_convert
    assert isinstance(wud.DataLoader(Items(), shuffle=True).sampler, wud.RandomSampler)


def labels(loader):
    return [y.tolist() for _, y in loader]


def test_shuffle_repeats_with_a_seed_on_each_backend(backend):
    g = wg.Generator()
    a = labels(wud.DataLoader(tensors(wg), batch_size=3, shuffle=True, generator=g.manual_seed(123)))
    b = labels(wud.DataLoader(tensors(wg), batch_size=3, shuffle=True, generator=g.manual_seed(123)))
    c = labels(wud.DataLoader(tensors(wg), batch_size=3, shuffle=True, generator=g.manual_seed(7)))
    assert a == b and a != c and sorted(sum(a, [])) == list(range(10))
    assert labels(wud.DataLoader(tensors(wg), batch_size=3, shuffle=True, generator=123)) == a   # an int seed
    loader = wud.DataLoader(tensors(wg), batch_size=10, shuffle=True, generator=g.manual_seed(1))
    assert labels(loader) != labels(loader)                        # a new order each epoch
    wg.manual_seed(5)
    d = labels(wud.DataLoader(tensors(wg), batch_size=3, shuffle=True))
    wg.manual_seed(5)
    assert labels(wud.DataLoader(tensors(wg), batch_size=3, shuffle=True)) == d


def test_gathered_rows_match_items(backend):
    class ItemByItem(wud.TensorDataset):
        def __getitem__(self, i):                   # overriding __getitem__ turns the gather off
            return tuple(t[i] for t in self.tensors)

    base = tensors(wg)
    order = [7, 2, 2, 9, 0, 5, 6, 1]
    fast = list(wud.DataLoader(base, batch_size=3, sampler=order))
    slow = list(wud.DataLoader(ItemByItem(*base.tensors), batch_size=3, sampler=order))
    assert plain(fast) == plain(slow)
    assert [type(b) for b in fast] == [list] * 3          # default_collate makes lists of tuples' fields
    sub = wud.Subset(wud.Subset(base, [9, 8, 7, 6, 5]), [4, 0, 2])
    assert plain(list(wud.DataLoader(sub, batch_size=2))) == \
        plain(list(wud.DataLoader([sub[i] for i in range(3)], batch_size=2)))
    tail = list(wud.DataLoader(base, batch_size=2, sampler=[-1, -2]))
    assert tail[0][1].tolist() == [9, 8]


def test_num_workers_run_in_process_and_say_so_once(backend):
    calls = []
    with pytest.warns(UserWarning, match="main process") as record:
        loader = wud.DataLoader(tensors(wg), batch_size=4, num_workers=2, worker_init_fn=calls.append,
                                persistent_workers=True, multiprocessing_context="spawn", prefetch_factor=3)
    assert len(record) == 1 and loader.prefetch_factor == 3
    assert labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and labels(loader) == labels(loader)
    assert calls == [] and wud.get_worker_info() is None
    with pytest.warns(UserWarning):
        assert wud.DataLoader(Items(), num_workers=1).prefetch_factor == 2     # PyTorch's default with workers


def test_training_loop_over_a_loader(backend):
    """A PyTorch-style epoch loop: split, shuffle, batches, a model; the loss falls."""
    wg.manual_seed(0)
    x = wg.randn(64, 3)
    y = x @ wg.tensor([[1.0], [-2.0], [0.5]])
    train, _ = wud.random_split(wud.TensorDataset(x, y), [0.75, 0.25], generator=wg.Generator().manual_seed(0))
    loader = wud.DataLoader(train, batch_size=8, shuffle=True, generator=wg.Generator().manual_seed(1))
    model = wg.nn.Linear(3, 1)
    opt = wg.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(5):
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = wg.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item()
        losses.append(total)
    assert losses[-1] < 0.1 * losses[0]
