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
    // Taylor series near 0, Abramowitz-Stegun 7.1.26 elsewhere (|error| < 1.5e-7)
    let a = abs(x);
    let x2 = x * x;
    let series = F(1.1283791670955126) * x * (F(1.0) + x2 * (F(-1.0 / 3.0) + x2 * (F(0.1) + x2 * (F(-1.0 / 42.0) + x2 * F(1.0 / 216.0)))));
    let t = F(1.0) / (F(1.0) + F(0.3275911) * a);
    let poly = t * (F(0.254829592) + t * (F(-0.284496736) + t * (F(1.421413741) + t * (F(-1.453152027) + t * F(1.061405429)))));
    let far = sign(x) * (F(1.0) - poly * exp(-x2));
    return select(far, series, a < F(0.5));
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
