// Attention, flash style: a workgroup per (query batch n, BR query rows), a thread per query row.
// Keys and values pass through workgroup memory in tiles of U_bc rows; each thread keeps its query
// row (scaled), the running max m, the running sum l and the output accumulator in registers,
// rescaled once per tile (an online softmax): no [L, S] matrix is made. A dispatch covers key tiles
// [U_t0, U_t1); with t0 > 0 its state comes from what the previous dispatch left in out and lse
// (out normalised: acc = out, l = 1, m = lse), so long key sequences take several dispatches
// rather than a loop longer than a dispatch may run. Query n reads keys n / group and adds mask
// ((n / mask_div) % M) (MASK: that read, or 0.0 without a mask); causal: key j > query i is cut.
// A row that sees no key gets out 0 and lse -inf.
const BR: u32 = WG;
const ME: u32 = ${ME}u;                     // room in a thread's rows: at least E and Ev
const LOWEST: f32 = -3.4028234663852886e38;
var<workgroup> kv: array<f32, ${SHARED}>;    // the K tile [bc][E], then the V tile [bc][Ev]

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
    let live = i < L;
    let ic = min(i, L - 1u);
    let row = n * L + min(i, L - 1u);
    let kbase = (n / ui(U_group)) * S;
    let neg_inf = bitcast<f32>(ui(U_neg_inf));
    let causal = ui(U_causal) != 0u;
    var q: array<f32, ME>;
    var acc: array<f32, ME>;
    for (var e = 0u; e < E; e++) { q[e] = Q[row * E + e] * uf(U_scale); } // E <= ME times
    var m = LOWEST;
    var l = 0.0;
    let t0 = ui(U_t0);
    if (t0 > 0u && lse[row] > LOWEST) {
        m = lse[row];
        l = 1.0;
        for (var e = 0u; e < Ev; e++) { acc[e] = out[row * Ev + e]; } // Ev <= ME times
    } else {
        for (var e = 0u; e < Ev; e++) { acc[e] = 0.0; } // Ev <= ME times
    }
    var t1 = ui(U_t1);
    if (causal) { t1 = min(t1, (min(L, i0 + BR) + bc - 1u) / bc); }   // no later key is seen by these rows
    for (var t = t0; t < t1; t++) { // t1 - t0 times: attention.py's _spans keep an invocation's loops in budget
        let j0 = t * bc;
        let nj = min(bc, S - j0);
        workgroupBarrier();
        for (var x = lid; x < nj * E; x += WG) { kv[x] = K[(kbase + j0) * E + x]; } // < SHARED / WG times
        for (var x = lid; x < nj * Ev; x += WG) { kv[bc * E + x] = V[(kbase + j0) * Ev + x]; } // < SHARED / WG times
        workgroupBarrier();
        var sc: array<f32, 64>;
        var tmax = LOWEST;
        for (var jj = 0u; jj < nj; jj++) { // nj <= bc <= 64 times
            var d = 0.0;
            for (var e = 0u; e < E; e++) { d += q[e] * kv[jj * E + e]; } // E times
            d += mask_at(n, ic, j0 + jj);
            if (causal && j0 + jj > i) { d = neg_inf; }
            sc[jj] = d;
            tmax = max(tmax, d);
        }
        let mnew = max(m, tmax);
        let corr = exp(m - mnew);
        l *= corr;
        for (var e = 0u; e < Ev; e++) { acc[e] *= corr; } // Ev times
        for (var jj = 0u; jj < nj; jj++) { // nj <= bc <= 64 times
            let p = exp(sc[jj] - mnew);
            l += p;
            for (var e = 0u; e < Ev; e++) { acc[e] += p * kv[bc * E + jj * Ev + e]; } // Ev times
        }
        m = mnew;
    }
    if (live) {
        let inv = select(0.0, 1.0 / l, l > 0.0);
        for (var e = 0u; e < Ev; e++) { out[row * Ev + e] = acc[e] * inv; } // Ev times
        lse[row] = select(neg_inf, m + log(l), l > 0.0);
    }
}
