// LayerNorm over rows of n contiguous elements: y = (x - mean) * rstd ${AFFINE}, the row's mean and
// rstd from row_stats (layer_norm_stats.wgsl), kept for the backward. ROW, LANE, LANES and REDUCE as in
// softmax.wgsl.
${REDUCE}
${STATS}
const LANES: u32 = ${LANES};

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = ${ROW};
    if (r >= ui(U_rows)) { return; }
    let lane = ${LANE};
    let n = ui(U_n);
    let base = r * n;
    let ms = row_stats(base, n, lane, lid);
    let mean = ms.x;
    let rstd = ms.y;
    for (var k = lane; k < n; k += LANES) { // ROW_STEPS times at most
        y[base + k] = (x[base + k] - mean) * rstd ${AFFINE};
    }
    if (lane == 0u) {
        mean_out[r] = mean;
        rstd_out[r] = rstd;
    }
}
