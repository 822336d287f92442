"""Backends: each registers itself with a priority; none is imported until first use.

``cpu`` (numpy) is always registered; it starts only where numpy imports.
"""
from webgrad.registry import register_backend


def _cpu():
    from .cpu import CpuBackend
    return CpuBackend()


register_backend("cpu", _cpu, priority=0)
