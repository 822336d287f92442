// Special functions for elementwise kernels (F is f32 or vec4<f32>, U, B its u32 and bool shapes;
// nan.wgsl, helpers.wgsl and trig.wgsl's sin_/cos_ come first): erfc_, erfcx_, erfinv_, ndtri_
// (backends/cpu/special.py's methods in f32 arithmetic), lgamma_, digamma_, trigamma_, zeta_
// (backends/cpu/gamma.py's).
fn erfcx_far_(t: F) -> F {
    // exp(t^2) erfc(t) for t >= 1: helpers.wgsl's Chebyshev piece below 4.5, above it the Laplace
    // continued fraction 1 / (sqrt(pi) (t + (1/2) / (t + 1 / (t + ...)))), 8 levels (2e-10 at 4.5)
    let c = max(t, F(4.5));
    var d = c;
    for (var k = 8; k > 0; k--) { d = c + F(f32(k) * 0.5) / d; }   // 8 times
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
    for (var k = 0; k < 2; k++) {   // 8 times
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
    for (var k = 0; k < 3; k++) {   // 8 times
        let scaled = erfcx_(x);
        let log_erfc = select(log(erfc_(x)), log(scaled) - x * x, x >= F(1.0));
        x = x + (log_erfc - log_r) * scaled * F(0.886226925452758);
    }
    x = select(x, -x, low) * F(1.4142135623730951);
    let infinite = bitcast<F>(select(U(0x7f800000u), U(0xff800000u), low));
    return select(select(x, infinite, r == F(0.0)), nan_(p), (p < F(0.0)) | (p > F(1.0)) | isnan_(p));
}
fn sin_pi_(x: F) -> F {
    // sin(pi x) from x - round(x) (exact), by trig.wgsl's accurate sin
    return sin_(F(3.141592653589793) * (x - round(x)));
}
fn lgamma_mid_(z: F) -> F {
    // lgamma(2 + z) for |z| <= 1/2: z ((1 - euler) + sum_k (-1)^k (zeta(k) - 1) z^(k-1) / k), k = 2..15
    var p = F(-2.0392157538013662e-06);
    p = F(4.3748667899074882e-06) + z * p; p = F(-9.4394882752683967e-06) + z * p;
    p = F(2.0507212775670691e-05) + z * p; p = F(-4.4926236738133142e-05) + z * p;
    p = F(9.9457512781808531e-05) + z * p; p = F(-0.00022315475845357939) + z * p;
    p = F(0.00050966952474304245) + z * p; p = F(-0.001192753911703261) + z * p;
    p = F(0.0028905103307415234) + z * p; p = F(-0.0073855510286739857) + z * p;
    p = F(0.020580808427784546) + z * p; p = F(-0.067352301053198102) + z * p;
    p = F(0.3224670334241132) + z * p; p = F(0.42278433509846713) + z * p;
    return z * p;
}
fn lgamma_positive_(x: F) -> F {
    // x > 0: below 8 moved into [1.5, 2.5) (lgamma_mid_) by Gamma's recurrence, the steps' logs apart
    // (no cancellation near the zeros at 1 and 2); from 8 on Stirling's series to x^-5
    var u = select(x, x + F(1.0), x < F(1.5));
    u = select(u, x + F(2.0), x < F(0.5));
    var down = F(0.0);
    for (var k = 0; k < 6; k++) {   // 8 times
        let step = u >= F(2.5);
        u = select(u, u - F(1.0), step);
        down = down + select(F(0.0), log(u), step);
    }
    let up = select(select(F(0.0), log_(x), x < F(1.5)), log_(x) + log1p_(x), x < F(0.5));
    let small = lgamma_mid_(u - F(2.0)) + down - up;
    let y = max(x, F(8.0));
    let z = F(1.0) / (y * y);
    let stirling = (y - F(0.5)) * log(y) - y + F(0.9189385332046728) + ((F(1.0 / 1260.0) * z - F(1.0 / 360.0)) * z
        + F(1.0 / 12.0)) / y;
    return select(small, stirling, x >= F(8.0));
}
fn lgamma_(x: F) -> F {
    // log|Gamma(x)|: the reflection log(pi / |sin(pi x)|) - lgamma(1 - x) below 0; inf at the
    // non-positive integers and +-inf
    let positive = lgamma_positive_(select(F(1.0), x, x > F(0.0)));
    let mirrored = lgamma_positive_(select(F(1.0) - x, F(1.0), x > F(0.0)));
    let reflected = log(F(3.141592653589793) / abs(sin_pi_(x))) - mirrored;
    let value = select(reflected, positive, x > F(0.0));
    let infinite = bitcast<F>(U(0x7f800000u) + bitcast<U>(x) * U(0u));   // made at run time (see nan.wgsl)
    let pole = ((x <= F(0.0)) & (round(x) == x)) | (abs(x) == infinite);
    return select(select(value, infinite, pole), x, isnan_(x));
}
fn digamma_(x: F) -> F {
    // shifted up past 8, then log(y) - 1/(2y) - the asymptotic series; pi / tan(pi x) reflects below 0
    let negative = x < F(0.0);
    var y = select(x, F(1.0) - x, negative);
    var total = F(0.0);
    for (var k = 0; k < 8; k++) {   // 8 times
        let small = y < F(8.0);
        total = select(total, total - F(1.0) / y, small);
        y = select(y, y + F(1.0), small);
    }
    let z = F(1.0) / (y * y);
    var value = total + log(y) - F(0.5) / y - z * (F(1.0 / 12.0) - z * (F(1.0 / 120.0) - z * (F(1.0 / 252.0)
        - z * F(1.0 / 240.0))));
    let r = F(3.141592653589793) * (x - round(x));
    value = select(value, value - F(3.141592653589793) * cos_(r) / sin_(r), negative);
    let infinite = bitcast<F>(U(0x7f800000u) + bitcast<U>(x) * U(0u));
    value = select(value, select(infinite, -infinite, bitcast<U>(x) == U(0u)), x == F(0.0));   // -+inf at +-0
    value = select(value, infinite, x == infinite);
    return select(value, nan_(x), (negative & (round(x) == x)) | isnan_(x));
}
fn trigamma_(x0: F) -> F {
    // PyTorch's trigamma: the reflection below 1/2, six steps up, a short asymptotic series
    let below = x0 < F(0.5);
    let s = sin_pi_(x0);
    var result = select(F(0.0), -F(9.869604401089358) / (s * s), below);
    var x = select(x0, F(1.0) - x0, below);
    for (var k = 0; k < 6; k++) {   // 8 times
        result = result + F(1.0) / (x * x);
        x = x + F(1.0);
    }
    let ixx = F(1.0) / (x * x);
    let series = ixx * (F(1.0 / 6.0) - ixx * (F(1.0 / 30.0) - ixx * F(1.0 / 42.0)));
    result = result + (F(1.0) + F(1.0) / (F(2.0) * x) + series) / x;
    return select(result, -result, below);
}
fn zeta_(x: F, q: F) -> F {
    // the Hurwitz zeta function as Cephes (PyTorch): the direct sum until a term stops mattering or
    // passes q + 9 (at most 4096 terms: q below -4080 is out of reach here), then the Euler-Maclaurin
    // tail with up to 12 Bernoulli terms
    let eps = F(1.1102230246251565e-16);
    var s = pow_(q, -x);
    var a = q;
    var b = F(0.0);
    var done = B(false);
    var result = F(0.0);
    for (var i = 0; i < 4096; i++) {   // 8 times
        let run = !done & ((F(f32(i)) < F(9.0)) | (a <= F(9.0)));
        if (!any(run)) { break; }
        a = select(a, a + F(1.0), run);
        b = select(b, pow_(a, -x), run);
        s = select(s, s + b, run);
        let converged = run & (-eps * s < b) & (b < eps * s);
        result = select(result, s, converged);
        done = done | converged;
    }
    let w = a;
    s = s + b * w / (x - F(1.0)) - F(0.5) * b;
    var m = F(1.0);
    var k = F(0.0);
    let bernoulli = array<f32, 12>(12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
        7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
        1.8152105401943546773e17, -7.1661652561756670113e18);
    for (var i = 0; i < 12; i++) {   // 8 times
        m = m * (x + k);
        b = b / w;
        let t = m * b / F(bernoulli[i]);
        let tail = s + t;
        let converged = !done & (abs(t / tail) < eps);
        s = select(tail, s, done);
        result = select(result, s, converged);
        done = done | converged;
        k = k + F(1.0);
        m = m * (x + k);
        b = b / w;
        k = k + F(1.0);
    }
    result = select(s, result, done);
    let infinite = bitcast<F>(U(0x7f800000u) + bitcast<U>(x) * U(0u));
    let pole = (x == F(1.0)) | ((x > F(1.0)) & (q <= F(0.0)) & (floor(q) == q));
    let undefined = (x < F(1.0)) | ((q <= F(0.0)) & (floor(x) != x)) | isnan_(x) | isnan_(q);
    return select(select(result, infinite, pole), nan_(x + q), undefined & !pole);
}
fn signbit_(x: F) -> B { return bitcast<U>(x) >= U(0x80000000u); }
fn copysign_(a: F, b: F) -> F {
    return bitcast<F>((bitcast<U>(a) & U(0x7fffffffu)) | (bitcast<U>(b) & U(0x80000000u)));
}
fn nextafter_(a: F, b: F) -> F {
    // one step of the bits toward b: up in magnitude where b lies beyond a from zero; from +-0 the
    // smallest subnormal with b's sign (a GPU that flushes subnormals shows it as 0); NaN where either is
    let away = (b > a) == (a > F(0.0));
    let bits = bitcast<U>(a);
    var r = bitcast<F>(select(bits - U(1u), bits + U(1u), away));
    r = select(r, bitcast<F>(select(U(1u), U(0x80000001u), b < F(0.0))), a == F(0.0));
    r = select(r, b, a == b);
    return select(r, nan_(a + b), isnan_(a) | isnan_(b));
}
fn frexp_mantissa_(x: F) -> F {
    return select(x, frexp(x).fract, abs(x) <= F(MAX_F32) & (x != F(0.0)));   // 0, +-inf, NaN: themselves
}
fn frexp_exponent_(x: F) -> I {
    return select(I(0), frexp(x).exp, abs(x) <= F(MAX_F32) & (x != F(0.0)));
}
fn gcd_(a0: I, b0: I) -> I {
    // Euclid's algorithm, 48 steps (enough for any pair of 32-bit integers: Fibonacci's 47th passes 2^31)
    var a = abs(a0);
    var b = abs(b0);
    for (var k = 0; k < 48; k++) {   // 8 times
        let more = a != I(0);
        let r = b % select(I(1), a, more);
        b = select(b, a, more);
        a = select(a, r, more);
    }
    return b;
}
fn lcm_(a: I, b: I) -> I {
    let g = gcd_(a, b);
    return select(abs(a / select(g, I(1), g == I(0)) * b), I(0), g == I(0));
}
fn igamma_(a: F, x: F, upper: f32) -> F {
    // P(a, x) (Q = 1 - P when upper is 1): the series below x = a + 1, Lentz's continued fraction for
    // Q above (at most 2048 terms each), times x^a e^-x / Gamma(a); PyTorch's edge values
    let infinite = bitcast<F>(U(0x7f800000u) + bitcast<U>(x) * U(0u));
    let ok = (a > F(0.0)) & (x > F(0.0)) & (a < infinite) & (x < infinite);
    let aa = select(F(1.0), a, ok);
    let xx = select(F(1.0), x, ok);
    let prefactor = exp(aa * log(xx) - xx - lgamma_(aa));
    let series = xx < aa + F(1.0);
    var term = F(1.0) / aa;
    var total = term;
    var done = !series | !ok;
    for (var i = 1; i < 2048; i++) {   // 8 times
        if (all(done)) { break; }
        term = term * xx / (aa + F(f32(i)));
        total = select(total + term, total, done);
        done = done | (abs(term) <= abs(total) * F(6e-8));
    }
    var b = xx + F(1.0) - aa;
    var c = F(1e30);
    var d = F(1.0) / b;
    var h = d;
    var done2 = series | !ok;
    for (var i = 1; i < 2048; i++) {   // 8 times
        if (all(done2)) { break; }
        let fi = F(f32(i));
        let an = -fi * (fi - aa);
        b = b + F(2.0);
        let dd = F(1.0) / select(an * d + b, F(1e-30), abs(an * d + b) < F(1e-30));
        let cc = select(b + an / c, F(1e-30), abs(b + an / c) < F(1e-30));
        let delta = dd * cc;
        h = select(h * delta, h, done2);
        c = select(cc, c, done2);
        d = select(dd, d, done2);
        done2 = done2 | (abs(delta - F(1.0)) <= F(6e-8));
    }
    let lower = prefactor * total;
    let tail = prefactor * h;
    let p = select(F(1.0) - tail, lower, series);
    let q = select(tail, F(1.0) - lower, series);
    let edge_p = select(select(F(0.0), F(1.0), (a == F(0.0)) | (x == infinite)), F(0.0), x == F(0.0));
    let value = select(select(edge_p, F(1.0) - edge_p, upper > 0.5), select(p, q, upper > 0.5), ok);
    let undefined = (a < F(0.0)) | (x < F(0.0)) | ((a == F(0.0)) & (x == F(0.0))) | ((a == infinite) & (x == infinite))
        | isnan_(a) | isnan_(x);
    return select(value, nan_(a + x), undefined);
}
