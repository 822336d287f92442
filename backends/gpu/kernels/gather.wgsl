// torch.gather: out[c] = x[c with dim AXIS replaced by index[c]], a thread per output element.
// An index outside [0, dim) is refused: reported through bad_index (the next readback raises)
// and 0 written, so no thread reads outside the input.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = flat_group(wid, nwg) * WG + lid;
    if (i >= ui(U_n)) { return; }
    let axis = ii(U_axis);
    var rem = i;
    var src = 0;
    for (var d = ${RANK} - 1; d >= 0; d--) {
        let sz = ui(U_shape + u32(d));
        var c = i32(rem % sz);
        rem = rem / sz;
        if (d == axis) {
            c = idx[i];
            if (c < 0 || c >= ii(U_dim)) {
                bad_index(c);
                out[i] = ${T}();
                return;
            }
        }
        src += c * ii(U_xs + u32(d));
    }
    out[i] = x[src];
}
