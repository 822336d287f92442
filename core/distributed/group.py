"""The default process group: starting and ending it (``init_process_group``,
``destroy_process_group``), asking about it (``get_rank``, ``get_world_size``, ...), and the
``ProcessGroup`` object the collectives run on: MPI's world communicator (a duplicate of it, so
webgrad's messages never meet the user's own mpi4py traffic), a lock that serialises the calls
into MPI, the timeout, and the progress thread.

A rank that stops on an uncaught exception aborts every rank (``MPI_Abort``, through
``sys.excepthook``), and a collective that waits longer than the timeout raises: no rank waits
forever for one that is gone.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from datetime import timedelta

from .mpi import mpi, mpi4py_installed
from .work import Progress, Work, wait_until

default_pg_timeout = timedelta(minutes=30)   # PyTorch's default
_BACKENDS = ("mpi", "gloo", "nccl")           # gloo and nccl run as mpi (see init_process_group)


class ProcessGroup:
    """The ranks of one job and the communicator they talk through. ``rank()`` and ``size()`` as
    PyTorch's; the collectives (``webgrad.distributed.all_reduce``, ...) take it as ``group``."""

    def __init__(self, MPI, comm, timeout: timedelta):
        self.MPI, self.comm, self.timeout = MPI, comm, timeout
        self._rank, self._size = comm.Get_rank(), comm.Get_size()
        self._lock = threading.Lock()   # one thread in MPI at a time (MPI_THREAD_SERIALIZED suffices)
        self._broken = None             # why the group can no longer be used, once a collective timed out
        self._progress = Progress()
        self._progress.start()

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def start(self, op: str, begin, finish=None, watch: bool = False) -> Work:
        """Start a collective: ``begin()`` makes its non-blocking MPI calls and returns their
        requests; ``finish()`` runs in the waiting thread once they are complete. ``watch``: the
        progress thread moves it along meanwhile (for ``async_op=True``)."""
        self.check_usable(op)
        with self._lock:
            try:
                requests = begin()
            except self.MPI.Exception as e:
                raise RuntimeError(f"{op}: MPI refused the call: {e.Get_error_string()}") from None
        work = Work(self, op, requests, finish)
        if watch and not self.test(work):   # (complete at once in a world of one: no thread to wake)
            self._progress.watch(work)
        return work

    def test(self, work: Work) -> bool:
        """Whether every request of ``work`` is complete (MPI_Testall; its statuses are filled in
        once, by whichever thread sees it complete first)."""
        self.check_usable(work._op)
        with self._lock:
            if not work._complete:
                try:
                    work._complete = self.MPI.Request.Testall(work._requests, work._statuses)
                    if work._complete:
                        work.completed_at = time.perf_counter()
                except self.MPI.Exception as e:
                    raise RuntimeError(f"{work._op}: MPI failed: {e.Get_error_string()}") from None
            return work._complete

    def await_work(self, work: Work, seconds: float | None) -> None:
        """Wait for ``work``'s requests, or give up after ``seconds`` (the group's timeout when
        None): the group is then unusable (MPI cannot cancel a collective) and RuntimeError says why."""
        seconds = self.timeout.total_seconds() if seconds is None else seconds
        if wait_until(work._test, time.monotonic() + seconds):
            return
        self._broken = (f"{work._op} on rank {self._rank} of {self._size} timed out after {seconds:g} s waiting for "
                        f"the other ranks: one of them failed, exited, is stuck, or did not call {work._op}")
        raise RuntimeError(f"{work._op}: {self._broken}. The process group cannot be used any more; an uncaught "
                           f"error aborts every rank")

    def check_usable(self, op: str) -> None:
        if self._broken:
            raise RuntimeError(f"{op}: the process group is unusable since {self._broken}")
        if self.comm is None:
            raise RuntimeError(f"{op}: the process group was destroyed")

    def close(self) -> None:
        """Stop the progress thread and free the communicator (left alone once broken: collectives
        may still be pending on it)."""
        self._progress.stop()
        with self._lock:
            if self.comm is not None and not self._broken and not self.MPI.Is_finalized():
                self.comm.Free()
            self.comm = None

    def __repr__(self):
        return f"<ProcessGroup mpi rank {self._rank} of {self._size}>"


