// HouseholderProduct's start: each matrix of q the identity's first n columns. One invocation per element.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    if (e >= ui(U_total)) { return; }
    let n = ui(U_n);
    let at = e % (ui(U_m) * n);
    q[e] = select(0.0, 1.0, at / n == at % n);
}
