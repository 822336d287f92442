// Helpers shared by elementwise kernels; F is f32 or vec4<f32>, U, B and I its u32, bool and i32
// shapes (kernels/nan.wgsl comes first).
// Series near 0 (compilers may fold log(exp(x)), which defeats the usual tricks).
fn expm1_(x: F) -> F {
    var t = F(1.0 / 39916800.0);
    t = F(1.0 / 3628800.0) + x * t; t = F(1.0 / 362880.0) + x * t; t = F(1.0 / 40320.0) + x * t;
    t = F(1.0 / 5040.0) + x * t; t = F(1.0 / 720.0) + x * t; t = F(1.0 / 120.0) + x * t;
    t = F(1.0 / 24.0) + x * t; t = F(1.0 / 6.0) + x * t; t = F(0.5) + x * t; t = F(1.0) + x * t;
    return select(exp(x) - F(1.0), x * t, abs(x) < F(1.0));
}
fn log1p_(x: F) -> F {
    // 2 atanh(s), s = x / (2 + x), |s| <= 1/3 for |x| <= 0.5
    let s = x / (F(2.0) + x);
    let s2 = s * s;
    var t = F(1.0 / 15.0);
    t = F(1.0 / 13.0) + s2 * t; t = F(1.0 / 11.0) + s2 * t; t = F(1.0 / 9.0) + s2 * t; t = F(1.0 / 7.0) + s2 * t;
    t = F(1.0 / 5.0) + s2 * t; t = F(1.0 / 3.0) + s2 * t; t = F(1.0) + s2 * t;
    return select(log(F(1.0) + x), F(2.0) * s * t, abs(x) < F(0.5));
}
fn tanh_(x: F) -> F {
    let em = expm1_(F(2.0) * x);
    let e = exp(F(-2.0) * abs(x));
    return select(sign(x) * (F(1.0) - e) / (F(1.0) + e), em / (em + F(2.0)), abs(x) < F(0.5));
}
fn sigmoid_(x: F) -> F {
    let e = exp(-abs(x));
    return select(e / (F(1.0) + e), F(1.0) / (F(1.0) + e), x >= F(0.0));
}
fn erfcx_mid_(t: F) -> F {
    // exp(t^2) erfc(t) for t in [1, 4.5]: a Chebyshev interpolant in t - 2.75 (backends/cpu/erf.py's
    // G32, tests/erf_fit.py)
    let z = t - F(2.75);
    var g = F(-1.2598326722644082e-08);
    g = F(5.578490465437938e-08) + z * g; g = F(-1.0756909099105663e-07) + z * g; g = F(4.3754622117090806e-07) + z * g;
    g = F(-2.3021648868845714e-06) + z * g; g = F(9.190754536006241e-06) + z * g; g = F(-3.463836007102218e-05) + z * g;
    g = F(0.00013090601214954862) + z * g; g = F(-0.000482226288004776) + z * g; g = F(0.0017197247820913268) + z * g;
    g = F(-0.005934331880768833) + z * g; g = F(0.019758565429037932) + z * g; g = F(-0.06323763774890935) + z * g;
    return F(0.19366209714152902) + z * g;
}
fn erf_(x: F) -> F {
    // |x| < 1: x P(x^2); beyond: sign(x) (1 - exp(-t^2) erfcx_mid_(t)), t = |x| clipped to [1, 4.5] (erf
    // is 1 in f32 past 4.5); Chebyshev interpolants (backends/cpu/erf.py's float32 pieces,
    // tests/erf_fit.py), within 2 ulp of erf in f32 arithmetic
    let s = x * x;
    var p = F(-0.0005648059865503044);
    p = F(0.004921762027877231) + s * p; p = F(-0.02671505423226643) + s * p; p = F(0.11280316652505075) + s * p;
    p = F(-0.37612343775327806) + s * p; p = F(1.1283791261787373) + s * p;
    let t = clamp(abs(x), F(1.0), F(4.5));
    let far = select(F(-1.0), F(1.0), x >= F(0.0)) * (F(1.0) - exp(-t * t) * erfcx_mid_(t));
    return select(select(far, x * p, abs(x) < F(1.0)), x, isnan_(x));   // NaN stays NaN (a bit test: nan.wgsl)
}
fn softplus_(x: F) -> F {
    return max_(x, F(0.0)) + log1p_(exp(-abs(x)));
}
const MAX_F32 = 0x1.fffffep+127f;      // the largest finite f32, exactly (a decimal above it is an error in Tint)
const MIN_NORMAL = 0x1p-126f;
fn log_(x: F) -> F {
    // log of a subnormal x from the normal x * 2**24 (lavapipe's log reads the exponent field, so
    // log(1e-45) came out as -88 instead of -103); a GPU that flushes subnormals gives -inf
    return select(log(x), log(x * F(16777216.0)) - F(16.635532333438687), x < F(MIN_NORMAL));
}
fn log2_(x: F) -> F {
    // log2, exact at powers of 2; a subnormal x read as the normal x * 2**24, as log_ does
    return select(log2(x), log2(x * F(16777216.0)) - F(24.0), x < F(MIN_NORMAL));
}
fn pow_(a: F, b: F) -> F {
    // C's powf, as PyTorch: a ** 0 == 1 and 1 ** b == 1 even for NaN, (-1) ** +-inf == 1, NaN
    // otherwise where a or b is, a negative finite base with a non-integral exponent gives NaN,
    // the sign of a negative base (-0.0 too) kept for odd integral exponents; integral |b| <= 4 by
    // multiplication, exact as on the cpu (x ** 2, x ** -1, ...)
    let integral = round(b) == b;                                   // +-inf too, NaN not
    let odd = integral & (abs(b - F(2.0) * floor(b * F(0.5))) == F(1.0));
    let neg = bitcast<U>(a) >= U(0x80000000u);                       // the sign bit
    let m = abs(a);
    let r = select(pow(m, b), exp2(b * (log2(m * F(16777216.0)) - F(24.0))), m < F(MIN_NORMAL));   // as log_
    var p = select(r, -r, odd & neg);
    p = select(p, nan_(a), (a < F(0.0)) & (a >= F(-MAX_F32)) & !integral);
    let n = abs(b);
    let a2 = a * a;
    let q = select(select(select(a, a2, n == F(2.0)), a2 * a, n == F(3.0)), a2 * a2, n == F(4.0));
    p = select(p, select(q, F(1.0) / q, b < F(0.0)), integral & (n >= F(1.0)) & (n <= F(4.0)));
    p = select(p, nan_(a + b), isnan_(a) | isnan_(b));
    return select(p, F(1.0), (b == F(0.0)) | (a == F(1.0)) | ((a == F(-1.0)) & (n > F(MAX_F32))));
}
fn atan01_(t: F) -> F {
    // atan of t in [0, 1] (Cephes' atanf: about 1 ulp; WGSL allows its atan2 4096 ulp, lavapipe's is
    // off by 2e-5): above tan(pi/8), pi/4 + atan((t - 1) / (t + 1))
    let big = t > F(0.41421356237309503);
    let u = select(t, (t - F(1.0)) / (t + F(1.0)), big);
    let z = u * u;
    let p = (((F(8.05374449538e-2) * z - F(1.38776856032e-1)) * z + F(1.99777106478e-1)) * z - F(3.33329491539e-1)) * z * u + u;
    return select(p, p + F(0.78539816339744831), big);
}
fn atan2_(y: F, x: F) -> F {
    // C's atan2, as PyTorch: NaN where y or x is; +-0 over +0 (or a positive x) is +-0, over -0
    // (or a negative x) +-pi; +-inf over +-inf is an odd multiple of +-pi/4
    let ay = abs(y);
    let ax = abs(x);
    let hi = max(ay, ax);
    let ratio = select(select(min(ay, ax) / hi, F(1.0), ay == ax), F(0.0), hi == F(0.0));  // inf / inf, 0 / 0
    var t = atan01_(ratio);
    t = select(t, F(1.5707963267948966) - t, ay > ax);
    t = select(t, F(3.14159265358979) - t, bitcast<U>(x) >= U(0x80000000u));         // x's sign bit
    let r = bitcast<F>(bitcast<U>(t) | (bitcast<U>(y) & U(0x80000000u)));            // y's sign
    return select(r, nan_(y + x), isnan_(y) | isnan_(x));
}
fn ipow_(a: I, b: I) -> I {
    // integer power by squaring, wrapping on overflow as PyTorch's int32; b < 0 gives 0 except for
    // a == 1 (1) and a == -1 (+-1), as PyTorch's integer pow. The loop runs 31 times (b < 2**31).
    var r = I(1);
    var base = a;
    var e = max(b, I(0));
    for (var k = 0; k < 31; k++) {
        r = select(r, r * base, (e & I(1)) == I(1));
        base = base * base;
        e = e >> U(1u);
    }
    let negative = select(select(I(0), I(1), a == I(1)), select(I(1), I(-1), (b & I(1)) == I(1)), a == I(-1));
    return select(r, negative, b < I(0));
}
fn fmod_(a: F, b: F) -> F {
    // C's fmod, exactly (a - b * trunc(a / b) is not: 1.0 / 0.1 rounds up to 10 in float32): |b| * 2^k
    // is taken off |a| for k from the exponents' difference down to 0, each subtraction exact
    // (Sterbenz), at most 280 trips (float32's exponent range), usually a few. The result has a's
    // sign (zeros too); NaN for b == 0, an infinite a or a NaN; a itself for an infinite b.
    let y = abs(b);
    var r = abs(a);
    let k0 = frexp(r).exp - frexp(y).exp;
    for (var i = 0; i < 280; i++) {
        let k = k0 - I(i);
        if (all(k < I(0))) { break; }
        let yk = ldexp(y, max(k, I(0)));
        r = select(r, r - yk, (k >= I(0)) & (r >= yk));
    }
    let exact = bitcast<F>(bitcast<U>(r) | (bitcast<U>(a) & U(0x80000000u)));
    let inf = U(0x7f800000u);
    let a_finite = (bitcast<U>(a) & U(0x7fffffffu)) < inf;
    let b_inf = (bitcast<U>(b) & U(0x7fffffffu)) == inf;
    return select(nan_(a + b), select(exact, a, b_inf), a_finite & !isnan_(b) & (b != F(0.0)));
}
fn flush_(x: F) -> F {
    // subnormals as the signed zeros a GPU may flush them to (WGSL allows it), so that every test
    // below sees one value
    return select(x, bitcast<F>(bitcast<U>(x) & U(0x80000000u)), abs(x) < F(1.1754943508222875e-38));
}
fn floordiv_(a0: F, b0: F) -> F {
    // PyTorch's float a // b (c10's div_floor_floating): from fmod, so exact near integers; a / b for b == 0
    let a = flush_(a0);
    let b = flush_(b0);
    let m = fmod_(a, b);
    let d = select((a - m) / b, (a - m) / b - F(1.0), (m != F(0.0)) & ((b < F(0.0)) != (m < F(0.0))));
    let fl = floor(d);
    let r = select(select(fl, fl + F(1.0), d - fl > F(0.5)), bitcast<F>(bitcast<U>(a / b) & U(0x80000000u)),
                   d == F(0.0));                                  // a zero with the sign of a / b
    return select(select(r, nan_(m), isnan_(m)), a / b, b == F(0.0));
}
fn remainder_(a0: F, b0: F) -> F {
    // PyTorch's float a % b: fmod, moved into b's sign
    let a = flush_(a0);
    let b = flush_(b0);
    let m = fmod_(a, b);
    return select(m, m + b, (m != F(0.0)) & ((b < F(0.0)) != (m < F(0.0))));
}
fn ifloordiv_(a: I, b: I) -> I {
    // integer a // b, rounded down (WGSL's / truncates; by zero it gives a, where PyTorch's CUDA is undefined)
    let q = a / b;
    return select(q, q - I(1), (a % b != I(0)) & ((a < I(0)) != (b < I(0))));
}
fn iremainder_(a: I, b: I) -> I {
    let r = a % b;
    return select(r, r + b, (r != I(0)) & ((r < I(0)) != (b < I(0))));
}
// PyTorch's shifts of a 32-bit integer (int64 is held in 32 bits: a shift of 32..63 leaves its low word 0,
// or its sign): << gives 0 for b outside [0, 32), >> fills with a's sign there (WGSL would take b % 32)
fn shl_(a: I, b: I) -> I {
    return select(I(0), a << U(clamp(b, I(0), I(31))), (b >= I(0)) & (b < I(32)));
}
fn shr_(a: I, b: I) -> I {
    return a >> U(select(b, I(31), (b < I(0)) | (b >= I(32))));
}
