// LuFactor, step 0: lu = a, perm = 0..n-1 in each matrix's rows, info = 0. One invocation per element of a.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    let n = ui(U_n);
    if (e >= ui(U_total)) { return; }
    lu[e] = a[e];
    if (e % n == 0u) {
        let row = e / n;
        perm[row] = i32(row % n);
    }
    if (e % (n * n) == 0u) {
        info[e / (n * n)] = 0;
    }
}
