"""``Work``, the handle of a collective in flight, and the thread that keeps collectives moving.

A collective starts as a non-blocking MPI call (``Iallreduce``, ``Ibcast``, ...) and is done when
its MPI requests test complete. MPI moves a non-blocking collective along only inside MPI calls, so
while the user's thread computes (the rest of a backward pass, say) a ``Progress`` thread tests the
requests of the collectives started with ``async_op=True`` every few tens of microseconds: that is
what lets DistributedDataParallel's all-reduces overlap the backward pass. Results are written into
the user's tensors only in the user's thread, by ``wait()`` or ``is_completed()``.
"""
from __future__ import annotations

import threading
import time
from datetime import timedelta

POLL_S = 50e-6          # how often the progress thread tests the collectives in flight
SPIN_S = 200e-6         # how long a waiting thread polls without pausing
MAX_PAUSE_S = 200e-6    # the longest pause between two polls of a waiting thread after that


class Work:
    """A collective started with ``async_op=True`` (PyTorch's ``Work``): ``wait()`` blocks until it
    is done and its results are in the tensors; ``is_completed()`` asks without blocking (and, when
    it is done, writes the results too).

    >>> import webgrad as wg, webgrad.distributed as dist
    >>> dist.init_process_group("mpi")          # a world of one when not started by a launcher
    >>> t = wg.ones(3)
    >>> work = dist.all_reduce(t, async_op=True)
    >>> work.wait(), t.tolist()
    (True, [1.0, 1.0, 1.0])
    >>> dist.destroy_process_group()
    """

    def __init__(self, group, op: str, requests: list, finish=None):
        """``finish()`` writes the results into the tensors and returns them, in the waiting thread."""
        self._group, self._op, self._requests, self._finish = group, op, requests, finish
        self._statuses = [group.MPI.Status() for _ in requests]
        self._complete = not requests
        # when a test first found it complete (time.perf_counter(); the progress thread tests every few tens of µs)
        self.completed_at = time.perf_counter() if not requests else None
        self._finished, self._result = False, []

    def _test(self) -> bool:
        """Whether the MPI requests are complete (tests them; any thread)."""
        return self._complete or self._group.test(self)

    def is_completed(self) -> bool:
        """Whether the collective is done (its results are then in the tensors)."""
        if not self._test():
            return False
        self._finish_once()
        return True

    def is_success(self) -> bool:
        """Whether the collective is done without error (an error raises instead)."""
        return self.is_completed()

    def wait(self, timeout=None) -> bool:
        """Block until the collective is done and its results are in the tensors; returns True.
        Raises RuntimeError after ``timeout`` (a ``timedelta``; None or 0: the process group's)."""
        if not self._test():
            self._group.await_work(self, _seconds(timeout))
        self._finish_once()
        return True

    def result(self) -> list:
        """The collective's output tensors, once it is done (waits)."""
        self.wait()
        return self._result

    def source_rank(self) -> int:
        """The rank a received message came from (``irecv`` with ``src=None``), once done."""
        self.wait()
        return self._statuses[0].Get_source()

    def _finish_once(self):
        if not self._finished:
            self._finished = True
            if self._finish is not None:
                self._result = self._finish()

    def __repr__(self):
        return f"<Work {self._op} {'completed' if self._complete else 'in flight'}>"


def _seconds(timeout) -> float | None:
    if timeout is None:
        return None
    if not isinstance(timeout, timedelta):
        raise TypeError(f"wait: timeout must be a datetime.timedelta, got {type(timeout).__name__}")
    return timeout.total_seconds() or None


def wait_until(done, deadline: float) -> bool:
    """Poll ``done()`` until it is true (True) or ``deadline`` (a ``time.monotonic()`` value)
    passes (False): for ``SPIN_S`` without pausing (the other ranks' replies come within
    microseconds when they run; a yield would hand the core to whatever else runs), then pausing up
    to ``MAX_PAUSE_S`` between polls (when the ranks outnumber the cores, a rank that polls without
    pause takes the core its peers need)."""
    spin_until = time.monotonic() + SPIN_S
    pause = 0.0
    while not done():
        now = time.monotonic()
        if now > deadline:
            return False
        if now > spin_until:
            pause = min(MAX_PAUSE_S, pause * 2 or 10e-6)
            time.sleep(pause)
    return True


class Progress(threading.Thread):
    """Tests the requests of the collectives in flight every ``POLL_S`` seconds, so that MPI moves
    them along while the user's thread computes; sleeps on a condition when there are none."""

    def __init__(self):
        super().__init__(name="webgrad.distributed progress", daemon=True)
        self._works, self._wake, self._stopped = [], threading.Condition(), False

    def watch(self, work: Work) -> None:
        with self._wake:
            self._works.append(work)
            self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()
        self.join()

    def run(self):
        while True:
            with self._wake:
                while not self._works and not self._stopped:
                    self._wake.wait()
                if self._stopped:
                    return
                self._works = [w for w in self._works if not _settled(w)]
            time.sleep(POLL_S)


def _settled(work: Work) -> bool:
    """Whether the progress thread is done with ``work``: complete, or its group failed."""
    try:
        return work._test()
    except RuntimeError:   # the user's thread sees the same error when it waits
        return True


__all__ = ["Work", "Progress", "wait_until"]
