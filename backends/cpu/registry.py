"""``cpu_kernel``: register a numpy function as the cpu implementation of a kernel."""
from webgrad.registry import register_kernel


def cpu_kernel(name):
    """Decorator: ``@cpu_kernel("Add")`` registers the function for backend ``cpu``."""
    return lambda fn: register_kernel(name, "cpu", fn)


def register_table(table: dict) -> None:
    """Register {kernel name: numpy function} in one go."""
    for name, fn in table.items():
        register_kernel(name, "cpu", fn)
