// LayerNorm's weight and bias gradients, a workgroup per column c of [rows, n]:
// dweight[c] = sum over rows of dy * (x - mean) * rstd, dbias[c] = sum over rows of dy, with each
// row's mean and rstd from the forward (layer_norm.wgsl). A dispatch sums rows [U_r0, U_r1), adding to what
// earlier dispatches wrote (r0 > 0), so that no thread walks more than ROW_STEPS rows (rows.py).
${REDUCE}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let c = flat_group(wid, nwg);
    let n = ui(U_n);
    if (c >= n) { return; }
    let r0 = ui(U_r0);
    var t = vec2<f32>(0.0, 0.0);
    for (var r = r0 + lid; r < ui(U_r1); r += WG) {    // (r1 - r0) / WG <= ROW_STEPS times
        let d = dy[r * n + c];
        t += vec2<f32>(d * (x[r * n + c] - mean[r]) * rstd[r], d);
    }
    let total = row_sum2(t, lid);
    if (lid == 0u) {
        let more = r0 > 0u;
        dweight[c] = select(0.0, dweight[c], more) + total.x;
        dbias[c] = select(0.0, dbias[c], more) + total.y;
    }
}
