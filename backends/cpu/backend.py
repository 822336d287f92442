"""The cpu backend object: numpy arrays as native data, host transfer, memory figures.
Importing this module registers every cpu kernel."""
from __future__ import annotations

import gc

import numpy as np

from webgrad.dtypes import DType

# importing the kernel modules registers their kernels (backward_kernels: the backward kernels)
from . import (attention, backward_kernels, bessel, complex, creation, elementwise, fused, gamma, gelu,  # noqa: F401
               indexing, into, layer_norm, linalg, losses, movement, optim, reduce, softmax, sorting, special, views,
               windows)
from . import fft  # noqa: F401
from .backend_dtypes import DTYPE_OF, NP_DTYPES, np_dtype

DONATE_MIN_BYTES = 16 << 10   # smaller arrays are not donated: a fresh one costs less than the donation
_COERCE = {"i": np.int64, "u": np.int64, "b": np.bool_}   # numpy dtypes webgrad lacks: uint16..64


class CpuBackend:
    """Native data is a numpy ndarray (or numpy scalar for 0-d results)."""

    name = "cpu"
    dtypes = frozenset(NP_DTYPES)   # every webgrad dtype (bfloat16 where ml_dtypes is installed)
    constant_cache = True   # arrays are never mutated, so ops may reuse the data of small constants

    def __repr__(self):
        """Names the backend and what computes for it.

        >>> CpuBackend()  # doctest: +ELLIPSIS
        <webgrad backend 'cpu': numpy ...>
        """
        return f"<webgrad backend {self.name!r}: numpy {np.__version__}>"

    def dtype_of(self, a) -> DType:
        return DTYPE_OF[a.dtype]

    def gradient_scope(self):
        """The context a compiled plan's replay runs in, entered once per replay (numpy's
        floating-point warnings off: inf and nan are results, as in every cpu kernel)."""
        return elementwise.quiet_scope()

    def donate(self, a) -> elementwise.Donation | None:
        """A context in which the next arithmetic kernel whose first input is ``a`` may write its
        result into ``a``, which its caller declares dead after that kernel (no other holder: e.g.
        core/distributed/buffers.py ``divide`` on a buffer it made); None for an array under 16 KiB,
        which numpy allocates anew for less than the donation's own bookkeeping costs."""
        return elementwise.Donation(a) if a.nbytes >= DONATE_MIN_BYTES else None

    # fusion (webgrad.compile's plans): chains of ufunc kernels into shared arrays (fused.py)
    fusion_max_inputs = 32

    @staticmethod
    def fusible(name: str, attrs: dict, dtypes) -> bool:
        return fused.fusible(name, attrs, dtypes)

    @staticmethod
    def fused_kernel(ops, out_shape: tuple, dtype):
        return fused.fused_kernel(ops, out_shape, dtype)

    # compiled plans (into.py): where kernels write (dying inputs, donated data, kept arrays); joint steps
    into_kernel = staticmethod(into.into_kernel)
    fresh_outputs = staticmethod(into.fresh_outputs)
    empty_buffer = staticmethod(into.empty)
    never_raises = staticmethod(into.never_raises)
    donated = staticmethod(into.donated)
    joint_kernel = staticmethod(into.joint_kernel)

    def upload(self, flat, shape, dtype: DType):
        a = np.array(flat, dtype=np_dtype(dtype))
        a.shape = shape     # in place: the array keeps owning its memory (a reshape would be a view)
        return a

    def from_array(self, obj, dtype: DType | None = None):
        a = np.asarray(obj)
        if dtype is None:
            if a.dtype in DTYPE_OF:
                return a.copy()
            target = _COERCE.get(a.dtype.kind)
            if target is None:
                raise TypeError(f"tensor: unsupported numpy dtype {a.dtype}; webgrad has "
                                f"{', '.join(d.name for d in DTYPE_OF.values())}")
            if a.dtype == np.uint64 and a.size and a.max() > 2**63 - 1:
                raise OverflowError(f"tensor: {a.dtype} values do not fit in int64")
            return a.astype(target)
        return a.astype(np_dtype(dtype), copy=True)

    def read(self, a):
        dtype = DTYPE_OF[a.dtype]
        a = np.ascontiguousarray(a if a.dtype.kind != "f" or a.dtype.itemsize != 2 else a.astype(np.float32))   # half: as float32 (exact)
        return memoryview(a.reshape(-1)) if a.ndim else [a.item()], a.shape, dtype

    def to_list(self, a):
        return a.tolist()

    def to_numpy(self, a):
        return np.asarray(a)

    def nbytes(self, a) -> int:
        return a.nbytes

    def memory(self) -> dict:
        """Live webgrad tensors on this backend and the bytes their distinct arrays hold
        (counting data kept for backward too)."""
        from webgrad.engine import SavedTensor
        from webgrad.tensor import Tensor
        arrays, tensors = {}, 0
        for o in gc.get_objects():
            kind = type(o)  # not isinstance: that may touch lazy module attributes of other libraries
            if issubclass(kind, Tensor) and o._backend is self:
                tensors += 1
                arrays[id(o._data)] = o._data
            elif kind is SavedTensor and o._backend is self:
                arrays[id(o._data)] = o._data
        return {"tensors": tensors, "bytes": sum(a.nbytes for a in arrays.values())}
