"""IndexCopy (torch.index_copy along one axis; where indices repeat, the last write wins, as numpy's
in-order assignment), in two dispatches and no readback (``kernels/index_copy*.wgsl``): each index
entry j claims its slice with an atomicMax of j, so the greatest j that targets a slice holds it;
then each output element copies from the source slice that holds its slice, or from x where none
does. Indices outside [0, dim) are refused through the backend's index checks (the next readback
raises), as Gather's are."""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.dtypes import int32

from .elementwise import WG, elementwise, fill
from .program import WGSL_TYPES, Program


def _claims(be, index, n):
    """[n] int32: for each slice along the axis, the greatest j with index[j] == it, or -1 (one element
    when n is 0: a binding is never empty, and every index is refused then)."""
    claims = fill(be, shape=(max(n, 1),), value=-1, dtype=int32)
    flags, slot = be.index_flags(K.INDEX_COPY, n)
    be.run(("index_copy_claim",), lambda: Program(K.INDEX_COPY, "index_copy_claim", inputs=[("idx", "i32")],
                                                  outputs=[("claims", "atomic<i32>")], wg=WG, checks_indices=True,
                                                  uniforms=[("m", "u32", 1), ("n", "i32", 1)]),
           [index], [claims, flags], [index.size, n, slot], -(-index.size // WG))
    return claims


def index_copy(be, x, index, source, *, axis):
    axis %= len(x.shape)
    if x.size == 0 or index.size == 0:
        if index.size and x.shape[axis] == 0:   # nothing to write, but every index is out of range:
            _claims(be, index, 0)               # refused, as cpu's (PyTorch's) IndexError
        return elementwise(be, K.IDENTITY, "x0", [x], x.shape, x.dtype)
    n, inner = x.shape[axis], 1
    for d in x.shape[axis + 1:]:
        inner *= d
    claims = _claims(be, index, n)
    out, t = be.alloc(x.shape, x.dtype), WGSL_TYPES[x.dtype.name]
    be.run(("index_copy", t), lambda: Program(K.INDEX_COPY, "index_copy", outputs=[("out", t)], wg=WG,
                                              inputs=[("x", t), ("claims", "i32"), ("src", t)],
                                              uniforms=[("total", "u32", 1), ("n", "u32", 1), ("m", "u32", 1),
                                                        ("inner", "u32", 1)]),
           [x, claims, source], [out], [out.size, n, index.size, inner], -(-out.size // WG))
    return out


KERNELS = {K.INDEX_COPY: index_copy}
