"""DistributedDataParallel's gradient reducer: parameters in buckets, each bucket all-reduced
(averaged over the ranks) as soon as every gradient in it is ready, while backward goes on.

Buckets hold parameters in the reverse of ``module.parameters()`` order, the order a backward
pass usually finishes their gradients in (output layer first), each up to a byte cap (1 MiB for
the first by default, so communication starts early; 25 MiB after), one dtype and backend per
bucket. Each parameter gets a post-accumulate-grad hook: when a backward pass has accumulated its
gradient (``Tensor.register_post_accumulate_grad_hook``, fired in the middle of the pass), it is
marked ready; a bucket whose parameters are all ready is flattened into one fresh array and its
all-reduce starts without blocking (buckets start in order, so every rank starts the same
collectives in the same order). When the last bucket has started, the reducer waits for them all
and writes each averaged gradient into its parameter's ``.grad``.
"""
from __future__ import annotations

import time
import weakref

from ... import kernel_names as K
from ...backprop import leaf_edges
from ...distributed.buffers import host_flat, value_like, write
from ...distributed.collectives import all_reduce, all_reduce_owned
from ...distributed.mpi import ReduceOp
from ...engine import no_grad, run_kernel
from ...tensor import Tensor, tensor

MIB = 1024 * 1024
DEFAULT_FIRST_BUCKET_BYTES = 1 * MIB   # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES
DEFAULT_BUCKET_CAP_MB = 25

UNFINISHED = ("Expected to have finished reduction in the prior iteration before starting a new one. This error "
              "indicates that your module has parameters that were not used in producing loss. You can enable "
              "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
              "`webgrad.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
              "participate in calculating loss. Parameters that did not receive a gradient on rank {rank}: {names}")


def bucket_assignment(params: list, caps: list) -> list:
    """Lists of parameter indices, one per bucket: ``params`` in reverse order, a bucket closed
    once its bytes reach its cap (``caps[i]``, the last repeating) or the dtype or backend changes.

    >>> import webgrad as wg
    >>> ps = [wg.zeros(256), wg.zeros(256), wg.zeros(4)]     # 1024, 1024 and 16 bytes
    >>> bucket_assignment(ps, [1000, 2048])
    [[2, 1], [0]]
    """
    buckets, size, key = [], 0, None
    for i in reversed(range(len(params))):
        p = params[i]
        k = (p._dtype, p._backend)
        cap = caps[min(len(buckets) - 1, len(caps) - 1)] if buckets else caps[0]
        if not buckets or k != key or size >= cap:
            buckets.append([])
            size, key = 0, k
        buckets[-1].append(i)
        size += p.numel() * p._dtype.itemsize
    return buckets


def reached_leaves(outputs) -> set:
    """The ids of the leaf tensors that the autograd graph of ``outputs`` (tensors, nested in
    lists, tuples and dicts) reaches: the parameters a backward from them can give a gradient."""
    roots = list(_tensors(outputs))
    ids = {id(t) for t in roots if t.grad_fn is None}
    ids.update(id(leaf) for _, leaf in leaf_edges([t.grad_fn for t in roots if t.grad_fn is not None]))
    return ids


