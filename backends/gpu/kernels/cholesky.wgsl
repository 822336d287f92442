// Cholesky, column j: per matrix and row i >= j, d = a[j, j] - sum over k < j of l[j, k]^2 (each invocation
// computes it), then l[j, j] = sqrt(d) (info takes j + 1 when d is not positive) or, below the diagonal,
// l[i, j] = (a[i, j] - sum over k < j of l[i, k] l[j, k]) / sqrt(d). The columns before j are done (earlier
// dispatches); the loops run 2j times at most.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    let n = ui(U_n);
    let j = ui(U_j);
    let rows = n - j;
    if (e >= ui(U_count) * rows) { return; }
    let m = e / rows;
    let i = j + e % rows;
    let base = m * n * n;
    var d = a[base + j * n + j];
    for (var k = 0u; k < j; k++) {   // at most n times
        d = d - l[base + j * n + k] * l[base + j * n + k];
    }
    if (i == j) {
        l[base + j * n + j] = sqrt(d);
        if (!(d > 0.0) && info[m] == 0) { info[m] = i32(j + 1u); }
        return;
    }
    var s = a[base + i * n + j];
    for (var k = 0u; k < j; k++) {   // at most n times
        s = s - l[base + i * n + k] * l[base + j * n + k];
    }
    l[base + i * n + j] = s / sqrt(d);
}
