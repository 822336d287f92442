"""MatMul, batched with broadcasting; transposed operands are read through strides, never copied;
vec4 global loads and stores where an operand is contiguous along a dimension that is a multiple of 4.
Two programs, chosen by the adapter (``PROGRAM_BY_ADAPTER``): on a hardware GPU the tiled one (64x64
per workgroup staged in workgroup memory, a 4x4 register block per thread, ``matmul.wgsl``); on a
software adapter (lavapipe, SwiftShader: invocations are the CPU's SIMD lanes, workgroup memory is
ordinary memory behind barriers) the register-blocked one with no workgroup memory (an 8x16 block per
invocation, ``matmul_block.wgsl``), 2-5x faster there on the MLP step's products (bench/RESULTS.md).
A long inner dimension runs as several dispatches of at most ``K_CHUNK`` each, every one after
the first adding to the output: some implementations stop a shader's loops after 65535
iterations (Mesa's lavapipe), and the K loop must stay far below that."""
from __future__ import annotations

from typing import NamedTuple

from webgrad import kernel_names as K
from webgrad.shapes import numel

from .elementwise import contiguous_strides
from .linalg_block import block_subs
from .linalg_epilogue import epilogue_strides, puts
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
            if (${FULL} || (gm < M && gn < N)) { put(ooff + gm * N + gn, wid.z, gm, gn, acc[r][c], later); }
        }
    }""", True: """    for (var r = 0u; r < 4u; r++) {
        let gm = row0 + l.y * 4u + r;
        if (${FULL} || (gm < M && col0 + l.x * 4u < N)) {
            put_vec((ooff + gm * N) / 4u + col0 / 4u + l.x, wid.z, gm, col0 + l.x * 4u, acc[r], later);
        }
    }"""}


def matmul(be, a, b, *, transpose_a=False, transpose_b=False):
    return product(be, a, b, transpose_a, transpose_b)


def product(be, a, b, transpose_a, transpose_b, epilogue=None):
    """``op(a) @ op(b)``, its results passed through ``epilogue`` (a ``linalg_epilogue.Epilogue``,
    or None: stored as they are); see the module's doc."""
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
    if out.size == 0:
        return out
    if k == 0 and epilogue is None:
        from .elementwise import fill
        return fill(be, shape=shape, value=0, dtype=a.dtype)
    if epilogue is not None and k > K_CHUNK:      # (fused.fusible_head keeps such products apart)
        raise ValueError(f"MatMul: an epilogue needs K <= {K_CHUNK} (one dispatch), got K = {k}")
    source, extra = ("", ()) if epilogue is None else epilogue
    p = Product(m, n, k, sa, sb, batch, WGSL_TYPES[a.dtype.name], source, len(extra))
    key, build, groups = PROGRAMS[PROGRAM_BY_ADAPTER[be.software]](p)
    uniforms = [m, n, k, 0, *sa, *sb, *batch, *astr, *bstr]
    uniforms += [v for x in extra for v in epilogue_strides(x.shape, shape)]
    for k_begin in range(0, max(k, 1), K_CHUNK):       # K = 0 with an epilogue: one pass over zeros
        uniforms[3] = k_begin
        be.run(key, build, [a, b, *extra], [out], uniforms, groups)
    return out


class Product(NamedTuple):
    """One MatMul's sizes, operand strides ((row, k) of A, (k, column) of B), batch and WGSL type."""
    m: int
    n: int
    k: int
    sa: tuple
    sb: tuple
    batch: tuple
    t: str
    epilogue: str = ""      # the fused chain's WGSL (linalg_epilogue), or "" to store the product as it is
    n_extra: int = 0        # the epilogue's arrays

    def inputs(self, vec_a: bool, vec_b: bool) -> list:
        """The programs' input bindings: A and B (vec4 or scalar), then the epilogue's arrays."""
        vec = f"vec4<{self.t}>"
        return ([("in0", vec if vec_a else self.t), ("in1", vec if vec_b else self.t)]
                + [(f"ein{i}", self.t) for i in range(self.n_extra)])

    @property
    def chunked(self) -> bool:
        return self.k > K_CHUNK

    @property
    def batches(self) -> int:
        return numel(self.batch)


def _uniforms(p: Product) -> list:
    rank = len(p.batch)
    return [("m", "u32", 1), ("n", "u32", 1), ("k", "u32", 1), ("k_begin", "u32", 1), ("sa", "i32", 2),
            ("sb", "i32", 2), ("batch", "u32", rank), ("abatch", "i32", rank), ("bbatch", "i32", rank),
            *[(f"e{i}", "i32", 3) for i in range(p.n_extra)]]


