// Col2Im: a thread per image element sums every column entry whose window covers it
// (deterministic, no atomics); the inverse scatter of Im2Col.
// One dispatch walks window offsets q = ki * kw + kj from q_begin to at most q_begin + Q_CHUNK
// (windows.py), adding to what the dispatch before wrote when q_begin > 0: the loop runs at most
// Q_CHUNK times, far below the 65535 iterations after which some implementations stop a
// shader's loops (Mesa's lavapipe).
alias T = ${T};
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    if (e >= ui(U_total)) { return; }
${GEOMETRY}
    let i = i32(e);
    let x = i % W;
    let y = (i / W) % H;
    let c = (i / (W * H)) % C;
    let n = i / (W * H * C);
    let q_begin = ii(U_q_begin);
    var acc = T(0);
    if (q_begin > 0) { acc = out[e]; }
    for (var q = q_begin; q < min(kh * kw, q_begin + ${Q_CHUNK}); q++) {      // at most Q_CHUNK times
        let ki = q / kw;
        let kj = q % kw;
        let ty = y + ph - ki * dh;
        let tx = x + pw - kj * dw;
        if (ty < 0 || ty % sh != 0 || ty / sh >= oh || tx < 0 || tx % sw != 0 || tx / sw >= ow) { continue; }
        acc += in0[(n * C * kh * kw + c * kh * kw + q) * L + (ty / sh) * ow + tx / sw];
    }
    out[e] = acc;
}
