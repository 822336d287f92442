"""MatMul: tiled (64x64 per workgroup), register-blocked (4x4 per thread), batched with
broadcasting; transposed operands are read through strides, never copied."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import contiguous_strides
from .program import WGSL_TYPES, Program

TILE = 64


def matmul(be, a, b, *, transpose_a=False, transpose_b=False):
    va, vb = len(a.shape), len(b.shape)
    ash = a.shape if va > 1 else (1,) + a.shape
    bsh = b.shape if vb > 1 else b.shape + (1,)
    (r0, r1), (c0, c1) = ash[-2:], bsh[-2:]
    m, k, sa = (r1, r0, (1, r1)) if transpose_a and va > 1 else (r0, r1, (r1, 1))
    kb, n, sb = (c1, c0, (1, c1)) if transpose_b and vb > 1 else (c0, c1, (c1, 1))
    if k != kb:
        raise ValueError(f"MatMul: shapes {a.shape} and {b.shape} cannot be multiplied ({k} != {kb})")
    abat, bbat = ash[:-2], bsh[:-2]
    rank = max(len(abat), len(bbat))
    abat, bbat = (1,) * (rank - len(abat)) + abat, (1,) * (rank - len(bbat)) + bbat
    batch = tuple(max(x, y) if min(x, y) else 0 for x, y in zip(abat, bbat))
    ast, bst = contiguous_strides(abat), contiguous_strides(bbat)
    astr = [0 if d == 1 else s * r0 * r1 for d, s in zip(abat, ast)]
    bstr = [0 if d == 1 else s * c0 * c1 for d, s in zip(bbat, bst)]
    shape = batch + ((m,) if va > 1 else ()) + ((n,) if vb > 1 else ())
    out = be.alloc(shape, a.dtype)
    nb = 1
    for d in batch:
        nb *= d
    if out.size == 0:
        return out
    if k == 0:
        from .elementwise import fill
        return fill(be, shape=shape, value=0, dtype=a.dtype)
    t = WGSL_TYPES[a.dtype.name]

    def build():
        return Program(K.MATMUL, "matmul", inputs=[("in0", t), ("in1", t)], outputs=[("out", t)], wg=256,
                       uniforms=[("m", "u32", 1), ("n", "u32", 1), ("k", "u32", 1), ("sa", "i32", 2), ("sb", "i32", 2),
                                 ("batch", "u32", rank), ("abatch", "i32", rank), ("bbatch", "i32", rank)],
                       subs={"T": t, "BR": str(rank)})
    be.run(("matmul", t, rank), build, [a, b], [out], [m, n, k, *sa, *sb, *batch, *astr, *bstr],
           (-(-n // TILE), -(-m // TILE), nb))
    return out


KERNELS = {K.MATMUL: matmul}