def _tensors(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors(o)


class Reducer:
    """Averages the gradients of ``params`` (named ``names``) over the ranks during backward."""

    def __init__(self, params: list, names: list, caps: list, world_size: int, rank: int):
        self.params, self.names, self.world_size, self.rank = params, names, world_size, rank
        self.buckets = bucket_assignment(params, caps)
        self.slot = {}   # parameter index -> (bucket, position in it)
        for b, indices in enumerate(self.buckets):
            for pos, i in enumerate(indices):
                self.slot[i] = (b, pos)
        self.expect = False          # the coming backward reduces (set by prepare_for_backward)
        self.find_unused = False
        # what the benchmark reads: reductions, bytes all-reduced; seconds spent flattening and starting
        # buckets (launch), waiting for their results (wait), writing .grad (write); seconds the buckets'
        # all-reduces were in flight (in_flight), and how much of that passed while backward still
        # computed gradients, before the last bucket was ready (hidden)
        self.stats = {"steps": 0, "buckets": len(self.buckets), "bytes": 0, "launch_s": 0.0, "wait_s": 0.0,
                      "write_s": 0.0, "in_flight_s": 0.0, "hidden_s": 0.0}
        self._reset()
        me = weakref.ref(self)   # the hooks must not keep the reducer (and so the model) alive
        self.handles = [p.register_post_accumulate_grad_hook(_hook(me, i)) for i, p in enumerate(params)]

    def _reset(self):
        self.grads = [[None] * len(b) for b in self.buckets]
        self.ready = [0] * len(self.buckets)
        self.works = [None] * len(self.buckets)
        self.ready_at = 0.0                        # time.perf_counter() when the last bucket was ready
        self.started = [0.0] * len(self.buckets)   # ... and at each bucket's all-reduce start
        self.marked = set()
        self.next_bucket = 0
        self.used = None

    # ------------------------------------------------------------ per iteration
    def prepare_for_backward(self, outputs, find_unused: bool) -> None:
        """Expect a backward pass after this forward; with ``find_unused``, mark now the parameters
        its graph does not reach (their gradients count as zeros)."""
        if self.marked:
            missing = [self.names[i] for i in range(len(self.params)) if i not in self.marked]
            self._reset()
            raise RuntimeError(UNFINISHED.format(rank=self.rank, names=", ".join(missing)))
        self.expect, self.find_unused = True, find_unused
        if find_unused:
            reached = reached_leaves(outputs)
            self.used = [int(id(p) in reached) for p in self.params]
            for i, used in enumerate(self.used):
                if not used:
                    self.mark_ready(i, None)

    def skip_backward(self) -> None:
        """The coming backward does not reduce (a forward under ``no_sync``)."""
        self.expect = False

    def mark_ready(self, i: int, grad) -> None:
        if i in self.marked:
            raise RuntimeError(f"DistributedDataParallel: parameter {self.names[i]} was marked ready twice in one "
                               f"iteration (a second backward through the same forward, or a parameter used in "
                               f"more than one DDP module); reducing it twice is not supported")
        self.marked.add(i)
        b, pos = self.slot[i]
        self.grads[b][pos] = grad
        self.ready[b] += 1
        while self.next_bucket < len(self.buckets) and self.ready[self.next_bucket] == len(self.buckets[self.next_bucket]):
            self._launch(self.next_bucket)
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets):
            self._finalize()

    # ------------------------------------------------------------ communication
    def _launch(self, b: int) -> None:
        """Flatten bucket ``b``'s gradients (zeros for the unused) into one fresh host array and
        start averaging it over the ranks, without blocking."""
        start = self.ready_at = time.perf_counter()
        with no_grad():
            parts = [run_kernel(K.RESHAPE, g if g is not None else _zeros(self.params[i]),
                                shape=(self.params[i].numel(),)) for i, g in zip(self.buckets[b], self.grads[b])]
            flat = host_flat(run_kernel(K.CONCAT, *parts, axis=0))
            self.started[b] = time.perf_counter()
            self.works[b] = all_reduce_owned(flat, ReduceOp.AVG, async_op=True)
        self.stats["bytes"] += flat.numel() * flat._dtype.itemsize
        self.stats["launch_s"] += time.perf_counter() - start

    def _finalize(self) -> None:
        """Wait for every bucket, then write the averaged gradients into ``.grad``."""
        start = time.perf_counter()
        reduced = [work.result()[0] for work in self.works]
        globally_used = self._globally_used()
        waited = time.perf_counter()
        for indices, flat in zip(self.buckets, reduced):
            flat = value_like(flat, self.params[indices[0]], shape=(flat.numel(),))   # the bucket's dtype, backend
            offset = 0
            for i in indices:
                p = self.params[i]
                if globally_used is None or globally_used[i]:
                    self._set_grad(p, value_like(_span(flat, offset, p.numel()), p))
                offset += p.numel()
        self.stats["wait_s"] += waited - start
        self.stats["write_s"] += time.perf_counter() - waited
        for work, started in zip(self.works, self.started):
            self.stats["in_flight_s"] += work.completed_at - started
            self.stats["hidden_s"] += max(0.0, min(work.completed_at, self.ready_at) - started)
        self.stats["steps"] += 1
        self.expect = False
        self._reset()

    def _globally_used(self):
        """With ``find_unused``: per parameter, whether any rank used it (the others' gradients stay
        untouched, as in PyTorch); else None."""
        if self.used is None:
            return None
        flags = tensor(self.used, backend="cpu")
        all_reduce(flags, ReduceOp.MAX)
        return [bool(v) for v in flags.tolist()]

    @staticmethod
    def _set_grad(p, value) -> None:
        if p.grad is None:
            p.grad = value
        else:
            write(p.grad, value, "DistributedDataParallel")


def _span(flat, offset: int, n: int):
    return run_kernel(K.SLICE, flat, begin=(offset,), end=(offset + n,), step=(1,))


def _zeros(p):
    return run_kernel(K.FILL, backend=p._backend, shape=tuple(p.shape), value=0, dtype=p._dtype)


def _hook(reducer_ref, i: int):
    def ready(p):
        reducer = reducer_ref()
        if reducer is not None and reducer.expect:
            reducer.mark_ready(i, p.grad)
    return ready


__all__ = ["Reducer", "bucket_assignment", "reached_leaves", "DEFAULT_FIRST_BUCKET_BYTES", "DEFAULT_BUCKET_CAP_MB"]
