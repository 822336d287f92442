// LuFactor, step k (first half): per matrix, the first row i >= k of largest |lu[i, k]| becomes the
// pivot (LAPACK's choice), rows k and i are swapped (in lu and perm), and the column below the pivot
// is divided by it (left as it is when the pivot is 0; info keeps the first such k, 1-based).
// One invocation per matrix; its loops run about 3n times (n far below lavapipe's 65,535 trips).
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let m = flat_group(wid, nwg) * WG + lid;
    if (m >= ui(U_count)) { return; }
    let n = ui(U_n);
    let k = ui(U_k);
    let base = m * n * n;
    var p = k;
    var best = abs(lu[base + k * n + k]);
    for (var i = k + 1u; i < n; i++) {   // at most n times
        let v = abs(lu[base + i * n + k]);
        if (v > best) { best = v; p = i; }
    }
    pivots[m * n + k] = i32(p + 1u);
    if (p != k) {
        for (var j = 0u; j < n; j++) {   // at most n times
            let t = lu[base + k * n + j];
            lu[base + k * n + j] = lu[base + p * n + j];
            lu[base + p * n + j] = t;
        }
        let t = perm[m * n + k];
        perm[m * n + k] = perm[m * n + p];
        perm[m * n + p] = t;
    }
    let d = lu[base + k * n + k];
    if (d == 0.0) {
        if (info[m] == 0) { info[m] = i32(k + 1u); }
        return;
    }
    for (var i = k + 1u; i < n; i++) {   // at most n times
        lu[base + i * n + k] = lu[base + i * n + k] / d;
    }
}
