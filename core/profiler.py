"""``webgrad.profile()``: per-kernel calls, host time, bytes allocated and peak live bytes.

It works from outside the engine: entering the block starts the default backend (whose
kernels register as it starts) and wraps every function in the kernel registry with a
timing wrapper (backward kernels included: a backward pass runs them); leaving it puts the
original functions back exactly. Kernels registered or replaced inside the block (e.g. by a
backend first started there) are left as they are, never wrapped, so they are not profiled.

Device time: a backend whose host time is not its device time (the GPU backends encode
work lazily and run it later) can report device time. When a started backend has
``start_device_timing(report)``, the profiler calls it on entry with ``report(kernel_name,
seconds)`` -- a callable the backend calls for each timed dispatch (e.g. from GPU
timestamp queries, when the adapter supports them) -- and calls ``stop_device_timing()``
on exit, by which time the backend must have reported everything it measured.
"""
from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import registry


@dataclass
class KernelStats:
    """What the profiler saw of one kernel (summed over the backends it ran on)."""
    calls: int = 0
    host_s: float = 0.0               # total host time, seconds
    bytes: int = 0                    # sum of the outputs' sizes (backend.nbytes)
    peak_bytes: int = 0               # highest live-byte figure seen right after a call
    device_s: Optional[float] = None  # total device time, when a backend reports it
    backends: set = field(default_factory=set)

    @property
    def mean_s(self) -> float:
        """Mean host time per call, seconds."""
        return self.host_s / self.calls if self.calls else 0.0


