// LayerNormGrad's dx over rows of n contiguous elements: with the forward's mean and rstd,
// xhat = (x - mean) * rstd and g = dy ${WEIGHT}, dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
${REDUCE}
const LANES: u32 = ${LANES};

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = ${ROW};
    if (r >= ui(U_rows)) { return; }
    let lane = ${LANE};
    let n = ui(U_n);
    let base = r * n;
    let m = mean[r];
    let rs = rstd[r];
    var sums = vec2<f32>(0.0, 0.0);
    for (var k = lane; k < n; k += LANES) { // ROW_STEPS times at most
        let g = dy[base + k] ${WEIGHT};
        sums += vec2<f32>(g, g * (x[base + k] - m) * rs);
    }
    let means = row_sum2(sums, lid) / f32(n);
    for (var k = lane; k < n; k += LANES) { // ROW_STEPS times at most
        let g = dy[base + k] ${WEIGHT};
        dx[base + k] = rs * (g - means.x - (x[base + k] - m) * rs * means.y);
    }
}
