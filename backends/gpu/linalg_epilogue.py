"""MatMul's store, and the elementwise epilogue a compiled plan may fuse into it (a bias add and an
activation, say: one dispatch instead of two or three).

Both MatMul programs store every result through ``put`` (or ``put_vec``, four columns at once),
which passes it through ``epi_(x, z, row, col)``: the identity, or a fused chain's function
(``fused.fused_source``) whose input 0 is the product and whose inputs 1.. are the epilogue's own
arrays ``ein0``, ``ein1``..., each read at ``z * s0 + row * s1 + col * s2`` with its strides
(uniforms ``e0``, ``e1``...; 0 along a broadcast dimension): a bias of shape [N] has (0, 0, 1).
"""
from __future__ import annotations

from typing import NamedTuple

_PUT = {False: """fn put(at: u32, z: u32, row: u32, col: u32, x: T, later: bool) {
    var v = x;
    if (later) { v += out[at]; }
    out[at] = epi_(v, z, row, col);
}""", True: """fn put_vec(at: u32, z: u32, row: u32, col: u32, x: V, later: bool) {
    var v = x;
    if (later) { v += out[at]; }
    out[at] = V(epi_(v.x, z, row, col), epi_(v.y, z, row, col + 1u), epi_(v.z, z, row, col + 2u),
                epi_(v.w, z, row, col + 3u));
}"""}
_IDENTITY = "fn epi_(x: T, z: u32, row: u32, col: u32) -> T { return x; }"


class Epilogue(NamedTuple):
    """A fused chain after a MatMul: ``source`` defines ``fused_(x0, x1, ...)`` (x0 the product) and
    what it calls (``elementwise.scalar_helpers``),
    ``arrays`` are its inputs 1.. (GpuArrays broadcastable to the product's shape)."""
    source: str
    arrays: tuple


def puts(vec_out: bool, n_extra: int, source: str = "") -> str:
    """The WGSL of ``epi_`` and of the store function ``put`` (``put_vec`` when ``vec_out``).

    >>> "return x;" in puts(False, 0)
    True
    """
    return (epilogue_function(n_extra, source) if source else _IDENTITY) + "\n" + _PUT[vec_out]


def epilogue_function(n_extra: int, source: str) -> str:
    """``epi_`` calling the fused chain's ``fused_`` on the product and its ``n_extra`` arrays."""
    reads = [f"ein{i}[i32(z) * ii(U_e{i}) + i32(row) * ii(U_e{i} + 1u) + i32(col) * ii(U_e{i} + 2u)]"
             for i in range(n_extra)]
    return (f"{source}\nfn epi_(x: T, z: u32, row: u32, col: u32) -> T {{\n"
            f"    return fused_({', '.join(['x'] + reads)});\n}}")


def epilogue_strides(shape: tuple, out_shape: tuple):
    """The (batch, row, column) strides that read an array of ``shape`` broadcast to a MatMul's
    ``out_shape`` ([batch..., M, N], both operands matrices or batches of them), or None when it cannot be read so (a batch broadcast only in
    part, or a shape that does not broadcast).

    >>> epilogue_strides((256,), (128, 256)), epilogue_strides((2, 3, 1), (2, 3, 4)), epilogue_strides((3, 1, 4), (2, 3, 4))
    ((0, 0, 1), (3, 1, 0), None)
    """
    if len(shape) > len(out_shape):
        return None
    full = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    if any(d not in (1, o) for d, o in zip(full, out_shape)):
        return None
    *batch, rows, cols = full
    if all(d == 1 for d in batch):
        zs = 0
    elif tuple(batch) == tuple(out_shape[:-2]):
        zs = rows * cols
    else:
        return None
    return (zs, cols if rows != 1 else 0, 1 if cols != 1 else 0)