class Profile:
    """The profiling session ``webgrad.profile()`` returns: a context manager whose
    ``stats`` ({kernel name: KernelStats}) fill while the block runs; ``table()`` (and
    ``print(prof)``) formats them, slowest first.

    >>> import webgrad as wg
    >>> with wg.profile() as prof:
    ...     y = (wg.ones(3) * 2).sum()
    >>> prof.stats["Mul"].calls, prof.stats["Sum"].calls
    (1, 1)
    """

    def __init__(self):
        self.stats: dict = {}
        self.live_bytes = 0           # bytes of outputs made in the block that are still alive
        self.peak_bytes = 0
        self.wall_s = 0.0
        self._originals: dict = {}    # (kernel, backend) -> original fn
        self._wrappers: dict = {}     # (kernel, backend) -> wrapper installed
        self._timed: list = []        # backends asked for device time
        self.active = False

    # ------------------------------------------------------------ entering and leaving
    def __enter__(self) -> "Profile":
        if self.active:
            raise RuntimeError("profile: this profile is already running")
        self.active = True
        registry.get_backend()        # a backend's kernels register when it starts: start the default one now
        for be, table in registry._kernels.items():
            for name, fn in list(table.items()):
                self._originals[(name, be)] = fn
                self._wrappers[(name, be)] = table[name] = self._wrap((name, be), fn)
        for be in list(registry._backend_instances.values()):
            start = getattr(be, "start_device_timing", None)
            if start is not None:
                start(self.add_device_time)
                self._timed.append(be)
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> bool:
        self.wall_s += time.perf_counter() - self._t0
        for (name, be), wrapper in self._wrappers.items():
            table = registry._kernels[be]
            if table.get(name) is wrapper:
                table[name] = self._originals[(name, be)]
        timed, self._originals, self._wrappers, self._timed = self._timed, {}, {}, []
        try:
            for be in timed:
                be.stop_device_timing()
        finally:
            self.active = False
        return False

    # ------------------------------------------------------------ measuring
    def _wrap(self, key: tuple, fn: Callable) -> Callable:
        name, backend_name = key

        def timed(*args, **attrs):
            if not self.active:       # a wrapper someone kept after the block: just run the kernel
                return fn(*args, **attrs)
            t0 = time.perf_counter_ns()
            out = fn(*args, **attrs)
            self._record(name, backend_name, (time.perf_counter_ns() - t0) * 1e-9, out)
            return out
        timed.__wrapped__ = fn
        return timed

    def _record(self, name: str, backend_name: str, seconds: float, out) -> None:
        s = self.stats.get(name)
        if s is None:
            s = self.stats[name] = KernelStats()
        s.calls += 1
        s.host_s += seconds
        s.backends.add(backend_name)
        be = registry._backend_instances.get(backend_name)
        for o in (out if type(out) is tuple else (out,)):
            if o is None:             # a backward kernel's "no gradient for this input"
                continue
            n = be.nbytes(o) if be is not None else getattr(o, "nbytes", 0)
            s.bytes += n
            self._track(o, n)
        in_use = getattr(be, "in_use", None)
        live = in_use if isinstance(in_use, int) else self.live_bytes
        s.peak_bytes = max(s.peak_bytes, live)
        self.peak_bytes = max(self.peak_bytes, live)

    def _track(self, native, n: int) -> None:
        """Count ``n`` live bytes until ``native`` is garbage collected (where it can be weakly referenced)."""
        try:
            weakref.finalize(native, self._free, n)
        except TypeError:             # e.g. numpy scalars: tiny, and gone at once
            return
        self.live_bytes += n

    def _free(self, n: int) -> None:
        self.live_bytes -= n

    def add_device_time(self, name: str, seconds: float) -> None:
        """Add ``seconds`` of device time to kernel ``name`` (backends call this; see the module docstring)."""
        s = self.stats.get(name)
        if s is None:
            s = self.stats[name] = KernelStats()
        s.device_s = (s.device_s or 0.0) + seconds

    # ------------------------------------------------------------ reporting
    def table(self, limit: Optional[int] = None) -> str:
        """The stats as a text table, slowest kernel first (``limit`` rows at most).

        >>> import webgrad as wg
        >>> with wg.profile() as prof:
        ...     _ = wg.ones(2) + 1
        >>> print(prof.table().splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
        kernel  backend  calls  total ms  mean us  allocated  peak live
        """
        rows = sorted(self.stats.items(), key=lambda kv: -kv[1].host_s)[:limit]
        device = any(s.device_s is not None for _, s in rows)
        head = ["kernel", "backend", "calls", "total ms", "mean us", "allocated", "peak live"]
        head += ["device ms"] if device else []
        body = [[name, ",".join(sorted(s.backends)) or "-", str(s.calls), f"{s.host_s * 1e3:.3f}",
                 f"{s.mean_s * 1e6:.1f}", format_bytes(s.bytes), format_bytes(s.peak_bytes)]
                + ([f"{s.device_s * 1e3:.3f}" if s.device_s is not None else "-"] if device else [])
                for name, s in rows]
        total = ["total", "", str(sum(s.calls for s in self.stats.values())),
                 f"{sum(s.host_s for s in self.stats.values()) * 1e3:.3f}", "",
                 format_bytes(sum(s.bytes for s in self.stats.values())), format_bytes(self.peak_bytes)]
        total += [""] if device else []
        lines = [head] + body + [total]
        widths = [max(len(r[i]) for r in lines) for i in range(len(head))]

        def fmt(row):                 # names left-aligned, numbers right-aligned
            return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
        rule = "-" * len(fmt(head))
        return "\n".join([fmt(head), rule] + [fmt(r) for r in body] + [rule, fmt(total)])

    def __str__(self) -> str:
        return self.table()


def format_bytes(n: int) -> str:
    """``n`` bytes in B / KiB / MiB / GiB.

    >>> format_bytes(512), format_bytes(3 * 1024 * 1024)
    ('512 B', '3.0 MiB')
    """
    for unit in ("B", "KiB", "MiB"):
        if abs(n) < 1024:
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def profile() -> Profile:
    """Profile the kernels run inside a ``with`` block: calls, host time, bytes allocated and
    peak live bytes per kernel (device time too, where a backend reports it).

    >>> import webgrad as wg
    >>> with wg.profile() as prof:
    ...     (wg.ones(4, 4) @ wg.ones(4, 4)).sum().item()
    64.0
    >>> s = prof.stats["MatMul"]
    >>> s.calls, s.bytes
    (1, 64)
    """
    return Profile()


__all__ = ["profile", "Profile", "KernelStats"]
