// One Adam/AdamW step per element, in PyTorch's single-tensor order (kernel_names.ADAM_STEP):
// decoupled decay, L2 penalty, exp_avg.lerp_(g, 1 - beta1), exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2),
// denom = sqrt(v) / correction2 + eps, param.addcdiv_(exp_avg, denom, -step_size).
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = flat_group(wid, nwg) * WG + lid;
    if (i >= ui(U_n)) { return; }
    var g = grad[i];
    if (ui(U_maximize) != 0u) { g = -g; }
    var q = p[i];
    if (uf(U_decay) != 1.0) { q = q * uf(U_decay); }
    if (uf(U_wd) != 0.0) { g = g + q * uf(U_wd); }
    let w = uf(U_w1);
    let d = g - m[i];
    var m1 = m[i] + d * w;
    if (abs(w) >= 0.5) { m1 = g - d * (1.0 - w); }
    let v1 = v[i] * uf(U_beta2) + g * uf(U_c2) * g;
    let denom = sqrt(v1) / uf(U_corr2) + uf(U_eps);
    p_out[i] = q + m1 * -uf(U_step_size) / denom;   // (negation is exact: eager's bits)
    m_out[i] = m1;
    v_out[i] = v1;
}
