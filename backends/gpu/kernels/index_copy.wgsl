// IndexCopy's second pass, a thread per output element o = (outer, r, inner) around the axis: the
// element of the source slice that claimed slice r, or x's own element where no index entry did.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let o = flat_group(wid, nwg) * WG + lid;
    if (o >= ui(U_total)) { return; }
    let inner = ui(U_inner);
    let n = ui(U_n);
    let w = claims[(o / inner) % n];
    if (w < 0) {
        out[o] = x[o];
    } else {
        out[o] = src[((o / (inner * n)) * ui(U_m) + u32(w)) * inner + o % inner];
    }
}
