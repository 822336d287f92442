// torch.scatter_add, deterministic: a thread per output element walks the index entries that
// can tgt it (same coordinates off the axis) in order, adding src where the index matches.
// No atomics, so results are reproducible and summed in the order the cpu backend uses.
// An index outside [0, dim) is refused: reported through bad_index (the next readback raises)
// and nothing added for it.
// One dispatch walks index entries t_begin .. t_begin + T_CHUNK at most (indexing.py), adding to
// what the dispatch before wrote when t_begin > 0: the walk loop runs at most T_CHUNK times (and
// the rank loop RANK), far below the 65535 iterations after which some implementations stop a
// shader's loops (Mesa's lavapipe).
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let o = flat_group(wid, nwg) * WG + lid;
    if (o >= ui(U_n)) { return; }
    let axis = ii(U_axis);
    var rem = o;
    var ioff = 0;
    var soff = 0;
    var tgt = 0;
    var inside = true;
    for (var d = ${RANK} - 1; d >= 0; d--) {
        let sz = ui(U_xshape + u32(d));
        let c = i32(rem % sz);
        rem = rem / sz;
        if (d == axis) {
            tgt = c;
        } else {
            inside = inside && c < ii(U_ishape + u32(d));
            ioff += c * ii(U_is + u32(d));
            soff += c * ii(U_ss + u32(d));
        }
    }
    let t_begin = ii(U_t_begin);
    var acc = x[o];
    if (t_begin > 0) { acc = out[o]; }
    if (inside) {
        let dim = ii(U_xshape + u32(axis));
        let cnt = ii(U_ishape + u32(axis));
        let istep = ii(U_is + u32(axis));
        let sstep = ii(U_ss + u32(axis));
        for (var t = t_begin; t < min(cnt, t_begin + ${T_CHUNK}); t++) {      // at most T_CHUNK times
            let j = idx[ioff + t * istep];
            if (j == tgt) {
                acc += src[soff + t * sstep];
            } else if (j < 0 || j >= dim) {
                bad_index(j);
            }
        }
    }
    out[o] = acc;
}
