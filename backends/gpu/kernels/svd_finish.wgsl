// Svd, the end: per matrix and column j of the rotated w, its norm s_j goes to its rank among the matrix's
// norms (larger first; equal ones in column order), with w[:, j] / s_j (0 where s_j is 0) as column rank of
// `left` and v[:, j] as row rank of `right`: U and Vh of a tall matrix. For a wide matrix (its transpose
// factored, ${FLIP}) they are written transposed: `left` is then Vh (rows), `right` U (columns).
// One invocation per (matrix, column); its loops run n + m + n times.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    let n = ui(U_n);
    if (e >= ui(U_count) * n) { return; }
    let b = e / n;
    let j = e % n;
    let m = ui(U_m);
    let sj = norms[e];
    var rank = 0u;
    for (var c = 0u; c < n; c++) {   // at most n (or m) times
        let sc = norms[b * n + c];
        if (sc > sj || (sc == sj && c < j)) { rank = rank + 1u; }
    }
    s[b * n + rank] = sj;
    let inv = select(0.0, 1.0 / sj, sj > 0.0);
    let wb = b * m * n;
    for (var k = 0u; k < m; k++) {   // at most n (or m) times
        let x = w[wb + k * n + j] * inv;
        if (${FLIP}) { left[wb + rank * m + k] = x; } else { left[wb + k * n + rank] = x; }
    }
    let vb = b * n * n;
    for (var k = 0u; k < n; k++) {   // at most n (or m) times
        let x = v[vb + k * n + j];
        if (${FLIP}) { right[vb + k * n + rank] = x; } else { right[vb + rank * n + k] = x; }
    }
}
