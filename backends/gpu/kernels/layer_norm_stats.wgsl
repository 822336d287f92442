// A row's (mean, rstd) for LayerNorm (which keeps them for LayerNormGrad): the mean, then the biased variance around it
// (two passes), rstd = 1 / sqrt(var + eps). Every thread of the row calls it (row_sum may combine a
// workgroup's partial sums).
fn row_stats(base: u32, n: u32, lane: u32, lid: u32) -> vec2<f32> {
    var t = 0.0;
    for (var k = lane; k < n; k += LANES) { t += x[base + k]; } // ROW_STEPS times at most
    let mean = row_sum(t, lid) / f32(n);
    var v = 0.0;
    for (var k = lane; k < n; k += LANES) { let c = x[base + k] - mean; v += c * c; } // ROW_STEPS times at most
    return vec2<f32>(mean, 1.0 / sqrt(row_sum(v, lid) / f32(n) + uf(U_eps)));
}
