"""``DataLoader`` (PyTorch's ``torch.utils.data.DataLoader``): batches from a dataset through a
sampler and a collate function, in the main process.

``num_workers > 0`` is accepted and validated as PyTorch does, but batches are still made in
the main process (a worker process would need its own GPU device and copies of the tensors,
and Pyodide has no processes): the loader says so once with a warning, ``worker_init_fn`` is
not called, ``timeout`` and ``prefetch_factor`` have no effect and ``get_worker_info()`` is None.
``pin_memory``, ``pin_memory_device`` and ``in_order`` are accepted and have no effect (batches
come in order, from memory the backend owns). As in PyTorch, ``timeout`` without workers fails
when iteration starts.

For a ``TensorDataset`` (or ``Subset``\\ s of one) with the default collate, a batch is
gathered with one ``index_select`` per tensor on the tensors' backend, not row by row.
"""
from __future__ import annotations

import itertools
import warnings

from ...dtypes import to_dtype
from ...random import draw_seed64
from ...tensor import Tensor, tensor
from .collate import default_collate, default_convert
from .dataset import IterableDataset, Subset, TensorDataset, seeded
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

_WORKERS_IN_PROCESS = ("DataLoader: num_workers > 0 is accepted, but webgrad makes every batch in the main process "
                       "(no worker processes: worker_init_fn is not called and get_worker_info() returns None)")
_FIXED_AFTER_INIT = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


def get_worker_info():
    """Information about the current loader worker: always None, since webgrad loads batches in the
    main process.

    >>> get_worker_info() is None
    True
    """
    return None


class _InfiniteConstantSampler(Sampler):
    """None forever: the sampler of an iterable-style dataset (its items come from iterating it)."""

    def __iter__(self):
        return itertools.repeat(None)


