// LayerNorm over rows of n contiguous elements: mean, then the biased variance around it (two
// passes), then y = (x - mean) * rstd ${AFFINE} with rstd = 1 / sqrt(var + eps). ROW, LANE, LANES
// and REDUCE as in softmax.wgsl.
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
    var t = 0.0;
    for (var k = lane; k < n; k += LANES) { t += x[base + k]; } // ROW_STEPS times at most
    let mean = row_sum(t, lid) / f32(n);
    var v = 0.0;
    for (var k = lane; k < n; k += LANES) { let c = x[base + k] - mean; v += c * c; } // ROW_STEPS times at most
    let rstd = 1.0 / sqrt(row_sum(v, lid) / f32(n) + uf(U_eps));
    for (var k = lane; k < n; k += LANES) { // ROW_STEPS times at most
        y[base + k] = (x[base + k] - mean) * rstd ${AFFINE};
    }
}
