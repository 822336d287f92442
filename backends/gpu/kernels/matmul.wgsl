// Batched matmul out[z] = A[z] (M x K) @ B[z] (K x N). A and B are read through strides, so
// transposed operands need no copy and broadcast batch dims have stride 0. Each 16x16
// workgroup computes a 64x64 tile; each thread a 4x4 register block, reading vec4 columns
// of the K-step tiles staged in workgroup memory. LOAD_A, LOAD_B and STORE (linalg.py) use
// vec4 global accesses where the layout allows (contiguous along K for A, along N for B and
// the output, with K or N a multiple of 4), scalar strided ones elsewhere. Results are stored
// through put / put_vec (linalg_epilogue.py: the identity or a compiled plan's fused epilogue).
// One dispatch covers K from k_begin to at most k_begin + K_CHUNK (linalg.py), adding to the output
// when k_begin > 0. Loop bounds per invocation: the batch rank (batch_offsets), K_CHUNK / 16 = 1024 K steps of
// at most 4 + 4 + 16 inner iterations (when not unrolled), the 4 x 4 store: under 26000 in all.
alias T = ${T};
alias V = vec4<${T}>;
var<workgroup> As: array<V, 256>;    // [16 k][16 groups of 4 rows]
var<workgroup> Bs: array<V, 256>;    // [16 k][16 groups of 4 cols]
${PUT}
${BATCH_OFFSETS}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let M = ui(U_m);
    let N = ui(U_n);
    let K = ui(U_k);
    let k_begin = ${K_BEGIN};                    // 0u when K <= K_CHUNK: one dispatch, as a plain matmul
    let k_end = min(K, k_begin + ${K_CHUNK}u);
    let later = ${LATER};
    let offsets = batch_offsets(wid.z);
    let aoff = offsets.x;
    let boff = offsets.y;
    let sam = ii(U_sa);
    let sak = ii(U_sa + 1u);
    let sbk = ii(U_sb);
    let sbn = ii(U_sb + 1u);
    let row0 = wid.y * 64u;
    let col0 = wid.x * 64u;
    var acc: array<V, 4>;
    for (var k0 = k_begin; k0 < k_end; k0 += 16u) {      // at most K_CHUNK / 16 times
${LOAD_A}
${LOAD_B}
        workgroupBarrier();
        for (var kk = 0u; kk < 16u; kk++) {
            let a = As[kk * 16u + l.y];
            let b = Bs[kk * 16u + l.x];
            acc[0] += a.x * b;
            acc[1] += a.y * b;
            acc[2] += a.z * b;
            acc[3] += a.w * b;
        }
        workgroupBarrier();
    }
    let ooff = wid.z * M * N;
${STORE}
}
