// AttentionGrad's dk and dv: a workgroup per (key batch nk, BK key rows), a thread per key row j;
// the queries of the group's batches (n = nk * group + h) pass through workgroup memory in tiles
// of U_bq rows (q, dout and each row's lse and D). For each query i:
// p = exp(s - lse_i), dv += p * dout_i, ds = p * (dout_i . v_j - D_i), dk += ds * q_i; then
// dk *= scale. A dispatch covers query tiles [U_t0, U_t1) of (group x query tiles), adding to
// what earlier dispatches wrote (t0 > 0).
const BK: u32 = WG;
const ME: u32 = ${ME}u;
var<workgroup> qs: array<f32, ${SHARED}>;    // q tile [bq][E], dout tile [bq][Ev], stats [bq][2]

fn mask_at(n: u32, i: u32, j: u32) -> f32 { return ${MASK}; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let L = ui(U_L);
    let S = ui(U_S);
    let E = ui(U_E);
    let Ev = ui(U_Ev);
    let bq = ui(U_bq);
    let group = ui(U_group);
    let ktiles = (S + BK - 1u) / BK;
    let qtiles = (L + bq - 1u) / bq;
    let g = flat_group(wid, nwg);
    let nk = g / ktiles;
    if (nk >= ui(U_NK)) { return; }
    let j0 = (g % ktiles) * BK;
    let j = j0 + lid;
    let jc = min(j, S - 1u);
    let krow = nk * S + jc;
    let causal = ui(U_causal) != 0u;
    let scale = uf(U_scale);
    var k: array<f32, ME>;
    var v: array<f32, ME>;
    var dk: array<f32, ME>;
    var dv: array<f32, ME>;
    for (var e = 0u; e < E; e++) { k[e] = K[krow * E + e] * scale; dk[e] = 0.0; } // E <= ME times
    for (var e = 0u; e < Ev; e++) { v[e] = V[krow * Ev + e]; dv[e] = 0.0; } // Ev <= ME times
    let qoff = bq * E;
    let soff = bq * (E + Ev);
    for (var t = ui(U_t0); t < ui(U_t1); t++) { // t1 - t0 times: attention.py's _spans keep it in budget
        let n = nk * group + t / qtiles;
        let i0 = (t % qtiles) * bq;
        let ni = min(bq, L - i0);
        if (causal && i0 + ni <= j0) { continue; }        // these queries see none of these keys
        workgroupBarrier();
        let base = n * L + i0;
        for (var x = lid; x < ni * E; x += WG) { qs[x] = Q[base * E + x]; } // < SHARED / WG times
        for (var x = lid; x < ni * Ev; x += WG) { qs[qoff + x] = dO[base * Ev + x]; } // < SHARED / WG times
        for (var x = lid; x < ni * 2u; x += WG) { qs[soff + x] = stats[base * 2u + x]; } // < SHARED / WG times
        workgroupBarrier();
        for (var ii = 0u; ii < ni; ii++) { // ni <= bq <= 64 times
            let i = i0 + ii;
            let lse = qs[soff + 2u * ii];
            if (lse <= -3.4028234663852886e38 || (causal && j > i)) { continue; }
            var s = 0.0;
            for (var e = 0u; e < E; e++) { s += qs[ii * E + e] * k[e]; } // E times
            let p = exp(s + mask_at(n, i, jc) - lse);
            var dp = 0.0;
            for (var e = 0u; e < Ev; e++) { // Ev times
                let d = qs[qoff + ii * Ev + e];
                dv[e] += p * d;
                dp += d * v[e];
            }
            let ds = p * (dp - qs[soff + 2u * ii + 1u]);
            for (var e = 0u; e < E; e++) { dk[e] += ds * qs[ii * E + e]; } // E times
        }
    }
    if (j < S) {
        let more = ui(U_t0) > 0u;
        for (var e = 0u; e < E; e++) {          // E times
            dK[krow * E + e] = select(0.0, dK[krow * E + e], more) + dk[e] * scale;
        }
        for (var e = 0u; e < Ev; e++) { dV[krow * Ev + e] = select(0.0, dV[krow * Ev + e], more) + dv[e]; } // Ev times
    }
}
