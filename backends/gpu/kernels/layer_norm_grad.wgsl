// LayerNormGrad's dx over rows of n contiguous elements: with the row's mean and rstd recomputed,
// xhat = (x - mean) * rstd and g = dy ${WEIGHT}, dx = rstd * (g - mean(g) - xhat * mean(g * xhat));
// each row's (mean, rstd) also go to stats, for the weight and bias gradients (layer_norm_params).
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
    var sums = vec2<f32>(0.0, 0.0);
    for (var k = lane; k < n; k += LANES) { // ROW_STEPS times at most
        let g = dy[base + k] ${WEIGHT};
        sums += vec2<f32>(g, g * (x[base + k] - mean) * rstd);
    }
    let means = row_sum2(sums, lid) / f32(n);
    for (var k = lane; k < n; k += LANES) { // ROW_STEPS times at most
        let g = dy[base + k] ${WEIGHT};
        dx[base + k] = rstd * (g - means.x - (x[base + k] - mean) * rstd * means.y);
    }
    if (lane == 0u) {
        stats[2u * r] = mean;
        stats[2u * r + 1u] = rstd;
    }
}
