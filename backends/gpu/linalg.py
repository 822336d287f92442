"""MatMul: tiled (64x64 per workgroup), register-blocked (4x4 per thread), batched with
broadcasting; transposed operands are read through strides, never copied; vec4 global loads
and stores where an operand is contiguous along a dimension that is a multiple of 4.
A long inner dimension runs as several dispatches of at most ``K_CHUNK`` each, every one after
the first adding to the output: some implementations stop a shader's loops after 65535
iterations (Mesa's lavapipe), and the K loop must stay far below that."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import contiguous_strides
from .program import WGSL_TYPES, Program

TILE = 64
K_CHUNK = 16384          # inner-dimension elements per dispatch: K_CHUNK / 16 = 1024 tile steps

# the K-step tile loads and the output store, scalar (strided) or vec4 (contiguous, size % 4 == 0);
# ${FULL} is true when every tile is whole (then the bounds checks fold away)
LOAD_A = {False: """        for (var q = 0u; q < 4u; q++) {
            let e = lid + 256u * q;
            let m = e / 16u;
            let ka = e % 16u;
            var v = T(0);
            if (${FULL} || (row0 + m < M && k0 + ka < K)) { v = in0[aoff + i32(row0 + m) * sam + i32(k0 + ka) * sak]; }
            As[ka * 16u + m / 4u][m % 4u] = v;
        }""", True: """        {
            let m = lid / 4u;
            let kq = lid % 4u;
            var v = V(0);
            if (${FULL} || (row0 + m < M && k0 + kq * 4u < K)) { v = in0[(aoff + i32(row0 + m) * sam) / 4 + i32(k0 / 4u + kq)]; }
            As[(kq * 4u) * 16u + m / 4u][m % 4u] = v.x;
            As[(kq * 4u + 1u) * 16u + m / 4u][m % 4u] = v.y;
            As[(kq * 4u + 2u) * 16u + m / 4u][m % 4u] = v.z;
            As[(kq * 4u + 3u) * 16u + m / 4u][m % 4u] = v.w;
        }"""}
LOAD_B = {False: """        for (var q = 0u; q < 4u; q++) {
            let e = lid + 256u * q;
            let kb = e / 64u;
            let n = e % 64u;
            var w = T(0);
            if (${FULL} || (k0 + kb < K && col0 + n < N)) { w = in1[boff + i32(k0 + kb) * sbk + i32(col0 + n) * sbn]; }
            Bs[kb * 16u + n / 4u][n % 4u] = w;
        }""", True: """        {
            let kb = lid / 16u;
            let nq = lid % 16u;
            var w = V(0);
            if (${FULL} || (k0 + kb < K && col0 + nq * 4u < N)) { w = in1[(boff + i32(k0 + kb) * sbk) / 4 + i32(col0 / 4u + nq)]; }
            Bs[kb * 16u + nq] = w;
        }"""}
STORE = {False: """    for (var r = 0u; r < 4u; r++) {
        let gm = row0 + l.y * 4u + r;
        for (var c = 0u; c < 4u; c++) {
            let gn = col0 + l.x * 4u + c;
            if (${FULL} || (gm < M && gn < N)) {
                let at = ooff + gm * N + gn;
                if (later) { acc[r][c] += out[at]; }
                out[at] = acc[r][c];
            }
        }
    }""", True: """    for (var r = 0u; r < 4u; r++) {
        let gm = row0 + l.y * 4u + r;
        if (${FULL} || (gm < M && col0 + l.x * 4u < N)) {
            let at = (ooff + gm * N) / 4u + col0 / 4u + l.x;
            if (later) { acc[r] += out[at]; }
            out[at] = acc[r];
        }
    }"""}


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
    # vec4 global access: A contiguous along K, B and the output along N, that size a multiple of 4
    # (then every batch and row offset is a multiple of 4 too)
    va, vb, vo = sa[1] == 1 and k % 4 == 0, sb[1] == 1 and n % 4 == 0, n % 4 == 0
    full = m % TILE == 0 and n % TILE == 0 and k % 16 == 0     # whole tiles only: no bounds checks

    def build():
        vec = f"vec4<{t}>"
        code = {"LOAD_A": LOAD_A[va], "LOAD_B": LOAD_B[vb], "STORE": STORE[vo]}
        return Program(K.MATMUL, "matmul", inputs=[("in0", vec if va else t), ("in1", vec if vb else t)],
                       outputs=[("out", vec if vo else t)], wg=256,
                       uniforms=[("m", "u32", 1), ("n", "u32", 1), ("k", "u32", 1), ("k_begin", "u32", 1),
                                 ("sa", "i32", 2), ("sb", "i32", 2),
                                 ("batch", "u32", rank), ("abatch", "i32", rank), ("bbatch", "i32", rank)],
                       subs={"T": t, "BR": str(rank), "K_CHUNK": str(K_CHUNK),
                             "K_BEGIN": "ui(U_k_begin)" if chunked else "0u", "LATER": "k_begin > 0u" if chunked else "false",
                             **{name: text.replace("${FULL}", str(full).lower()) for name, text in code.items()}})
    chunked = k > K_CHUNK
    key, groups = ("matmul", t, rank, va, vb, vo, full, chunked), (-(-n // TILE), -(-m // TILE), nb)
    for k_begin in range(0, k, K_CHUNK):
        be.run(key, build, [a, b], [out], [m, n, k, k_begin, *sa, *sb, *batch, *astr, *bstr], groups)
    return out


KERNELS = {K.MATMUL: matmul}
