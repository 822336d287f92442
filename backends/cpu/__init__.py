"""The ``cpu`` backend: webgrad's kernels on numpy arrays."""
from .backend import CpuBackend

__all__ = ["CpuBackend"]
