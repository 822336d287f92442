// AttentionGrad's first step, a thread per query row: stats = (lse, D) with
// D = sum(dout * out) - dlse (the term every score's gradient subtracts).
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = flat_group(wid, nwg) * WG + lid;
    if (row >= ui(U_rows)) { return; }
    let Ev = ui(U_Ev);
    var d = 0.0;
    for (var e = 0u; e < Ev; e++) { d += dout[row * Ev + e] * out[row * Ev + e]; } // Ev < SHARED times
    stats[2u * row] = lse[row];
    stats[2u * row + 1u] = d - dlse[row];
}
