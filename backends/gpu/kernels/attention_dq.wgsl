// AttentionGrad's dq, as attention.wgsl runs: a workgroup per (query batch n, BR query rows), a
// thread per query row, key and value tiles in workgroup memory. For each key j:
// p = exp(s - lse), ds = p * (dout . v_j - D), dq += ds * k_j; then dq *= scale. A dispatch covers
// key tiles [U_t0, U_t1), adding to what earlier dispatches wrote (t0 > 0).
const BR: u32 = WG;
const ME: u32 = ${ME}u;
var<workgroup> kv: array<f32, ${SHARED}>;

fn mask_at(n: u32, i: u32, j: u32) -> f32 { return ${MASK}; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let L = ui(U_L);
    let S = ui(U_S);
    let E = ui(U_E);
    let Ev = ui(U_Ev);
    let bc = ui(U_bc);
    let qtiles = (L + BR - 1u) / BR;
    let g = flat_group(wid, nwg);
    let n = g / qtiles;
    if (n >= ui(U_N)) { return; }
    let i0 = (g % qtiles) * BR;
    let i = i0 + lid;
    let ic = min(i, L - 1u);
    let row = n * L + ic;
    let kbase = (n / ui(U_group)) * S;
    let causal = ui(U_causal) != 0u;
    let scale = uf(U_scale);
    let lse = stats[2u * row];
    let D = stats[2u * row + 1u];
    let seen = lse > -3.4028234663852886e38;       // lse -inf: the row saw no key, its gradient is 0
    var q: array<f32, ME>;
    var dout: array<f32, ME>;
    var dq: array<f32, ME>;
    for (var e = 0u; e < E; e++) { q[e] = Q[row * E + e] * scale; dq[e] = 0.0; } // E <= ME times
    for (var e = 0u; e < Ev; e++) { dout[e] = dO[row * Ev + e]; } // Ev <= ME times
    var t1 = ui(U_t1);
    if (causal) { t1 = min(t1, (min(L, i0 + BR) + bc - 1u) / bc); }
    for (var t = ui(U_t0); t < t1; t++) { // t1 - t0 times: attention.py's _spans keep an invocation's loops in budget
        let j0 = t * bc;
        let nj = min(bc, S - j0);
        workgroupBarrier();
        for (var x = lid; x < nj * E; x += WG) { kv[x] = K[(kbase + j0) * E + x]; } // < SHARED / WG times
        for (var x = lid; x < nj * Ev; x += WG) { kv[bc * E + x] = V[(kbase + j0) * Ev + x]; } // < SHARED / WG times
        workgroupBarrier();
        for (var jj = 0u; jj < nj; jj++) { // nj <= bc <= 64 times
            if (!seen || (causal && j0 + jj > i)) { continue; }
            var s = 0.0;
            for (var e = 0u; e < E; e++) { s += q[e] * kv[jj * E + e]; } // E times
            let p = exp(s + mask_at(n, ic, j0 + jj) - lse);
            var dp = 0.0;
            for (var e = 0u; e < Ev; e++) { dp += dout[e] * kv[bc * E + jj * Ev + e]; } // Ev times
            let ds = p * (dp - D);
            for (var e = 0u; e < E; e++) { dq[e] += ds * kv[jj * E + e]; } // E times
        }
    }
    if (i < L) {
        let more = ui(U_t0) > 0u;
        for (var e = 0u; e < E; e++) { // E times
            dQ[row * E + e] = select(0.0, dQ[row * E + e], more) + dq[e] * scale;
        }
    }
}
