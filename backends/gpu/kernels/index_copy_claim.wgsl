// IndexCopy's first pass, a thread per index entry j: the slice index[j] is claimed by the greatest
// such j (atomicMax), so the last write wins where indices repeat. An index outside [0, n) is
// refused: reported through bad_index (the next readback raises) and claims nothing.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let j = flat_group(wid, nwg) * WG + lid;
    if (j >= ui(U_m)) { return; }
    let r = idx[j];
    if (r < 0 || r >= ii(U_n)) {
        bad_index(r);
        return;
    }
    atomicMax(&claims[r], i32(j));
}
