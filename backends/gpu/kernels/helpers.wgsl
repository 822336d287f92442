// Float helpers shared by elementwise kernels; F is f32 or vec4<f32>.
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
fn erf_(x: F) -> F {
    // |x| < 1: x P(x^2); beyond: sign(x) (1 - exp(-t^2) G(t - 2.75)), t = |x| clipped to [1, 4.5] (erf
    // is 1 in f32 past 4.5), G = erfcx; Chebyshev interpolants (backends/cpu/erf.py's float32 pieces,
    // tests/erf_fit.py), within 2 ulp of erf in f32 arithmetic
    let s = x * x;
    var p = F(-0.0005648059865503044);
    p = F(0.004921762027877231) + s * p; p = F(-0.02671505423226643) + s * p; p = F(0.11280316652505075) + s * p;
    p = F(-0.37612343775327806) + s * p; p = F(1.1283791261787373) + s * p;
    let t = clamp(abs(x), F(1.0), F(4.5));
    let z = t - F(2.75);
    var g = F(-1.2598326722644082e-08);
    g = F(5.578490465437938e-08) + z * g; g = F(-1.0756909099105663e-07) + z * g; g = F(4.3754622117090806e-07) + z * g;
    g = F(-2.3021648868845714e-06) + z * g; g = F(9.190754536006241e-06) + z * g; g = F(-3.463836007102218e-05) + z * g;
    g = F(0.00013090601214954862) + z * g; g = F(-0.000482226288004776) + z * g; g = F(0.0017197247820913268) + z * g;
    g = F(-0.005934331880768833) + z * g; g = F(0.019758565429037932) + z * g; g = F(-0.06323763774890935) + z * g;
    g = F(0.19366209714152902) + z * g;
    let far = select(F(-1.0), F(1.0), x >= F(0.0)) * (F(1.0) - exp(-t * t) * g);
    return select(x, select(far, x * p, abs(x) < F(1.0)), x == x);   // NaN stays NaN (lavapipe: NaN != NaN is false, NaN == NaN false too)
}
fn softplus_(x: F) -> F {
    return max(x, F(0.0)) + log1p_(exp(-abs(x)));
}
fn pow_(a: F, b: F) -> F {
    // numpy semantics: negative bases with integral exponents, and x ** 0 == 1;
    // integral |b| <= 4 by multiplication, exact as on the cpu (x ** 2, x ** -1, ...)
    let r = pow(abs(a), b);
    let bi = round(b);
    let odd = abs(bi - F(2.0) * floor(bi * F(0.5))) == F(1.0);
    let neg = select(pow(a, b), select(r, -r, odd), bi == b);
    let general = select(select(r, neg, a < F(0.0)), F(1.0), b == F(0.0));
    let n = abs(bi);
    let a2 = a * a;
    let m = select(select(select(a, a2, n == F(2.0)), a2 * a, n == F(3.0)), a2 * a2, n == F(4.0));
    let small = select(m, F(1.0) / m, bi < F(0.0));
    return select(general, small, (bi == b) & (n >= F(1.0)) & (n <= F(4.0)));
}
