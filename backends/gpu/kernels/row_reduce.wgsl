// Reductions across the threads that share a row (included by the row kernels). A workgroup per
// row: partial results combined in workgroup memory (every thread of the workgroup calls these).
var<workgroup> sh: array<vec2<f32>, WG>;
fn row_sum2(v: vec2<f32>, lid: u32) -> vec2<f32> {
    sh[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) { // log2(WG) times
        if (lid < s) { sh[lid] += sh[lid + s]; }
        workgroupBarrier();
    }
    let r = sh[0];
    workgroupBarrier();
    return r;
}
fn row_max(v: f32, lid: u32) -> f32 {
    sh[lid] = vec2<f32>(v, 0.0);
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) { // log2(WG) times
        if (lid < s) { sh[lid].x = max(sh[lid].x, sh[lid + s].x); }
        workgroupBarrier();
    }
    let r = sh[0].x;
    workgroupBarrier();
    return r;
}
fn row_sum(v: f32, lid: u32) -> f32 { return row_sum2(vec2<f32>(v, 0.0), lid).x; }
