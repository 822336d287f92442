// Block scan, the first pass of a long inclusive prefix sum along one axis: workgroup w scans
// block b = w % blocks (WG consecutive elements) of line w / blocks (a line is (outer, inner))
// in shared memory, writing the block's prefix sums to out and its total to
// totals[outer, b, inner]. reduce.py scans the totals and adds them back (scan_add.wgsl).
// The one loop runs log2(WG) times.
alias T = ${T};
var<workgroup> sh: array<T, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let blocks = ui(U_blocks);
    let w = flat_group(wid, nwg);
    if (w >= ui(U_lines) * blocks) { return; }
    let n = ui(U_len);
    let inner = ui(U_inner);
    let line = w / blocks;
    let b = w % blocks;
    let o = line / inner;
    let i = line % inner;
    let k = b * WG + lid;
    let at = (o * n + k) * inner + i;
    var v = T(0);
    if (k < n) { v = in0[at]; }
    sh[lid] = v;
    workgroupBarrier();
    for (var s = 1u; s < WG; s = s << 1u) {              // Hillis-Steele: log2(WG) times
        if (lid >= s) { v = sh[lid - s] + v; }
        workgroupBarrier();
        sh[lid] = v;
        workgroupBarrier();
    }
    if (k < n) { out[at] = v; }
    if (lid == WG - 1u) { totals[(o * blocks + b) * inner + i] = v; }
}
