// Im2Col: cols[n, (c*kh + i)*kw + j, oy*ow + ox] = x[n, c, oy*sh - ph + i*dh, ox*sw - pw + j*dw]
// (zero outside), a thread per column element.
alias T = ${T};
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = flat_group(wid, nwg) * WG + lid;
    if (e >= ui(U_total)) { return; }
    let C = ii(U_g); let H = ii(U_g + 1u); let W = ii(U_g + 2u);
    let kh = ii(U_g + 3u); let kw = ii(U_g + 4u); let sh = ii(U_g + 5u); let sw = ii(U_g + 6u);
    let ph = ii(U_g + 7u); let pw = ii(U_g + 8u); let dh = ii(U_g + 9u); let dw = ii(U_g + 10u);
    let oh = ii(U_g + 11u); let ow = ii(U_g + 12u);
    let L = oh * ow;
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
