// NaN-aware helpers (PyTorch's semantics), generic over F (f32 or vec4<f32>) with U and B its
// u32 and bool shapes. NaN is tested on the bits: compilers may assume no NaN and fold x != x to
// false (Mesa's lavapipe does), and WGSL has no NaN constant (a const-expression NaN is an error).
fn isnan_(x: F) -> B { return (bitcast<U>(x) & U(0x7fffffffu)) > U(0x7f800000u); }
fn nan_(x: F) -> F { return bitcast<F>(bitcast<U>(x) | U(0x7fc00000u)); }      // a quiet NaN, made at run time
// torch.maximum / torch.minimum: NaN if either is NaN; on a tie (0.0 and -0.0) the first operand.
fn max_(a: F, b: F) -> F { return select(b, a, (a >= b) | isnan_(a)); }
fn min_(a: F, b: F) -> F { return select(b, a, (a <= b) | isnan_(a)); }