def batch_offsets(rank: int) -> str:
    """The WGSL of ``batch_offsets(z)``: A's and B's element offsets of batch ``z`` (the flat index over
    the ``rank`` broadcast batch dims; a dim an operand broadcasts has stride 0). Loop bound: ``rank``.

    >>> batch_offsets(2).splitlines()[0]
    'fn batch_offsets(z: u32) -> vec2<i32> {'
    """
    return f"""fn batch_offsets(z: u32) -> vec2<i32> {{
    var rem = z;
    var off = vec2<i32>(0, 0);
    for (var d = {rank - 1}; d >= 0; d--) {{
        let sz = ui(U_batch + u32(d));
        let c = i32(rem % sz);
        rem = rem / sz;
        off += c * vec2<i32>(ii(U_abatch + u32(d)), ii(U_bbatch + u32(d)));
    }}
    return off;
}}"""


def _common_subs(p: Product, vec_out: bool) -> dict:
    return {"T": p.t, "K_CHUNK": str(K_CHUNK), "PUT": puts(vec_out, p.n_extra, p.epilogue),
            "BATCH_OFFSETS": batch_offsets(len(p.batch)),
            "K_BEGIN": "ui(U_k_begin)" if p.chunked else "0u", "LATER": "k_begin > 0u" if p.chunked else "false"}


def tiled(p: Product):
    """(pipeline key, build, workgroups) of the tiled program (``matmul.wgsl``)."""
    # vec4 global access: A contiguous along K, B and the output along N, that size a multiple of 4
    # (then every batch and row offset is a multiple of 4 too)
    va, vb, vo = p.sa[1] == 1 and p.k % 4 == 0, p.sb[1] == 1 and p.n % 4 == 0, p.n % 4 == 0
    full = p.m % TILE == 0 and p.n % TILE == 0 and p.k % 16 == 0     # whole tiles only: no bounds checks
    vec = f"vec4<{p.t}>"

    def build():
        code = {"LOAD_A": LOAD_A[va], "LOAD_B": LOAD_B[vb], "STORE": STORE[vo]}
        return Program(K.MATMUL, "matmul", inputs=p.inputs(va, vb),
                       outputs=[("out", vec if vo else p.t)], wg=256, uniforms=_uniforms(p),
                       subs={**_common_subs(p, vo),
                             **{name: text.replace("${FULL}", str(full).lower()) for name, text in code.items()}})
    key = ("matmul", p.t, len(p.batch), va, vb, vo, full, p.chunked, p.epilogue, p.n_extra)
    return key, build, (-(-p.n // TILE), -(-p.m // TILE), p.batches)


def block_shape(m: int, n: int) -> tuple:
    """(rows, columns) of the register block for an [m, n] output: 8 x 16, less along a dimension of
    at most 4 or 8 (less computed past the edge). 8 x 16 measured best on lavapipe and within noise of
    16 x 16 on SwiftShader (bench/RESULTS.md): loads per multiply-add fall as the block grows, until
    the accumulators no longer fit the CPU's registers.

    >>> block_shape(128, 784), block_shape(3, 10), block_shape(10, 6)
    ((8, 16), (4, 16), (8, 8))
    """
    return 4 if m <= 4 else 8, 4 if n <= 4 else 8 if n <= 8 else 16


def blocked(p: Product):
    """(pipeline key, build, workgroups) of the register-blocked program (``matmul_block.wgsl``)."""
    rm, rn = block_shape(p.m, p.n)
    amode, bmode = operand_mode(p.sa, p.k, p.m, "m"), operand_mode(p.sb[::-1], p.k, p.n, "n")
    vo = p.n % 4 == 0
    vec = f"vec4<{p.t}>"

    def build():
        return Program(K.MATMUL, "matmul_block", inputs=p.inputs(amode != "s", bmode != "s"),
                       outputs=[("out", vec if vo else p.t)], wg=64, uniforms=_uniforms(p),
                       subs={**_common_subs(p, vo), **block_subs(rm, rn, amode, bmode, vo)})
    key = ("matmul_block", p.t, len(p.batch), rm, rn, amode, bmode, vo, p.chunked, p.epilogue, p.n_extra)
    return key, build, (-(-(-(-p.m // rm) * -(-p.n // rn)) // 64), 1, p.batches)


def operand_mode(strides, k: int, size: int, along: str) -> str:
    """How the block program reads an operand whose (output dimension, K) strides are ``strides``:
    ``"k"`` vec4 along a contiguous K, ``along`` (``"m"``/``"n"``) vec4 along a contiguous output
    dimension, ``"s"`` scalar; vec4 needs that dimension's size a multiple of 4.

    >>> operand_mode((784, 1), 784, 128, "m"), operand_mode((1, 128), 10, 128, "m"), operand_mode((1, 10), 3, 10, "n")
    ('k', 'm', 's')
    """
    if strides[1] == 1 and k % 4 == 0:
        return "k"
    return along if strides[0] == 1 and size % 4 == 0 else "s"


PROGRAMS = {"tiled": tiled, "blocked": blocked}
# the program for a hardware GPU (False) and a software adapter (True): see the module's docstring
PROGRAM_BY_ADAPTER = {False: "tiled", True: "blocked"}

KERNELS = {K.MATMUL: matmul}
