// Col2Im: a thread per image element sums every column entry whose window covers it
// (deterministic, no atomics); the inverse scatter of Im2Col.
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
    var acc = T(0);
    for (var ki = 0; ki < kh; ki++) {
        let ty = y + ph - ki * dh;
        if (ty < 0 || ty % sh != 0 || ty / sh >= oh) { continue; }
        for (var kj = 0; kj < kw; kj++) {
            let tx = x + pw - kj * dw;
            if (tx < 0 || tx % sw != 0 || tx / sw >= ow) { continue; }
            let r = (c * kh + ki) * kw + kj;
            acc += in0[(n * C * kh * kw + r) * L + (ty / sh) * ow + tx / sw];
        }
    }
    out[e] = acc;
}