class group:
    """PyTorch's ``torch.distributed.group``: ``group.WORLD`` is the default process group (None
    before ``init_process_group``)."""
    WORLD = None


GroupMember = group


class _State:
    group: ProcessGroup | None = None
    excepthook = None    # sys.excepthook before init_process_group replaced it
    closes_at_exit = False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None) -> None:
    """Join this process to the job's default process group, on MPI (PyTorch's
    ``torch.distributed.init_process_group``). The ranks are the processes ``mpiexec`` (or
    ``python -m webgrad.distributed.run``) started; run alone, a process is a world of one.

    ``backend``: ``"mpi"``; PyTorch's ``"gloo"`` and ``"nccl"`` (and ``"cpu:gloo,cuda:nccl"``) are
    taken as ``"mpi"`` too, so a PyTorch script runs unchanged (GPU tensors then travel through a
    host copy). ``world_size``/``rank`` (or the launcher's ``WORLD_SIZE``/``RANK``), when given, must
    agree with MPI's. ``init_method``, ``store``, ``group_name``, ``pg_options`` and ``device_id``
    have no effect: MPI's launcher does the rendezvous. ``timeout`` (a ``timedelta``, 30 minutes by
    default) bounds every wait for the other ranks.

    >>> import webgrad.distributed as dist
    >>> dist.init_process_group("gloo")
    >>> dist.get_rank(), dist.get_world_size(), dist.get_backend()
    (0, 1, 'mpi')
    >>> dist.destroy_process_group()
    """
    who = "init_process_group"
    if _State.group is not None:
        raise ValueError(f"{who}: trying to initialize the default process group twice!")
    _check_backend(who, backend)
    timeout = _timeout(who, timeout)
    MPI = mpi(who)
    world = MPI.COMM_WORLD
    _check_launch(who, "world_size", world_size, "WORLD_SIZE", world.Get_size())
    _check_launch(who, "rank", rank, "RANK", world.Get_rank())
    _State.group = group.WORLD = ProcessGroup(MPI, world.Dup(), timeout)
    if _State.excepthook is None:
        _State.excepthook, sys.excepthook = sys.excepthook, _abort_on_uncaught
    if not _State.closes_at_exit:
        _State.closes_at_exit = True
        atexit.register(_close_at_exit)   # runs before mpi4py's MPI_Finalize (registered earlier)


def _check_backend(who, backend) -> None:
    if backend is None:
        return
    if not isinstance(backend, str):
        raise TypeError(f"{who}: backend must be a string such as 'mpi', got {type(backend).__name__}")
    names = [part.split(":")[-1].strip().lower() for part in backend.split(",")]
    unknown = [n for n in names if n not in _BACKENDS]
    if unknown:
        raise ValueError(f"{who}: unknown backend {backend!r}; webgrad runs 'mpi' (and takes PyTorch's 'gloo' and "
                         f"'nccl' as 'mpi')")


