// Block scan, the last pass: element k of a line gets the scanned total of the blocks before its
// own (sums[outer, k / BLOCK - 1, inner]) added. A thread per element; no loop.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    if (e >= ui(U_total)) { return; }
    let n = ui(U_len);
    let inner = ui(U_inner);
    let i = e % inner;
    let k = (e / inner) % n;
    let o = e / (inner * n);
    let b = k / ${BLOCK}u;
    if (b > 0u) {
        out[e] += sums[(o * ui(U_blocks) + b - 1u) * inner + i];
    }
}
