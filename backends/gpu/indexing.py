"""Gather and ScatterAdd (torch semantics along one axis). ScatterAdd is deterministic: each
output element sums its matching entries in index order (no float atomics, which WGSL lacks).
Negative indices wrap once; out-of-range indices are not checked on the GPU."""
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

    def build():
        return Program(K.GATHER, "gather", inputs=[("x", t), ("idx", "i32")], outputs=[("out", t)], wg=WG,
                       uniforms=[("n", "u32", 1), ("axis", "i32", 1), ("dim", "i32", 1), ("shape", "u32", rank),
                                 ("xs", "i32", rank)], subs={"RANK": str(rank)})
    be.run(("gather", t, rank), build, [x, index], [out],
           [out.size, axis, x.shape[axis] if x.shape else 1, *index.shape,
            *contiguous_strides(x.shape)], -(-out.size // WG))
    return out


def scatter_add(be, x, index, src, *, axis):
    if index.size == 0 or x.size == 0:
        return elementwise(be, K.IDENTITY, "x0", [x], x.shape, x.dtype)
    out = be.alloc(x.shape, x.dtype)
    rank, t = len(x.shape), WGSL_TYPES[x.dtype.name]
    axis %= max(1, rank)

    def build():
        return Program(K.SCATTER_ADD, "scatter_add", inputs=[("x", t), ("idx", "i32"), ("src", t)],
                       outputs=[("out", t)], wg=WG, subs={"RANK": str(rank)},
                       uniforms=[("n", "u32", 1), ("axis", "i32", 1), ("xshape", "i32", rank), ("ishape", "i32", rank),
                                 ("is", "i32", rank), ("ss", "i32", rank)])
    be.run(("scatter_add", t, rank), build, [x, index, src], [out],
           [out.size, axis, *x.shape, *index.shape, *contiguous_strides(index.shape), *contiguous_strides(src.shape)],
           -(-out.size // WG))
    return out


KERNELS = {K.GATHER: gather, K.SCATTER_ADD: scatter_add}
