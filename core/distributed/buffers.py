"""Tensors as the memory MPI reads and writes, with no copy beyond the one MPI needs.

webgrad tensors are values inside: no op writes into an array that a tensor holds, since another
tensor (a view, ``.data``, a saved value) may hold it too. So

* MPI *reads* a tensor's own memory: on ``cpu``, the numpy array behind it through the buffer
  protocol, with no copy for a row-major tensor of a dtype MPI carries;
* MPI *writes* into a fresh array made for the purpose, which then becomes the tensor's value by
  ``Tensor._assign`` (as every in-place op ends): views of the tensor see it, its version counter
  counts it, and no other tensor that shared the old array sees a change.

A tensor on another backend (the GPU) travels through a host copy each way, and the half types
travel as float32 (``mpi.wire_dtype``).
"""
from __future__ import annotations

from .. import kernel_names as K
from ..engine import no_grad, run_kernel
from ..ops.common import scalar_tensor
from ..registry import backend
from .mpi import mpi_type_name, wire_dtype


def host_flat(t):
    """``t``'s elements as a 1-D row-major ``cpu`` tensor of its wire dtype: MPI's send buffer.
    It shares ``t``'s memory when ``t`` is a row-major ``cpu`` tensor of a dtype MPI carries.

    >>> import webgrad as wg
    >>> host_flat(wg.tensor([[1.0, 2.0], [3.0, 4.0]]).t()).tolist()
    [1.0, 3.0, 2.0, 4.0]
    """
    with no_grad():
        h = t if t._backend.name == "cpu" else t.to("cpu")
        wire = wire_dtype(t._dtype)
        if h._dtype is not wire:
            h = run_kernel(K.CAST, h, dtype=wire)
        flat = run_kernel(K.RESHAPE, h, shape=(h.numel(),))   # a view when h is row-major, else a copy
        if not memoryview(flat._data).c_contiguous:          # a strided 1-D tensor reshapes to itself
            flat = run_kernel(K.IDENTITY, flat)
    return flat


def fresh(n: int, dtype):
    """A new 1-D ``cpu`` tensor of ``n`` elements whose memory no other tensor holds: MPI's
    receive buffer."""
    return run_kernel(K.FILL, backend=backend("cpu"), shape=(n,), value=0, dtype=dtype)


def spec(flat, MPI) -> list:
    """mpi4py's buffer argument for a 1-D ``cpu`` tensor from ``host_flat`` or ``fresh``."""
    return [memoryview(flat._data), getattr(MPI, mpi_type_name(flat._dtype))]


def piece(flat, i: int, n: int):
    """Elements ``i*n`` to ``(i+1)*n`` of a 1-D tensor (no copy on ``cpu``)."""
    return run_kernel(K.SLICE, flat, begin=(i * n,), end=((i + 1) * n,), step=(1,))


def divide(flat, n: int):
    """``flat / n``, written into ``flat``'s own array where its backend takes the donation
    (``flat`` must be fresh: held by no other tensor)."""
    d = scalar_tensor(n, flat._dtype, flat._backend)
    donate = getattr(flat._backend, "donate", None)
    donation = donate(flat._data) if donate is not None else None
    if donation is None:
        return run_kernel(K.DIV, flat, d)
    with donation:
        return run_kernel(K.DIV, flat, d)


def value_like(flat, like, shape=None):
    """``flat`` (a ``cpu`` tensor of ``like``'s wire dtype) as ``like`` holds values: ``shape``
    (``like``'s by default), ``like``'s dtype and backend."""
    with no_grad():
        out = run_kernel(K.RESHAPE, flat, shape=tuple(like.shape if shape is None else shape))
        if out._dtype is not like._dtype:
            out = run_kernel(K.CAST, out, dtype=like._dtype)
        return out if out._backend is like._backend else out.to(like.device)


def write(t, value, op: str):
    """Make ``t`` hold ``value`` as an in-place op does (views and version counter included),
    outside autograd: a collective is not recorded, as in PyTorch. Returns ``t``."""
    with no_grad():
        return t._assign(value, op)


__all__ = ["host_flat", "fresh", "spec", "piece", "divide", "value_like", "write"]