def _timeout(who, timeout) -> timedelta:
    if timeout is None:
        return default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(f"{who}: expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    return timeout


def _check_launch(who, name, given, env, actual) -> None:
    """``given`` (or the environment variable ``env``) must be MPI's ``actual`` value."""
    source = f"{name}={given}" if given != -1 else f"{env}={os.environ[env]} in the environment" \
        if env in os.environ else None
    wanted = given if given != -1 else int(os.environ[env]) if source else actual
    if wanted != actual:
        raise RuntimeError(f"{who}: {source} but MPI started this process as {name} {actual}: start the ranks with "
                           f"`python -m webgrad.distributed.run --nproc N script.py` or `mpiexec -n N python "
                           f"script.py` (MPI does not know processes started by other launchers, such as torchrun)")


def _abort_on_uncaught(exc_type, exc, tb):
    """``sys.excepthook`` while a group lives: print the error, then abort every rank."""
    _State.excepthook(exc_type, exc, tb)
    g = _State.group
    if g is not None and g.size() > 1:
        sys.stderr.write(f"webgrad.distributed: rank {g.rank()} of {g.size()} stopped on an uncaught "
                         f"{exc_type.__name__}; aborting every rank (MPI_Abort) so that none waits for it forever\n")
        sys.stderr.flush()
        g.MPI.COMM_WORLD.Abort(1)


def _close_at_exit():
    if _State.group is not None:
        destroy_process_group()


def _the_group(who: str, pg) -> ProcessGroup:
    g = _State.group
    if g is None:
        raise ValueError(f"{who}: Default process group has not been initialized, please make sure to call "
                         f"init_process_group.")
    if pg is not None and pg is not g:
        raise ValueError(f"{who}: webgrad.distributed has only the default process group; pass group=None, got "
                         f"{pg!r}")
    return g


def default_group(who: str, pg=None) -> ProcessGroup:
    """The default process group (the only one), checked usable; ``pg`` may name it or be None."""
    g = _the_group(who, pg)
    g.check_usable(who)
    return g


def peer_rank(who, g, rank, group_rank, what) -> int:
    """The peer rank from ``rank``/``group_rank`` (one group: they are the same), checked."""
    if rank is None:
        rank = group_rank
    elif group_rank is not None and group_rank != rank:
        raise ValueError(f"{who}: {what}={rank} and group_{what}={group_rank} disagree")
    if rank is None:
        raise ValueError(f"{who}: either {what} or group_{what} must be specified")
    if type(rank) is not int or not 0 <= rank < g.size():
        raise RuntimeError(f"{who}: invalid {what} rank {rank!r}; the ranks are 0 .. {g.size() - 1}")
    return rank


def destroy_process_group(group=None) -> None:
    """Leave the default process group (MPI itself stays up until the process exits, so a new
    ``init_process_group`` may follow)."""
    if _State.group is None:   # PyTorch's error type
        raise AssertionError("destroy_process_group: Process group cannot be None (init_process_group was not "
                             "called, or the group was destroyed already)")
    g = _the_group("destroy_process_group", group)
    g.close()
    _State.group = GroupMember.WORLD = None
    if _State.excepthook is not None:
        sys.excepthook, _State.excepthook = _State.excepthook, None


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and the group was not destroyed since)."""
    return _State.group is not None


def is_available() -> bool:
    """Whether the distributed package can run here: mpi4py is installed (MPI starts only at
    ``init_process_group``)."""
    return mpi4py_installed()


def is_mpi_available() -> bool:
    """Whether the MPI backend can run here (mpi4py is installed)."""
    return mpi4py_installed()


def is_gloo_available() -> bool:
    """False: there is no gloo here (``init_process_group("gloo")`` runs on MPI)."""
    return False


def is_nccl_available() -> bool:
    """False: there is no NCCL here (``init_process_group("nccl")`` runs on MPI)."""
    return False


def get_rank(group=None) -> int:
    """This process's rank in the default group (0 .. world size - 1)."""
    return _the_group("get_rank", group).rank()


def get_world_size(group=None) -> int:
    """The number of ranks in the default group."""
    return _the_group("get_world_size", group).size()


def get_backend(group=None) -> str:
    """The backend of the default group: ``'mpi'``."""
    _the_group("get_backend", group)
    return "mpi"


__all__ = ["ProcessGroup", "group", "GroupMember", "default_pg_timeout", "init_process_group",
           "destroy_process_group", "is_initialized", "is_available", "is_mpi_available", "is_gloo_available",
           "is_nccl_available", "get_rank", "get_world_size", "get_backend", "default_group", "peer_rank"]
