// torch.nonzero's compaction: each nonzero element of x writes its RANK coordinates (row-major order)
// into row prefix[i] - 1 of out, prefix being the inclusive prefix sum of the elements' 0/1 flags.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = flat_group(wid, nwg) * WG + lid;
    if (i >= ui(U_n)) { return; }
    if (!(${NONZERO})) { return; }
    let row = u32(prefix[i] - 1) * u32(${RANK});
    var rem = i;
    for (var d = ${RANK} - 1; d >= 0; d--) {
        let sz = ui(U_shape + u32(d));
        out[row + u32(d)] = i32(rem % sz);
        rem = rem / sz;
    }
}
