// Geqrf, step k (first half): per matrix, LAPACK's dlarfg on column k from the diagonal down: alpha = r[k, k],
// xnorm = |r[k+1:, k]|; no reflection (tau = 0) when xnorm = 0, else beta = -sign(alpha) sqrt(alpha^2 + xnorm^2),
// tau = (beta - alpha) / beta, the vector r[k+1:, k] / (alpha - beta) stored below the diagonal, and r[k, k] = beta.
// One invocation per matrix; its loops run 2m times.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let b = flat_group(wid, nwg) * WG + lid;
    if (b >= ui(U_count)) { return; }
    let m = ui(U_m);
    let n = ui(U_n);
    let k = ui(U_k);
    let base = b * m * n;
    let alpha = r[base + k * n + k];
    var ss = 0.0;
    for (var i = k + 1u; i < m; i++) {   // at most m times
        let x = r[base + i * n + k];
        ss = ss + x * x;
    }
    if (ss == 0.0) {
        tau[b * ui(U_kmax) + k] = 0.0;
        return;
    }
    let beta = select(1.0, -1.0, alpha >= 0.0) * sqrt(alpha * alpha + ss);
    tau[b * ui(U_kmax) + k] = (beta - alpha) / beta;
    let scale = 1.0 / (alpha - beta);
    for (var i = k + 1u; i < m; i++) {   // at most m times
        r[base + i * n + k] = r[base + i * n + k] * scale;
    }
    r[base + k * n + k] = beta;
}
