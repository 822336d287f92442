// sin, cos and tan of f32 scalars, accurate for every finite x as PyTorch's (WGSL promises its
// built-ins only inside [-pi, pi], and lavapipe's are wrong beyond about 1e7): x is reduced to
// r in [-pi/4, pi/4] plus a quadrant q (up to 8192 by Cody-Waite, subtracting q pi/2 in three
// parts; beyond, by Payne-Hanek: x's 24-bit mantissa times a 96-bit window of 2/pi's bits, in
// 32-bit words), then Cephes' minimax polynomials (about 1 ulp).
// No loops.
var<private> TWO_OVER_PI: array<u32, 9> = array<u32, 9>(0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u,
    0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u);   // a zero word, then 2/pi's fraction
struct Reduced { r: f32, q: u32 };
fn mul64_(a: u32, b: u32) -> vec2<u32> {          // (high, low) words of a * b
    let ll = (a & 0xffffu) * (b & 0xffffu);
    let lh = (a & 0xffffu) * (b >> 16u);
    let hl = (a >> 16u) * (b & 0xffffu);
    let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
    return vec2<u32>((a >> 16u) * (b >> 16u) + (lh >> 16u) + (hl >> 16u) + (mid >> 16u), a * b);
}
fn window_(j: u32, s: u32) -> u32 {               // 32 bits of TWO_OVER_PI from bit 32 j + s
    return select((TWO_OVER_PI[j] << s) | (TWO_OVER_PI[j + 1u] >> (32u - s)), TWO_OVER_PI[j], s == 0u);
}
fn reduce_(a: f32) -> Reduced {                   // a = |x|, finite: a = r + q pi/2
    if (a <= 0.785398163) { return Reduced(a, 0u); }
    if (a <= 8192.0) {                            // pi/2 in three parts: k times each of the first two
        let k = round(a * 0.636619772367581343);  // is exact for k < 2**13 (8 and 11 significant bits)
        return Reduced(((a - k * 1.5703125) - k * 4.837512969970703125e-4) - k * 7.54978995489188216e-8, u32(k));
    }
    let bits = bitcast<u32>(a);
    let m = (bits & 0x7fffffu) | 0x800000u;       // a = m 2**e, a normal number here
    let p = (bits >> 23u) - 120u;                 // e + 30 with e = exponent - 150: the bit of 2/pi
    let j = p / 32u;                              // at 2**(1 - e), the first that counts mod 4
    let s = p % 32u;
    let p2 = mul64_(m, window_(j + 2u, s));
    let p1 = mul64_(m, window_(j + 1u, s));
    let p0 = mul64_(m, window_(j, s));
    let w1 = p2.x + p1.y;                         // the product's bits 32..63, 64..95 (0..31: p2.y)
    let w2 = p1.x + p0.y + select(0u, 1u, w1 < p2.x);
    let hi = (w2 << 2u) | (w1 >> 30u);            // the fraction of a 2/pi, 64 bits
    let lo = (w1 << 2u) | (p2.y >> 30u);
    let q = (w2 >> 30u) + (hi >> 31u);            // rounded to the nearest quadrant: as i32, hi is
    let fh = f32(bitcast<i32>(hi));               // then the fraction - 1 (in units of 2**-32)
    let fl = f32(bitcast<i32>(hi) - i32(fh)) + f32(lo) * 2.3283064365386963e-10;
    // times pi/2 2**-32 in two parts (0x1.921fb6p-32 and the rest)
    return Reduced(fh * 3.65729529994141e-10 + (fl * 3.65729529994141e-10 + fh * -1.017735066980541e-17), q);
}
fn sin_poly_(r: f32) -> f32 {
    let z = r * r;
    return r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
}
fn cos_poly_(r: f32) -> f32 {
    let z = r * r;
    return 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
}
fn tan_poly_(r: f32) -> f32 {
    let z = r * r;
    return r + r * z * (3.33331568548e-1 + z * (1.33387994085e-1 + z * (5.34112807005e-2 + z * (2.44301354525e-2
        + z * (3.11992232697e-3 + z * 9.38540185543e-3)))));
}
fn finite_(x: f32, v: f32) -> f32 {               // v, or NaN where x is +-inf or NaN
    let nan = (bitcast<u32>(x) & 0x7fffffffu) >= 0x7f800000u;
    return select(v, bitcast<f32>(bitcast<u32>(x) | 0x7fc00000u), nan);
}
fn with_sign_(v: f32, x: f32) -> f32 {            // v with x's sign flipped in (sin, tan are odd)
    return bitcast<f32>(bitcast<u32>(v) ^ (bitcast<u32>(x) & 0x80000000u));
}
fn quadrant_sin_(t: Reduced, q: u32) -> f32 {     // sin(r + q pi/2)
    let v = select(sin_poly_(t.r), cos_poly_(t.r), (q & 1u) == 1u);
    return select(v, -v, (q & 2u) == 2u);
}
fn sin1_(x: f32) -> f32 {
    let t = reduce_(abs(x));
    return finite_(x, with_sign_(quadrant_sin_(t, t.q), x));
}
fn cos1_(x: f32) -> f32 {
    let t = reduce_(abs(x));
    return finite_(x, quadrant_sin_(t, t.q + 1u));
}
fn tan1_(x: f32) -> f32 {
    let t = reduce_(abs(x));
    let v = tan_poly_(t.r);
    return finite_(x, with_sign_(select(v, -1.0 / v, (t.q & 1u) == 1u), x));
}
