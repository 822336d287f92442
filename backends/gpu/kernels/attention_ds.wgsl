// AttentionGrad's score gradient (for a mask that needs one), a thread per (n, i, j):
// ds = p * (dout_i . v_j - D_i), p = exp(s - lse_i) (0 for a cut or unseen score).
fn mask_at(n: u32, i: u32, j: u32) -> f32 { return ${MASK}; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let L = ui(U_L);
    let S = ui(U_S);
    let E = ui(U_E);
    let Ev = ui(U_Ev);
    let x = flat_group(wid, nwg) * WG + lid;
    if (x >= ui(U_N) * L * S) { return; }
    let j = x % S;
    let i = (x / S) % L;
    let n = x / (S * L);
    let row = n * L + i;
    let krow = (n / ui(U_group)) * S + j;
    let lse = stats[2u * row];
    if (lse <= -3.4028234663852886e38 || (ui(U_causal) != 0u && j > i)) {
        ds[x] = 0.0;
        return;
    }
    var s = 0.0;
    for (var e = 0u; e < E; e++) { s += Q[row * E + e] * K[krow * E + e]; } // E < SHARED times
    let p = exp(s * uf(U_scale) + mask_at(n, i, j) - lse);
    var dp = 0.0;
    for (var e = 0u; e < Ev; e++) { dp += dO[row * Ev + e] * V[krow * Ev + e]; } // Ev < SHARED times
    ds[x] = p * (dp - stats[2u * row + 1u]);
}
