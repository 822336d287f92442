"""Where ``webgrad.distributed`` meets MPI: mpi4py, imported only when a process group starts
(``import webgrad`` never needs MPI), and the tables from webgrad's dtypes and reduce ops to MPI's.

>>> from webgrad import float16, int64
>>> wire_dtype(float16).name, mpi_type_name(int64)
('float32', 'INT64_T')
"""
from __future__ import annotations

import enum

from ..dtypes import DType, bool_, float16, float32

INSTALL_HINT = ("webgrad.distributed runs on MPI through mpi4py: pip install 'webgrad[distributed]' and an MPI "
                "library (Debian: apt-get install openmpi-bin libopenmpi-dev, or mpich)")


def mpi(who: str):
    """mpi4py's ``MPI`` module (importing it starts MPI in this process), or a RuntimeError that
    says how to install it."""
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError) as e:   # mpi4py 4 raises RuntimeError when no libmpi loads
        raise RuntimeError(f"{who}: {INSTALL_HINT} ({type(e).__name__}: {e})") from None
    return MPI


def mpi4py_installed() -> bool:
    """Whether mpi4py is importable, found without importing it (which would start MPI)."""
    from importlib.util import find_spec
    return find_spec("mpi4py") is not None


# ---------------------------------------------------------------- dtypes

# webgrad dtype -> the MPI datatype its elements travel as. Half types travel as float32: MPI has no
# 16-bit float type, a bfloat16 array exports no buffer, and float32 holds every half value exactly,
# so broadcasts and gathers stay exact and reductions round once, at the end.
_MPI_TYPES = {"float32": "FLOAT", "float64": "DOUBLE", "int32": "INT32_T", "int64": "INT64_T", "bool": "C_BOOL"}
_WIRE = {"float16": float32, "bfloat16": float32}


def wire_dtype(dtype: DType) -> DType:
    """The dtype a tensor of ``dtype`` is sent as (itself, or float32 for the half types)."""
    return _WIRE.get(dtype.name, dtype)


def mpi_type_name(dtype: DType) -> str:
    """The name, in mpi4py's ``MPI`` module, of the datatype ``dtype`` travels as."""
    return _MPI_TYPES[wire_dtype(dtype).name]


# ---------------------------------------------------------------- reduce ops


class ReduceOp(enum.Enum):
    """How ``all_reduce`` and ``reduce_scatter_tensor`` combine the ranks' values (PyTorch's
    ``torch.distributed.ReduceOp``). ``AVG`` needs a floating dtype, the bitwise ops an integer or
    bool one; on bool tensors ``SUM``/``MAX`` are logical or and ``PRODUCT``/``MIN`` logical and
    (as PyTorch's NCCL backend).

    >>> ReduceOp.SUM, ReduceOp["AVG"].name
    (<ReduceOp.SUM: 0>, 'AVG')
    """
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


ReduceOp.RedOpType = ReduceOp   # PyTorch spells the enum's type ReduceOp.RedOpType too

# (op, dtype kind) -> MPI op name; kind is "f" (floating), "i" (integer) or "b" (bool). A missing
# entry is an op the dtype does not support.
_NUMERIC = {ReduceOp.SUM: "SUM", ReduceOp.PRODUCT: "PROD", ReduceOp.MIN: "MIN", ReduceOp.MAX: "MAX"}
_BITWISE = {ReduceOp.BAND: "BAND", ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR"}
_LOGICAL = {ReduceOp.SUM: "LOR", ReduceOp.MAX: "LOR", ReduceOp.BOR: "LOR", ReduceOp.PRODUCT: "LAND",
            ReduceOp.MIN: "LAND", ReduceOp.BAND: "LAND", ReduceOp.BXOR: "LXOR"}
_MPI_OPS = {"f": {**_NUMERIC, ReduceOp.AVG: "SUM"}, "i": {**_NUMERIC, **_BITWISE}, "b": _LOGICAL}


def _kind(dtype: DType) -> str:
    return "b" if dtype is bool_ else "f" if dtype.is_floating else "i"


def mpi_op_name(who: str, op, dtype: DType) -> str:
    """The name of the MPI op that carries out ``op`` on ``dtype``, or the error PyTorch raises."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{who}: op must be a webgrad.distributed.ReduceOp (e.g. ReduceOp.SUM), got "
                        f"{type(op).__name__} {op!r}")
    name = _MPI_OPS[_kind(dtype)].get(op)
    if name is None:
        raise RuntimeError(f"{who}: ReduceOp.{op.name} is not supported on {dtype.name} tensors "
                           f"(AVG needs a floating dtype; BAND, BOR and BXOR an integer or bool one)")
    return name


__all__ = ["ReduceOp", "mpi", "mpi4py_installed", "wire_dtype", "mpi_type_name", "mpi_op_name", "INSTALL_HINT"]
