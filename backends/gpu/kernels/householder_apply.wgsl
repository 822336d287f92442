// One Householder reflector H = I - tau v v^T (v = [1, x[k+1:, k]], from the packed matrix x) applied from the
// left to columns of y (rows k and below): y[k:, j] -= tau v (v^T y[k:, j]). Geqrf applies reflector k to the
// columns j > k of the matrix it reduces (x = y = r); HouseholderProduct to every column of q. One invocation
// per (matrix, column); its loops run 2m times.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    let first = ui(U_first);
    let cols = ui(U_ycols) - first;
    if (e >= ui(U_count) * cols) { return; }
    let b = e / cols;
    let j = first + e % cols;
    let m = ui(U_m);
    let k = ui(U_k);
    let xn = ui(U_xcols);
    let yn = ui(U_ycols);
    let xb = b * m * xn;
    let yb = b * m * yn;
    let t = ${TAU}[b * ui(U_kmax) + k];
    var w = ${Y}[yb + k * yn + j];
    for (var i = k + 1u; i < m; i++) {   // at most m times
        w = w + ${X}[xb + i * xn + k] * ${Y}[yb + i * yn + j];
    }
    w = w * t;
    ${Y}[yb + k * yn + j] = ${Y}[yb + k * yn + j] - w;
    for (var i = k + 1u; i < m; i++) {   // at most m times
        ${Y}[yb + i * yn + j] = ${Y}[yb + i * yn + j] - w * ${X}[xb + i * xn + k];
    }
}
