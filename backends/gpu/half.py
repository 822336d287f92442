"""float16 on the GPU backend (WebGPU's ``shader-f16`` feature): 2-byte ``f16`` storage, float32 arithmetic.

As PyTorch does for half on the CPU, every kernel computes in float32 and rounds its result to
float16 once: the elementwise shader (and the copies: movement, views, Gather, Im2Col, IndexCopy)
read ``f16`` storage into ``f32``, compute, and store through ``half_`` (round to nearest even,
overflow to infinity, by integer arithmetic, so no implementation's own f32 -> f16 conversion
rounding is relied on); every other kernel runs through ``in_float32``: its float16 inputs are
widened to float32 (exact), the float32 kernel runs (accumulating in float32: sums, products,
softmax, layer norm, matmul), and its float32 outputs are rounded to float16.
Host side: values travel as IEEE half bytes (``struct``'s ``e``), with no numpy needed.
"""
from __future__ import annotations

import struct

from webgrad import kernel_names as K
from webgrad.dtypes import float16, float32

# f32 -> the f16 nearest to it (ties to even; +-inf from 65520 on; NaN stays NaN), built from its bits:
# the result is exactly representable, so the final conversion is exact on every implementation
HALF_WGSL = """fn half_bits_(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    var h: u32;
    if (a > 0x7f800000u) { h = 0x7e00u; }
    else if (a >= 0x477ff000u) { h = 0x7c00u; }
    else if (a >= 0x38800000u) { h = (a + 0xfffu + ((a >> 13u) & 1u) - 0x38000000u) >> 13u; }
    else { h = u32(round(abs(x) * 16777216.0)); }
    return h | ((b >> 16u) & 0x8000u);
}
fn half1_(x: f32) -> f16 { return f16(unpack2x16float(half_bits_(x)).x); }
fn half_(x: F) -> S { return S(HALF_ARGS); }
"""
_HALF_ARGS = {False: "half1_(x)", True: "half1_(x.x), half1_(x.y), half1_(x.z), half1_(x.w)"}


def half_store(vec: bool) -> str:
    """The WGSL of ``half_(x: F) -> S``: float32 (F, scalar or vec4) to float16 storage (S), rounded.

    >>> "fn half_(x: F) -> S" in half_store(False)
    True
    """
    return HALF_WGSL.replace("HALF_ARGS", _HALF_ARGS[vec])


def half_bytes(values) -> bytes:
    """Python numbers as IEEE half bytes (little-endian), rounded to nearest even, beyond 65504 to +-inf.

    >>> list(half_values(half_bytes([1.0, 65519.0, 1e6, -1e6])))
    [1.0, 65504.0, inf, -inf]
    """
    values = [float(v) for v in values]
    try:
        return struct.pack(f"<{len(values)}e", *values)
    except OverflowError:   # struct refuses what rounds past 65504; PyTorch gives infinity
        return b"".join(_half_or_inf(v) for v in values)


def _half_or_inf(v: float) -> bytes:
    try:
        return struct.pack("<e", v)
    except OverflowError:
        return struct.pack("<e", float("inf") if v > 0 else float("-inf"))


def half_values(data) -> list:
    """The floats that IEEE half bytes hold.

    >>> half_values(b"\\x00\\x3c\\x00\\xc0")
    [1.0, -2.0]
    """
    return list(struct.unpack(f"<{len(data) // 2}e", data))


# which outputs of a kernel stay float32 for float16 inputs (as on the cpu): Attention's log-sum-exp
KEEPS_FLOAT32 = {K.ATTENTION: (1,)}


def in_float32(fn, kernel_name: str):
    """Kernel ``fn`` (``fn(be, *arrays, **attrs)``) for float16 inputs: those widened to float32, the
    float32 kernel run, and its float32 outputs (but those ``KEEPS_FLOAT32`` names) rounded to float16.
    Inputs without float16 go straight to ``fn``."""
    from .elementwise import cast
    keep = KEEPS_FLOAT32.get(kernel_name, ())

    def widened(be, *args, **attrs):
        for a in args:   # a loop, not any(): this runs on every GPU kernel call
            if getattr(a, "dtype", None) is float16:
                break
        else:
            return fn(be, *args, **attrs)
        out = fn(be, *[cast(be, a, dtype=float32) if getattr(a, "dtype", None) is float16 else a for a in args],
                 **attrs)
        if not isinstance(out, (tuple, list)):
            return cast(be, out, dtype=float16) if out.dtype is float32 else out
        return type(out)(cast(be, o, dtype=float16) if o is not None and o.dtype is float32 and k not in keep else o
                         for k, o in enumerate(out))
    widened.__name__ = getattr(fn, "__name__", "kernel")
    return widened
