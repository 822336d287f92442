"""Gather and ScatterAdd (torch semantics along one axis). ScatterAdd is deterministic: each
output element sums its matching entries in index order (no float atomics, which WGSL lacks).
Indices outside [0, dim) are refused as on the cpu, without a readback per op: the kernels report
them through the backend's index checks and the next readback raises (``GpuBackend.index_flags``)."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import WG, contiguous_strides, elementwise
from .program import WGSL_TYPES, Program


def gather(be, x, index, *, axis):
    out = be.alloc(index.shape, x.dtype)
    if out.size == 0:
        return out
    rank, t = len(index.shape), WGSL_TYPES[x.dtype.name]
    axis %= max(1, rank)

    dim = x.shape[axis] if x.shape else 1
    flags, slot = be.index_flags(K.GATHER, dim)

    def build():
        return Program(K.GATHER, "gather", inputs=[("x", t), ("idx", "i32")], outputs=[("out", t)], wg=WG,
                       uniforms=[("n", "u32", 1), ("axis", "i32", 1), ("dim", "i32", 1), ("shape", "u32", rank),
                                 ("xs", "i32", rank)], subs={"RANK": str(rank), "T": t}, checks_indices=True)
    be.run(("gather", t, rank), build, [x, index], [out, flags],
           [out.size, axis, dim, *index.shape, *contiguous_strides(x.shape), slot], -(-out.size // WG))
    return out


T_CHUNK = 16384         # ScatterAdd: index entries along the axis one dispatch walks


def scatter_add(be, x, index, src, *, axis):
    if index.size == 0 or x.size == 0:
        return elementwise(be, K.IDENTITY, "x0", [x], x.shape, x.dtype)
    out = be.alloc(x.shape, x.dtype)
    rank, t = len(x.shape), WGSL_TYPES[x.dtype.name]
    axis %= max(1, rank)

    flags, slot = be.index_flags(K.SCATTER_ADD, x.shape[axis])

    def build():
        return Program(K.SCATTER_ADD, "scatter_add", inputs=[("x", t), ("idx", "i32"), ("src", t)],
                       outputs=[("out", t)], wg=WG, subs={"RANK": str(rank), "T_CHUNK": str(T_CHUNK)},
                       checks_indices=True,
                       uniforms=[("n", "u32", 1), ("axis", "i32", 1), ("t_begin", "i32", 1), ("xshape", "i32", rank),
                                 ("ishape", "i32", rank), ("is", "i32", rank), ("ss", "i32", rank)])
    for t_begin in range(0, index.shape[axis], T_CHUNK):   # (a 0-d index has one entry)
        be.run(("scatter_add", t, rank), build, [x, index, src], [out, flags],
               [out.size, axis, t_begin, *x.shape, *index.shape, *contiguous_strides(index.shape),
                *contiguous_strides(src.shape), slot], -(-out.size // WG))
    return out


KERNELS = {K.GATHER: gather, K.SCATTER_ADD: scatter_add}
