// Im2Col: cols[n, (c*kh + i)*kw + j, oy*ow + ox] = x[n, c, oy*sh - ph + i*dh, ox*sw - pw + j*dw]
// (zero outside), a thread per column element.
alias T = ${T};
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    if (e >= ui(U_total)) { return; }
${GEOMETRY}
    let R = C * kh * kw;
    let i = i32(e);
    let l = i % L;
    let r = (i / L) % R;
    let n = i / (L * R);
    let c = r / (kh * kw);
    let ki = (r / kw) % kh;
    let kj = r % kw;
    let y = (l / ow) * sh - ph + ki * dh;
    let x = (l % ow) * sw - pw + kj * dw;
    var v = T(0);
    if (y >= 0 && y < H && x >= 0 && x < W) {
        v = in0[((n * C + c) * H + y) * W + x];
    }
    out[e] = v;
}
