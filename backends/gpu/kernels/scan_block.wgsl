// Block scan, the first pass of a long inclusive prefix sum along one axis: workgroup w scans
// block b = w % blocks (BLOCK = WG * PER consecutive elements) of line w / blocks (a line is
// (outer, inner)), writing the block's prefix sums to out and its total to totals[outer, b, inner];
// reduce.py scans the totals and adds them back (scan_add.wgsl). The block is staged in shared
// memory (coalesced reads and writes); each thread sums a run of PER elements in order, the runs'
// totals are scanned (Hillis-Steele), and each run gets the total of the runs before it.
// Loops: PER times (three of them), log2(WG) times.
alias T = ${T};
const PER = ${PER}u;
var<workgroup> buf: array<T, ${BLOCK}>;
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
    let o = line / inner;
    let i = line % inner;
    let k0 = (w % blocks) * WG * PER;
    for (var q = 0u; q < PER; q++) {                     // PER times
        let k = k0 + q * WG + lid;
        var v = T(0);
        if (k < n) { v = in0[(o * n + k) * inner + i]; }
        buf[q * WG + lid] = v;
    }
    workgroupBarrier();
    var run = T(0);
    for (var q = 0u; q < PER; q++) {                     // PER times: this thread's run, in order
        run += buf[lid * PER + q];
        buf[lid * PER + q] = run;
    }
    var v = run;
    sh[lid] = v;
    workgroupBarrier();
    for (var s = 1u; s < WG; s = s << 1u) {              // log2(WG) times: the runs' totals, scanned
        if (lid >= s) { v = sh[lid - s] + v; }
        workgroupBarrier();
        sh[lid] = v;
        workgroupBarrier();
    }
    if (lid > 0u) {
        let before = sh[lid - 1u];
        for (var q = 0u; q < PER; q++) {                 // PER times: plus the runs before
            buf[lid * PER + q] += before;
        }
    }
    workgroupBarrier();
    for (var q = 0u; q < PER; q++) {                     // PER times
        let k = k0 + q * WG + lid;
        if (k < n) { out[(o * n + k) * inner + i] = buf[q * WG + lid]; }
    }
    if (lid == WG - 1u) { totals[(o * blocks + w % blocks) * inner + i] = v; }
}
