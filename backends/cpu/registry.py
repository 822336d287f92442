"""``cpu_kernel``: register a numpy function as the cpu implementation of a kernel (the kernels
named in ``opmath.OPMATH`` wrapped to compute half precision in float32)."""
from webgrad.registry import register_kernel

from .opmath import OPMATH, in_float32


def _register(name, fn):
    register_kernel(name, "cpu", in_float32(fn, OPMATH[name]) if name in OPMATH else fn)
    return fn


def cpu_kernel(name):
    """Decorator: ``@cpu_kernel("Add")`` registers the function for backend ``cpu``."""
    return lambda fn: _register(name, fn)


def register_table(table: dict) -> None:
    """Register {kernel name: numpy function} in one go."""
    for name, fn in table.items():
        _register(name, fn)
