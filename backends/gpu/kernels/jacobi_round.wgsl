// Svd (one-sided Jacobi, Hestenes), one round of a sweep: the columns of each matrix w (m x n, m >= n) are
// paired by the circle method (round r pairs r + i with r - i mod N - 1, and r with N - 1; N = n rounded up
// to even, a column >= n being no column), and each pair (p, q) is rotated to be orthogonal, in w and in the
// accumulated v (n x n). One invocation per (matrix, pair); its loops run 2m + n times.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    let half_n = ui(U_half);
    if (e >= ui(U_count) * half_n) { return; }
    let b = e / half_n;
    let i = e % half_n;
    let m = ui(U_m);
    let n = ui(U_n);
    let last = 2u * half_n - 1u;
    let r = ui(U_round);
    var p = r;
    var q = last;
    if (i > 0u) {
        p = (r + i) % last;
        q = (r + last - i) % last;
    }
    if (p >= n || q >= n) { return; }
    let wb = b * m * n;
    var alpha = 0.0;
    var beta = 0.0;
    var gamma = 0.0;
    for (var k = 0u; k < m; k++) {   // at most m (or n) times
        let x = w[wb + k * n + p];
        let y = w[wb + k * n + q];
        alpha = alpha + x * x;
        beta = beta + y * y;
        gamma = gamma + x * y;
    }
    if (abs(gamma) <= 1e-30 || abs(gamma) <= 1.2e-7 * sqrt(alpha * beta)) { return; }
    let zeta = (beta - alpha) / (2.0 * gamma);
    let t = select(-1.0, 1.0, zeta >= 0.0) / (abs(zeta) + sqrt(1.0 + zeta * zeta));
    let c = 1.0 / sqrt(1.0 + t * t);
    let s = c * t;
    for (var k = 0u; k < m; k++) {   // at most m (or n) times
        let x = w[wb + k * n + p];
        let y = w[wb + k * n + q];
        w[wb + k * n + p] = c * x - s * y;
        w[wb + k * n + q] = s * x + c * y;
    }
    let vb = b * n * n;
    for (var k = 0u; k < n; k++) {   // at most m (or n) times
        let x = v[vb + k * n + p];
        let y = v[vb + k * n + q];
        v[vb + k * n + p] = c * x - s * y;
        v[vb + k * n + q] = s * x + c * y;
    }
}
