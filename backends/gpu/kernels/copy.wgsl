// Strided copy: element i of the iteration shape goes from in0[src offset + c . src strides]
// to out[dst offset + c . dst strides] (concat into a slab, pad into an interior).
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = flat_group(wid, nwg) * WG + lid;
    if (i >= ui(U_n)) { return; }
    var rem = i;
    var src = ii(U_so);
    var dst = ii(U_do);
    for (var d = ${RANK} - 1; d >= 0; d--) {
        let sz = ui(U_shape + u32(d));
        let c = i32(rem % sz);
        rem = rem / sz;
        src += c * ii(U_ss + u32(d));
        dst += c * ii(U_ds + u32(d));
    }
    out[dst] = in0[src];
}
