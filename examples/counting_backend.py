"""A custom backend: ``counting`` keeps its data as numpy arrays, as ``cpu`` does, runs
cpu's kernels, and counts every kernel call.

Three steps make a backend:

1. a backend object (see ``webgrad.Backend`` for the methods webgrad calls) -- here the
   cpu one under another name;
2. kernels registered under its name -- here all of cpu's, each wrapped by a counter,
   with ``webgrad.derive_backend``;
3. ``webgrad.register_backend(name, factory, priority)`` -- the highest-priority backend
   that starts becomes the default.

Run: python examples/counting_backend.py (it runs in under a second)
"""
import contextlib
from collections import Counter

import webgrad as wg
from webgrad.backends.cpu import CpuBackend

NAME = "counting"
calls: Counter = Counter()


class CountingBackend(CpuBackend):
    """cpu's data handling (numpy arrays, host transfer, memory) under the name ``counting``."""
    name = NAME


def counted(kernel: str, fn):
    """Wrap kernel function ``fn`` so that each call counts under ``kernel``."""
    def run(*arrays, **attrs):
        calls[kernel] += 1
        return fn(*arrays, **attrs)
    return run


def install(priority: int = 10) -> None:
    """Register the backend and its kernels; with ``priority`` above cpu's 0 it becomes the default."""
    wg.derive_backend(NAME, "cpu", wrap=counted)
    wg.register_backend(NAME, CountingBackend, priority=priority)


def uninstall() -> None:
    """Remove the backend and its kernels."""
    wg.remove_backend(NAME)


@contextlib.contextmanager
def counting(priority: int = 10):
    """``install`` for the ``with`` block (yielding the call counter, reset), then ``uninstall``,
    and the default backend from before is set again."""
    previous = wg.get_backend().name
    calls.clear()
    install(priority)
    try:
        yield calls
    finally:
        uninstall()
        wg.set_backend(previous)


def main() -> None:
    with counting(priority=10) as counts:
        print("default backend:", repr(wg.get_backend().name))
        wg.manual_seed(0)
        x = wg.randn(8, 3)
        w = wg.randn(3, 1, requires_grad=True)
        loss = ((x @ w).tanh() ** 2).mean()
        loss.backward()
        print("tensor backend:", repr(w.grad.device.type))
        print("kernel calls:", dict(sorted(counts.items())))
        print("total calls:", sum(counts.values()))
    print("default backend after:", repr(wg.get_backend().name))


if __name__ == "__main__":
    main()
