// Batched matmul out[z] = A[z] (M x K) @ B[z] (K x N). A and B are read through strides, so
// transposed operands need no copy and broadcast batch dims have stride 0. Each 16x16
// workgroup computes a 64x64 tile; each thread a 4x4 register block, reading vec4 columns
// of the K-step tiles staged in workgroup memory.
alias T = ${T};
alias V = vec4<${T}>;
var<workgroup> As: array<V, 256>;    // [16 k][16 groups of 4 rows]
var<workgroup> Bs: array<V, 256>;    // [16 k][16 groups of 4 cols]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let M = ui(U_m);
    let N = ui(U_n);
    let K = ui(U_k);
    var rem = wid.z;
    var aoff = 0;
    var boff = 0;
    for (var d = ${BR} - 1; d >= 0; d--) {
        let sz = ui(U_batch + u32(d));
        let c = i32(rem % sz);
        rem = rem / sz;
        aoff += c * ii(U_abatch + u32(d));
        boff += c * ii(U_bbatch + u32(d));
    }
    let sam = ii(U_sa);
    let sak = ii(U_sa + 1u);
    let sbk = ii(U_sb);
    let sbn = ii(U_sb + 1u);
    let row0 = wid.y * 64u;
    let col0 = wid.x * 64u;
    var acc: array<V, 4>;
    for (var k0 = 0u; k0 < K; k0 += 16u) {
        for (var q = 0u; q < 4u; q++) {
            let e = lid + 256u * q;
            let m = e / 16u;
            let ka = e % 16u;
            var v = T(0);
            if (row0 + m < M && k0 + ka < K) {
                v = in0[aoff + i32(row0 + m) * sam + i32(k0 + ka) * sak];
            }
            As[ka * 16u + m / 4u][m % 4u] = v;
            let kb = e / 64u;
            let n = e % 64u;
            var w = T(0);
            if (k0 + kb < K && col0 + n < N) {
                w = in1[boff + i32(k0 + kb) * sbk + i32(col0 + n) * sbn];
            }
            Bs[kb * 16u + n / 4u][n % 4u] = w;
        }
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
    for (var r = 0u; r < 4u; r++) {
        let gm = row0 + l.y * 4u + r;
        for (var c = 0u; c < 4u; c++) {
            let gn = col0 + l.x * 4u + c;
            if (gm < M && gn < N) { out[ooff + gm * N + gn] = acc[r][c]; }
        }
    }
}
