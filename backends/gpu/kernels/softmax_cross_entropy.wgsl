// SoftmaxCrossEntropy, a thread per row r of logits [N, C]:
// loss[r] = log(sum_j exp(x[r, j] - m)) - (x[r, t] - m) with m the row's max and t = tgt[r] (NaN
// if the row holds one); 0 where t == ignore_index; NaN where t is out of range, which is
// refused through bad_index (the next readback raises).
// ROW: a short row (C <= ROW_MAX, losses.py) is read here, its two loops running C times each;
// a long row's max and sum of exponentials come from the backend's reductions (inputs mx, sx).
// When U_count is set (reduction 'mean'), loss has 2N elements and loss[N + r] is 1.0 where
// row r is kept (t != ignore_index), else 0.0: the count a mean divides by.
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = flat_group(wid, nwg) * WG + lid;
    let n = ui(U_n);
    if (r >= n) { return; }
    let c = ui(U_c);
    let t = tgt[r];
    let kept = t != ii(U_ignore);
    if (ui(U_count) != 0u) {
        loss[n + r] = select(0.0, 1.0, kept);
    }
    if (!kept) {
        loss[r] = 0.0;
        return;
    }
    if (t < 0 || u32(t) >= c) {
        bad_index(t);
        loss[r] = bitcast<f32>(ui(U_nan));    // a NaN's bits, from the uniforms: WGSL has no NaN constant
        return;
    }
    let base = r * c;
${ROW}
    loss[r] = log(s) - (x[base + u32(t)] - m);
}
