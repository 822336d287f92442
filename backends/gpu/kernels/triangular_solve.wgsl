// TriangularSolve, row i (forward order for a lower triangle, backward for an upper one): per matrix and
// column c of b, x[i, c] = (b[i, c] - sum over the solved rows j of a[i, j] x[j, c]) / a[i, i] (not divided
// when unitriangular). One invocation per (matrix, column); its loop runs at most n times.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    let n = ui(U_n);
    let cols = ui(U_cols);
    if (e >= ui(U_count) * cols) { return; }
    let m = e / cols;
    let c = e % cols;
    let i = ui(U_row);
    let arow = m * n * n + i * n;
    var s = b[(m * n + i) * cols + c];
    for (var j = ui(U_lo); j < ui(U_hi); j++) {   // at most n times
        s = s - a[arow + j] * x[(m * n + j) * cols + c];
    }
    x[(m * n + i) * cols + c] = select(s / a[arow + i], s, ui(U_unit) == 1u);
}
