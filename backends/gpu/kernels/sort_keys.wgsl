// Sort keys: each value as a u32 whose unsigned order is the sort order. Floats: every NaN above
// +inf, -0.0 equal to +0.0, negatives bit-inverted below the positives; ints: the sign bit flipped;
// bools (u32 0/1) as they are. Descending sorts xor every key with U_flip (all ones), which turns
// the order around and puts NaN first. Compared by bits, never as floats: NaN comparisons are not
// dependable on every WebGPU implementation (lavapipe finds NaN != NaN false).
fn key_f32(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    let m = b & 0x7fffffffu;
    if (m > 0x7f800000u) { return 0xffffffffu; }
    if (m == 0u) { return 0x80000000u; }
    return select(b | 0x80000000u, ~b, b != m);
}
fn key_i32(v: i32) -> u32 { return bitcast<u32>(v) ^ 0x80000000u; }
fn key_u32(v: u32) -> u32 { return v; }
fn key_of(v: ${T}) -> u32 { return key_${T}(v) ^ ui(U_flip); }

// (key, index) pairs ordered by key, then index: all distinct, so a sorting network that is not
// stable by itself (bitonic) still gives the stable order.
fn before(ka: u32, ia: u32, kb: u32, ib: u32) -> bool { return ka < kb || (ka == kb && ia < ib); }

// The flat offset of element r of line `line` (lines run along the sorted axis, `inner` apart).
fn at(line: u32, r: u32) -> u32 {
    let inner = ui(U_inner);
    return (line / inner) * ui(U_n) * inner + line % inner + r * inner;
}
