// Special functions for elementwise kernels (F is f32 or vec4<f32>, U, B its u32 and bool shapes;
// nan.wgsl and helpers.wgsl come first): erfc_, erfcx_, erfinv_ (backends/cpu/special.py's methods
// in f32 arithmetic).
fn erfcx_far_(t: F) -> F {
    // exp(t^2) erfc(t) for t >= 1: helpers.wgsl's Chebyshev piece below 4.5, above it the Laplace
    // continued fraction 1 / (sqrt(pi) (t + (1/2) / (t + 1 / (t + ...)))), 8 levels (2e-10 at 4.5)
    let c = max(t, F(4.5));
    var d = c;
    for (var k = 8; k > 0; k--) { d = c + F(f32(k) * 0.5) / d; }
    return select(F(0.5641895835477563) / d, erfcx_mid_(min(t, F(4.5))), t < F(4.5));
}
fn exp_minus_square_(t: F) -> F {
    // exp(-t^2) for t >= 0, t = hi + lo with hi of 8 bits past the point (hi^2 exact in f32 below 16):
    // exp(-hi^2) exp(-lo (2 hi + lo)), so that the rounding of t^2 stays out of the exponent
    let c = min(t, F(16.0));
    let hi = floor(c * F(256.0)) * F(0.00390625);
    let lo = c - hi;
    return exp(-hi * hi) * exp(-lo * (F(2.0) * hi + lo));
}
fn erfc_(x: F) -> F {
    // 1 - erf(x) below |x| = 1, exp(-x^2) erfcx(x) beyond; 2 - erfc(-x) for negative x
    let a = abs(x);
    let t = max(a, F(1.0));
    let positive = select(exp_minus_square_(t) * erfcx_far_(t), F(1.0) - erf_(a), a < F(1.0));
    return select(select(positive, F(2.0) - positive, x < F(0.0)), x, isnan_(x));
}
fn erfcx_(x: F) -> F {
    // exp(x^2) erfc(x): erfcx_far_ from 1 on, exp(x^2) (1 - erf(x)) below; 2 exp(x^2) - erfcx(-x) for
    // negative x (inf once exp(x^2) overflows)
    let a = abs(x);
    let positive = select(erfcx_far_(max(a, F(1.0))), exp(a * a) * (F(1.0) - erf_(a)), a < F(1.0));
    return select(select(positive, F(2.0) * exp(a * a) - positive, x < F(0.0)), x, isnan_(x));
}
fn erfinv_(y: F) -> F {
    // Pavlis' rational first guess (PyTorch's calc_erfinv's), then two Newton steps: on erf(x) = y in
    // the centre, on erfc(|x|) = 1 - |y| (exact) beyond |y| = 1/2, which keeps the relative accuracy
    // near +-1; +-inf at +-1, NaN beyond
    let a = abs(y);
    let z = y * y;
    let centre = y * (((F(-0.140543331) * z + F(0.914624893)) * z + F(-1.645349621)) * z + F(0.886226899))
        / ((((F(0.012229801) * z + F(-0.329097515)) * z + F(1.442710462)) * z + F(-2.118377725)) * z + F(1.0));
    let w = sqrt(-log(max((F(1.0) - a) * F(0.5), F(1e-30))));
    let s = select(F(-1.0), F(1.0), y >= F(0.0));
    let tail = s * (((F(1.641345311) * w + F(3.429567803)) * w + F(-1.624906493)) * w + F(-1.970840454))
        / ((F(1.6370678) * w + F(3.5438892)) * w + F(1.0));
    var x = select(tail, centre, a <= F(0.7));
    let rest = F(1.0) - a;
    for (var k = 0; k < 2; k++) {
        let residual = select(erf_(x) - y, (rest - erfc_(abs(x))) * s, a > F(0.5));
        x = x - residual / (F(1.1283791670955126) * exp(-x * x));
    }
    let infinite = bitcast<F>((bitcast<U>(y) & U(0x80000000u)) | U(0x7f800000u));
    return select(select(x, infinite, a == F(1.0)), nan_(y), (a > F(1.0)) | isnan_(y));
}
fn ndtri_(p: F) -> F {
    // the inverse normal CDF: -sqrt(2) erfcinv(2 min(p, 1 - p)), signed; erfcinv(r) from Pavlis' guess
    // (the tail one from r itself, so tiny r keeps its digits) and three Newton steps on log erfc(x) = log r
    let low = p < F(0.5);
    let r = F(2.0) * select(F(1.0) - p, p, low);
    let rr = clamp(r, F(1e-38), F(1.0));
    let y = F(1.0) - rr;
    let z = y * y;
    let centre = y * (((F(-0.140543331) * z + F(0.914624893)) * z + F(-1.645349621)) * z + F(0.886226899))
        / ((((F(0.012229801) * z + F(-0.329097515)) * z + F(1.442710462)) * z + F(-2.118377725)) * z + F(1.0));
    let w = sqrt(-log(rr * F(0.5)));
    let tail = (((F(1.641345311) * w + F(3.429567803)) * w + F(-1.624906493)) * w + F(-1.970840454))
        / ((F(1.6370678) * w + F(3.5438892)) * w + F(1.0));
    var x = select(centre, tail, y > F(0.7));
    let log_r = log(rr);
    for (var k = 0; k < 3; k++) {
        let scaled = erfcx_(x);
        let log_erfc = select(log(erfc_(x)), log(scaled) - x * x, x >= F(1.0));
        x = x + (log_erfc - log_r) * scaled * F(0.886226925452758);
    }
    x = select(x, -x, low) * F(1.4142135623730951);
    let infinite = bitcast<F>(select(U(0x7f800000u), U(0xff800000u), low));
    return select(select(x, infinite, r == F(0.0)), nan_(p), (p < F(0.0)) | (p > F(1.0)) | isnan_(p));
}
