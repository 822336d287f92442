// Inclusive prefix sum along one axis, a thread per line (outer, inner) summing in order.
// Lines are at most SERIAL_SCAN long (reduce.py): the loop runs at most that many times; longer
// lines take the block scan (scan_block.wgsl, scan_add.wgsl).
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let line = flat_group(wid, nwg) * WG + lid;
    if (line >= ui(U_lines)) { return; }
    let n = ui(U_len);
    let inner = ui(U_inner);
    let base = (line / inner) * n * inner + line % inner;
    var acc = ${T}(0);
    for (var k = 0u; k < n; k++) {                   // at most SERIAL_SCAN (1024) times
        acc += in0[base + k * inner];
        out[base + k * inner] = acc;
    }
}
