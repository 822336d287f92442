// Svd: the norm of each column of the rotated w, the singular values before sorting. One invocation per
// (matrix, column); its loop runs m times.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    let n = ui(U_n);
    if (e >= ui(U_count) * n) { return; }
    let b = e / n;
    let j = e % n;
    let m = ui(U_m);
    var ss = 0.0;
    for (var k = 0u; k < m; k++) { ss = ss + w[b * m * n + k * n + j] * w[b * m * n + k * n + j]; }   // m times
    norms[e] = sqrt(ss);
}