class DataLoader:
    """Iterate over ``dataset`` in batches, as PyTorch's DataLoader (same arguments and errors).

    ``shuffle=True`` draws a new order each epoch from ``generator`` (a ``webgrad.Generator``, or an
    int seed; None: the default generator); ``sampler``/``batch_sampler`` choose the indices
    yourself; ``batch_size=None`` yields single samples without batching. See the module's
    docstring for ``num_workers`` and the arguments that have no effect.

    >>> import webgrad as wg
    >>> ds = TensorDataset(wg.arange(10).float(), wg.arange(10))
    >>> [y.tolist() for _, y in DataLoader(ds, batch_size=4)]
    [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        self._initialized = False
        self.prefetch_factor = _check_workers(num_workers, timeout, prefetch_factor, persistent_workers,
                                              multiprocessing_context)
        self.dataset, self.num_workers, self.timeout, self.worker_init_fn = dataset, num_workers, timeout, worker_init_fn
        self.pin_memory, self.pin_memory_device, self.in_order = pin_memory, pin_memory_device, in_order
        self.multiprocessing_context, self.persistent_workers = multiprocessing_context, persistent_workers
        self.generator = seeded(generator, "DataLoader")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        shuffle = bool(shuffle)
        _check_sampling(batch_size, shuffle, sampler, batch_sampler, drop_last)
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        if sampler is None:
            sampler = _InfiniteConstantSampler() if self._iterable else (
                RandomSampler(dataset, generator=self.generator) if shuffle else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last, self.sampler, self.batch_sampler = batch_size, drop_last, sampler, batch_sampler
        self.collate_fn = collate_fn or (default_collate if self._auto_collation else default_convert)
        if num_workers > 0:
            warnings.warn(_WORKERS_IN_PROCESS, UserWarning, stacklevel=2)
        self._initialized = True

    def __setattr__(self, name, value):
        if name in _FIXED_AFTER_INIT and getattr(self, "_initialized", False):
            raise ValueError(f"DataLoader: {name} attribute should not be set after DataLoader is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if not self._iterable:
            return len(self._index_sampler)
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        if self.timeout != 0 and self.num_workers == 0:
            raise AssertionError(f"DataLoader: timeout={self.timeout} needs worker processes (num_workers > 0); "
                                 f"loading in the main process requires timeout == 0, as in PyTorch")
        draw_seed64(self.generator, "DataLoader")   # PyTorch's iterators take a base seed for workers
        return self._stream() if self._iterable else (self._fetch(index) for index in self._index_sampler)

    def _fetch(self, index):
        if not self._auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.collate_fn is default_collate:
            rows = _tensor_rows(self.dataset, index)
            if rows is not None:
                return rows
        getitems = getattr(self.dataset, "__getitems__", None)
        return self.collate_fn(getitems(index) if callable(getitems) else [self.dataset[i] for i in index])

    def _stream(self):
        items = iter(self.dataset)
        if not self._auto_collation:
            yield from (self.collate_fn(item) for item in items)
            return
        batch = list(itertools.islice(items, self.batch_size))
        while batch and (len(batch) == self.batch_size or not self.drop_last):
            yield self.collate_fn(batch)
            batch = list(itertools.islice(items, self.batch_size))


def _check_workers(num_workers, timeout, prefetch_factor, persistent_workers, context):
    """PyTorch's checks of the worker options; returns the prefetch factor (2 by default with workers)."""
    if num_workers < 0:
        raise ValueError("DataLoader: num_workers option should be non-negative; use num_workers=0 to disable "
                         "multiprocessing")
    if timeout < 0:
        raise ValueError(f"DataLoader: timeout option should be non-negative, got {timeout}")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("DataLoader: prefetch_factor option could only be specified in multiprocessing; let "
                         "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError(f"DataLoader: prefetch_factor option should be non-negative, got {prefetch_factor}")
    if persistent_workers and num_workers == 0:
        raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
    if context is not None:
        _check_context(context, num_workers)
    return 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor


def _check_context(context, num_workers):
    import multiprocessing        # only here: the standard library's, for its start methods
    if num_workers == 0:
        raise ValueError(f"DataLoader: multiprocessing_context can only be used with multi-process loading "
                         f"(num_workers > 0), but got num_workers={num_workers}")
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(f"DataLoader: multiprocessing_context option should specify a valid start method in "
                             f"{methods!r}, but got multiprocessing_context={context!r}")
    elif not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(f"DataLoader: multiprocessing_context option should be a valid context object or a string "
                        f"specifying the start method, but got multiprocessing_context={context!r}")


def _check_iterable_options(shuffle, sampler, batch_sampler):
    if shuffle not in (False, None):
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                         f"shuffle={shuffle}")
    if sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                         f"sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                         f"batch_sampler={batch_sampler}")


def _check_sampling(batch_size, shuffle, sampler, batch_sampler, drop_last):
    if sampler is not None and shuffle:
        raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
        raise ValueError("DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                         "and drop_last")
    if batch_sampler is None and batch_size is None and drop_last:
        raise ValueError("DataLoader: batch_size=None option disables auto-batching and is mutually exclusive "
                         "with drop_last")


# ---------------------------------------------------------------- TensorDataset batches in one gather


def _tensor_rows(dataset, index):
    """What default_collate would make of ``[dataset[i] for i in index]`` when ``dataset`` is a
    TensorDataset (or plain Subsets of one) that indexes the standard way: one gather per tensor.
    None for any other dataset."""
    index = list(index)
    while type(dataset) is Subset:
        indices = dataset.indices.tolist() if isinstance(dataset.indices, Tensor) else dataset.indices
        index, dataset = [indices[i] for i in index], dataset.dataset
    if not isinstance(dataset, TensorDataset) or type(dataset).__getitem__ is not TensorDataset.__getitem__ \
            or hasattr(dataset, "__getitems__") or not index:
        return None
    n = len(dataset)
    index = [int(i) + n if int(i) < 0 else int(i) for i in index]
    return [_rows(t, index) for t in dataset.tensors]


def _rows(t, index):
    start = index[0]
    if index == list(range(start, start + len(index))):
        return t[start:start + len(index)]
    return t.index_select(0, tensor(index, dtype=to_dtype("long"), backend=t._backend))


__all__ = ["DataLoader", "get_worker_info"]
