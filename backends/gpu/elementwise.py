"""Elementwise kernels: one templated shader (``kernels/elementwise.wgsl``), one WGSL expression per kernel.

Inputs are read whole, as a splat, or through (offset, strides) over the output shape, so the
same shader also broadcasts, transposes, expands and slices. Without strided inputs and with
a size divisible by 4 it runs on ``vec4`` items. Creation kernels (fill, arange, random) are
elementwise maps with no inputs.
"""
from __future__ import annotations

import struct

from webgrad import kernel_names as K
from webgrad.dtypes import bool_, float16, float32, int32, round_to_float32

from .half import half_store
from .program import WGSL_TYPES, Program, kernel_source

WG = 64

_SIGN = "select(select(T0(0), T0(1), x0 > T0(0)), T0(-1), x0 < T0(0))"   # NaN -> 0, as torch.sign

# kernel -> WGSL expression of x0 (its type T0; F its float type), p0/p1 the float params.
# NaN and signed zeros as PyTorch: max_, min_ (kernels/nan.wgsl) propagate NaN; relu(-0.0) is -0.0
FLOAT_UNARY = {
    K.NEG: "-x0", K.ABS: "abs(x0)", K.EXP: "exp(x0)", K.LOG: "log_(x0)", K.LOG1P: "log1p_(x0)",
    K.LOG2: "log2_(x0)", K.LOG10: "log_(x0) * T0(0.4342944819032518)",
    K.EXPM1: "expm1_(x0)", K.SQRT: "sqrt(x0)", K.RSQRT: "T0(1.0) / sqrt(x0)", K.SQUARE: "x0 * x0",
    K.RECIPROCAL: "T0(1.0) / x0", K.SIN: "sin_(x0)", K.COS: "cos_(x0)", K.TAN: "tan_(x0)", K.TANH: "tanh_(x0)",
    K.SIGMOID: "sigmoid_(x0)", K.RELU: "max_(x0, T0(0.0))",
    K.LEAKY_RELU: "select(x0 * p0, x0, x0 > T0(0.0))",
    K.ELU: "select(p0 * expm1_(x0), x0, x0 > T0(0.0))",
    K.SILU: "x0 * sigmoid_(x0)", K.SOFTPLUS: "select(softplus_(x0 * p0) / p0, x0, x0 * p0 > T0(p1))",
    K.SIGN: _SIGN, K.FLOOR: "floor(x0)", K.CEIL: "ceil(x0)", K.ROUND: "round(x0)", K.ERF: "erf_(x0)",
    K.ERFC: "erfc_(x0)", K.ERFCX: "erfcx_(x0)", K.ERFINV: "erfinv_(x0)", K.NDTRI: "ndtri_(x0)",
    K.LGAMMA: "lgamma_(x0)", K.DIGAMMA: "digamma_(x0)",
    K.CLAMP: "min_(max_(x0, T0(p0)), T0(p1))", K.IDENTITY: "x0",
}
GELU = {"none": "T0(0.5) * x0 * (T0(1.0) + erf_(x0 * T0(0.7071067811865476)))",
        "tanh": "T0(0.5) * x0 * (T0(1.0) + tanh_(T0(0.7978845608028654) * (x0 + T0(0.044715) * x0 * x0 * x0)))"}
INT_UNARY = {
    K.NEG: "-x0", K.ABS: "abs(x0)", K.SQUARE: "x0 * x0", K.RELU: "max(x0, T0(0))",
    K.SIGN: _SIGN, K.FLOOR: "x0", K.CEIL: "x0", K.ROUND: "x0", K.IDENTITY: "x0",
    K.CLAMP: "min(max(x0, T0(i32(p0))), T0(i32(p1)))",
}
FLOAT_BINARY = {K.ADD: "x0 + x1", K.SUB: "x0 - x1", K.MUL: "x0 * x1", K.DIV: "x0 / x1", K.POW: "pow_(x0, x1)",
                K.MAXIMUM: "max_(x0, x1)", K.MINIMUM: "min_(x0, x1)", K.ATAN2: "atan2_(x0, x1)",
                K.FLOOR_DIVIDE: "floordiv_(x0, x1)", K.REMAINDER: "remainder_(x0, x1)",
                K.FMOD: "fmod_(flush_(x0), flush_(x1))"}
INT_BINARY = {K.ADD: "x0 + x1", K.SUB: "x0 - x1", K.MUL: "x0 * x1", K.MAXIMUM: "max(x0, x1)",
              K.MINIMUM: "min(x0, x1)", K.DIV: "T0(F(x0) / F(x1))", K.POW: "ipow_(x0, x1)",
              K.FLOOR_DIVIDE: "ifloordiv_(x0, x1)", K.REMAINDER: "iremainder_(x0, x1)",
              K.FMOD: "x0 % x1", K.BITWISE_AND: "x0 & x1", K.BITWISE_OR: "x0 | x1", K.BITWISE_XOR: "x0 ^ x1",
              K.LEFT_SHIFT: "shl_(x0, x1)", K.RIGHT_SHIFT: "shr_(x0, x1)"}
BOOL_BINARY = {K.ADD: "max(x0, x1)", K.MUL: "x0 * x1", K.MAXIMUM: "max(x0, x1)", K.MINIMUM: "min(x0, x1)",
               K.POW: "select(x0, T0(1), x1 == T1(0))", K.BITWISE_AND: "x0 & x1", K.BITWISE_OR: "x0 | x1",
               K.BITWISE_XOR: "x0 ^ x1"}
# "!(a == b)", not "a != b": a compiler that assumes no NaN may answer false for NaN != x (lavapipe does)
PREDICATES = {K.EQUAL: "x0 == x1", K.NOT_EQUAL: "!(x0 == x1)", K.LESS: "x0 < x1", K.LESS_EQUAL: "x0 <= x1",
              K.GREATER: "x0 > x1", K.GREATER_EQUAL: "x0 >= x1",
              K.LOGICAL_AND: "!(x0 == T0(0)) & !(x1 == T1(0))", K.LOGICAL_OR: "!(x0 == T0(0)) | !(x1 == T1(0))",
              K.LOGICAL_XOR: "!(x0 == T0(0)) != !(x1 == T1(0))"}
# the functions of kernels/nan.wgsl and kernels/helpers.wgsl: an expression naming one gets both
_HELPERS = ("isnan_", "nan_(", "max_(", "min_(", "expm1_", "log1p_", "tanh_", "sigmoid_", "erf_",
            "softplus_", "pow_", "atan2_", "log_", "floordiv_", "remainder_", "fmod_", "log2_", "shl_(", "shr_(")
_TRIG = ("sin_(", "cos_(", "tan_(")   # kernels/trig.wgsl's scalar sin1_, cos1_, tan1_, lifted to F
# kernels/special.wgsl's (it calls helpers.wgsl's and trig.wgsl's)
_SPECIAL = ("erfc_(", "erfcx_(", "erfinv_(", "ndtri_(", "lgamma_(", "digamma_(", "trigamma_(", "zeta_(", "signbit_(",
            "copysign_(", "nextafter_(", "frexp_", "gcd_(", "lcm_(", "igamma_(")
_INT_LIMIT = 2147483520.0           # the largest float32 below 2**31


# the shapes of F the helpers use: U (bits), B (bool), I (i32)
_HELPER_ALIASES = {vec: [f"alias U = {t('u32')};", f"alias B = {t('bool')};", f"alias I = {t('i32')};"]
                   for vec, t in ((False, str), (True, lambda e: f"vec4<{e}>"))}


def _helper_source(helpers: bool, trig: bool, vec: bool, special: bool = False) -> str:
    """The helper functions an expression calls: kernels/nan.wgsl and kernels/helpers.wgsl,
    kernels/special.wgsl after them, and kernels/trig.wgsl (written for scalars) with sin_, cos_
    and tan_ over F."""
    text = kernel_source("nan") + kernel_source("helpers") if helpers or special else ""
    if trig or special:
        text += kernel_source("trig")
        for f in ("sin", "cos", "tan"):
            body = f"F({', '.join(f'{f}1_(x.{c})' for c in 'xyzw')})" if vec else f"{f}1_(x)"
            text += f"fn {f}_(x: F) -> F {{ return {body}; }}\n"
    return text + (kernel_source("special") if special else "")


def scalar_helpers(code: str) -> str:
    """The aliases (F = f32, U, B, I) and the helper functions (nan.wgsl, helpers.wgsl) that scalar
    float32 WGSL ``code`` calls, to go before it (sin_, cos_ and tan_ are not among them).

    >>> "fn max_" in scalar_helpers("max_(x, F(0.0))"), "fn max_" in scalar_helpers("x + 1.0")
    (True, False)
    """
    text = "alias F = f32;\n" + "\n".join(_HELPER_ALIASES[False]) + "\n"
    return text + _helper_source(any(h in code for h in _HELPERS), False, False, _calls_special(code))


def _calls_special(code: str) -> bool:
    return any(h in code for h in _SPECIAL)


def nan_helpers(float_type: str) -> str:
    """The WGSL of ``kernels/nan.wgsl`` (isnan_, nan_, max_, min_) for scalars of ``float_type``.

    >>> "fn isnan_" in nan_helpers("f32")
    True
    """
    return f"alias F = {float_type};\n" + "\n".join(_HELPER_ALIASES[False]) + "\n" + kernel_source("nan")


def _as_bool(expr):
    return f"select(O(0), O(1), {expr})"


class View:
    """An input read through an element offset and per-output-dimension strides (0 = broadcast)."""

    __slots__ = ("array", "offset", "strides")

    def __init__(self, array, offset, strides):
        self.array, self.offset, self.strides = array, offset, tuple(strides)


def contiguous_strides(shape):
    """Row-major element strides.

    >>> contiguous_strides((2, 3, 4))
    (12, 4, 1)
    """
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def broadcast_view(a, out_shape) -> View:
    """``a`` broadcast to ``out_shape`` as a strided view."""
    lead = len(out_shape) - len(a.shape)
    st = contiguous_strides(a.shape)
    return View(a, 0, [0] * lead + [0 if d == 1 else s for d, s in zip(a.shape, st)])


def _ty(dtype, vec):
    """The WGSL storage type of ``dtype`` (its vec4 when ``vec``)."""
    t = WGSL_TYPES[dtype.name]
    return f"vec4<{t}>" if vec else t


def _compute_ty(dtype, vec):
    """The WGSL type an expression computes ``dtype`` in: float16 in float32, as PyTorch's half ops."""
    return _ty(float32 if dtype is float16 else dtype, vec)


def _load(k, index, dtype, vec):
    """The WGSL reading input ``k`` at ``index``: float16 widened to float32 (exact)."""
    read = f"in{k}[{index}]"
    return f"{_compute_ty(dtype, vec)}({read})" if dtype is float16 else read


_NO_PARAMS, _NO_QPARAMS = (0.0, 0.0), (0, 0, 0, 0)
MAX_CALLS = 8192                    # cached call signatures per backend


def elementwise(be, label, expr, inputs, out_shape, out_dtype, params=_NO_PARAMS, qparams=_NO_QPARAMS,
                extra="", vec4=True):
    """Record ``out = expr(x0, x1, ...)`` over ``out_shape`` and return the output GpuArray.
    ``inputs`` are GpuArrays (broadcast as needed) or Views; ``params`` (two or more floats) are
    uniforms ``p0``, ``p1`` in ``expr`` (all at ``uf(U_p + k)``); ``extra`` is WGSL put before it."""
    out_shape = tuple(out_shape)
    call = elementwise_call(be, label, expr, inputs, out_shape, out_dtype, params, qparams, extra, vec4)
    return launch(be, call, [a if type(a) is not View else a.array for a in inputs], out_shape, out_dtype)


def elementwise_call(be, label, expr, inputs, out_shape, out_dtype, params=_NO_PARAMS, qparams=_NO_QPARAMS,
                     extra="", vec4=True):
    """The prepared dispatch (``Call``, None for an empty output) of an elementwise map,
    cached per call signature (kernel, input shapes or views, dtypes, params)."""
    sig = ("ew", label, expr, out_shape, out_dtype,
           params if params is _NO_PARAMS else struct.pack(f"<{len(params)}d", *params),  # keeps -0.0 apart
           tuple(qparams), extra, vec4,
           *[(a.shape, a.dtype) if type(a) is not View else (a.array.dtype, a.offset, a.strides) for a in inputs])
    calls = be.calls
    call = calls.get(sig, False)
    if call is False:
        if len(calls) >= MAX_CALLS:
            calls.clear()
        call = calls[sig] = _prepare(be, label, expr, inputs, out_shape, out_dtype, params, qparams, extra, vec4)
    return call


def launch(be, call, arrays, shape, dtype):
    """Record ``call`` on ``arrays`` plus a new output of ``shape``/``dtype``; return the output."""
    out = be.alloc(shape, dtype)
    if call is not None:
        arrays.append(out)
        be.record(call, arrays)
    return out


def _prepare(be, label, expr, inputs, out_shape, out_dtype, params, qparams, extra, vec4):
    """The Call of one elementwise signature (None for an empty output)."""
    n = 1
    for d in out_shape:
        n *= d
    if n == 0:
        return None
    modes, views = [], []
    for a in inputs:
        if isinstance(a, View):
            views.append(a)
            modes.append("s")
        elif a.size == n:
            views.append(View(a, 0, ()))
            modes.append("f")
        elif a.size == 1:
            views.append(View(a, 0, ()))
            modes.append("1")
        else:
            views.append(broadcast_view(a, out_shape))
            modes.append("s")
    rank = len(out_shape) if "s" in modes else 0
    vec = vec4 and "s" not in modes and n % 4 == 0
    dtypes = tuple(v.array.dtype.name for v in views)
    helpers = any(h in expr or h in extra for h in _HELPERS)
    trig = any(h in expr for h in _TRIG)
    special = _calls_special(expr) or _calls_special(extra)
    helpers = helpers or special
    key = ("ew", label, expr, extra, dtypes, out_dtype.name, tuple(modes), vec, rank)

    def build():
        names = [f"x{k}" for k in range(len(views))]
        uni = [("n", "u32", 1), ("p", "f32", max(2, len(params))), ("q", "i32", 4)]
        if rank:
            uni.append(("shape", "u32", rank))
        aliases = [f"alias T{k} = {_compute_ty(v.array.dtype, vec)};" for k, v in enumerate(views)]
        aliases += [f"alias O = {_compute_ty(out_dtype, vec)};", f"alias F = {'vec4<f32>' if vec else 'f32'};"]
        if helpers:
            aliases += _HELPER_ALIASES[vec]
        half = out_dtype is float16
        if half:
            aliases.append(f"alias S = {_ty(out_dtype, vec)};")
        loads = []
        for k, (m, v) in enumerate(zip(modes, views)):
            dt = v.array.dtype
            if m == "f":
                loads.append(f"    let x{k} = {_load(k, 'i', dt, vec)};")
            elif m == "1":
                loads.append(f"    let x{k} = T{k}({_load(k, '0', dt, False)});")
            else:
                uni += [(f"o{k}", "i32", 1), (f"s{k}", "i32", rank)]
                loads.append(f"    var j{k}: i32 = ii(U_o{k});")
        if rank:
            loads.append("    var rem = i;")
            loads.append(f"    for (var d = {rank - 1}; d >= 0; d--) {{")
            loads.append("        let sz = ui(U_shape + u32(d)); let c = i32(rem % sz); rem = rem / sz;")
            loads += [f"        j{k} += c * ii(U_s{k} + u32(d));" for k, m in enumerate(modes) if m == "s"]
            loads.append("    }")
        loads += [f"    let x{k} = {_load(k, f'j{k}', views[k].array.dtype, False)};" for k, m in enumerate(modes)
                  if m == "s"]
        args = ", ".join(["i: u32"] + [f"x{k}: T{k}" for k in range(len(views))])
        call = ", ".join(["i"] + list(names))
        ins = [(f"in{k}", _ty(v.array.dtype, vec and m == "f")) for k, (m, v) in enumerate(zip(modes, views))]
        return Program(f"{label}", "elementwise", inputs=ins, outputs=[("out", _ty(out_dtype, vec))], uniforms=uni,
                       wg=WG, subs={"ALIASES": "\n".join(aliases),
                                    "HELPERS": _helper_source(helpers, trig, vec, special) + extra
                                    + (half_store(vec) if half else ""), "ARGS": args, "CALL": call,
                                    "LOADS": "\n".join(loads), "EXPR": expr, "STORE": "half_" if half else ""})

    items = n // 4 if vec else n
    uniforms = [items] + [float(p) for p in params] + [0.0] * (2 - len(params)) + [int(q) for q in qparams]
    uniforms += list(out_shape) if rank else []
    for m, v in zip(modes, views):
        if m == "s":
            uniforms += [v.offset] + list(v.strides)
    return be.prepare(key, build, uniforms, -(-items // WG))


# ---------------------------------------------------------------- kernel functions

def _unary_expr(name, dtype):
    table = FLOAT_UNARY if dtype.is_floating else INT_UNARY
    expr = table.get(name)
    if expr is None:
        raise NotImplementedError(f"kernel {name!r} on backend 'wgpu': no WGSL form for dtype {dtype.name}")
    return expr


def unary(name):
    def fn(be, x, **attrs):
        if not attrs:                     # the common case, cached whole: (shape, dtype) -> Call
            hit = be.calls.get(("unary", name, x.shape, x.dtype))
            if hit is not None:
                return launch(be, hit, [x], x.shape, x.dtype)
        if name == K.GELU:
            expr = GELU[attrs["approximate"]]
        else:
            expr = _unary_expr(name, x.dtype if x.dtype is not bool_ else int32)
        if x.dtype is bool_ and name not in (K.IDENTITY, K.CLAMP, K.FLOOR, K.CEIL, K.ROUND, K.ABS, K.RELU):
            raise NotImplementedError(f"kernel {name!r} on backend 'wgpu' does not take bool input")
        params = (attrs.get("negative_slope", attrs.get("alpha", attrs.get("beta", 0.0))), attrs.get("threshold", 0.0))
        if name == K.CLAMP:
            lo, hi = attrs.get("min"), attrs.get("max")
            big = float("inf") if x.dtype.is_floating else _INT_LIMIT
            params = (-big if lo is None else lo, big if hi is None else hi)
        call = elementwise_call(be, name, expr, [x], x.shape, x.dtype, params=params)
        if not attrs and call is not None:
            be.calls[("unary", name, x.shape, x.dtype)] = call
        return launch(be, call, [x], x.shape, x.dtype)
    return fn


def binary(name):
    pred = name in PREDICATES

    def fn(be, a, b):
        key = ("binary", name, a.shape, b.shape, a.dtype, b.dtype)
        hit = be.calls.get(key)
        if hit is None:
            shape = a.shape if a.shape == b.shape else _broadcast(a.shape, b.shape)
            if pred:
                expr, dtype = _as_bool(PREDICATES[name]), bool_
            else:
                table = FLOAT_BINARY if a.dtype.is_floating else INT_BINARY if a.dtype.kind == "i" else BOOL_BINARY
                if name not in table:
                    raise NotImplementedError(f"kernel {name!r} on backend 'wgpu' does not take {a.dtype.name} input")
                expr, dtype = table[name], a.dtype
            hit = be.calls[key] = (elementwise_call(be, name, expr, [a, b], shape, dtype), shape, dtype)
        call, shape, dtype = hit
        return launch(be, call, [a, b], shape, dtype)
    return fn


def _broadcast(*shapes):
    """The shapes' broadcast, or a ValueError (as numpy's) where they do not broadcast."""
    rank = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]):
        sizes = set(dims) - {1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def where(be, c, a, b):
    return elementwise(be, K.WHERE, "select(x2, x1, x0 != T0(0))", [c, a, b], _broadcast(c.shape, a.shape, b.shape),
                       a.dtype)


def bitwise_not(be, x):
    """``~x``: bool (held as u32 0/1) flips its low bit."""
    if x.dtype.is_floating:
        raise NotImplementedError(f"kernel {K.BITWISE_NOT!r} on backend 'wgpu' does not take {x.dtype.name} input")
    return elementwise(be, K.BITWISE_NOT, "x0 ^ T0(1)" if x.dtype is bool_ else "~x0", [x], x.shape, x.dtype)


def logical_not(be, x):
    return elementwise(be, K.LOGICAL_NOT, _as_bool("x0 == T0(0)"), [x], x.shape, bool_)


# float32 -> int32 out of range (NaN, +-inf, |x| >= 2**31) gives INT_MIN, as numpy and PyTorch on x86
# (WGSL saturates instead); NaN is true as a bool
_FLOAT_TO_INT = "select(O(x0), O(bitcast<i32>(0x80000000u)), isnan_(x0) | (abs(x0) >= T0(2147483648.0)))"


def cast(be, x, *, dtype):
    be._check_dtype(dtype)
    if dtype is bool_:
        expr = _as_bool("!(x0 == T0(0))")
    else:
        expr = _FLOAT_TO_INT if x.dtype.is_floating and dtype.kind == "i" else "O(x0)"
    return elementwise(be, K.CAST, expr, [x], x.shape, dtype)


SMALL_FILL = 256          # fills up to this size are uploaded (queue write, no dispatch)


def fill(be, *, shape, value, dtype):
    be._check_dtype(dtype)
    n = 1
    for d in shape:
        n *= d
    if n <= SMALL_FILL:
        return be.upload([value] * n, tuple(shape), dtype)
    if dtype is bool_:   # held as u32: from the int uniform (O(p0) would convert a float into vec4<u32>)
        return elementwise(be, K.FILL, "O(u32(q0))", [], shape, dtype, qparams=(int(bool(value)), 0, 0, 0))
    if dtype.kind == "i":
        return elementwise(be, K.FILL, "O(q0)", [], shape, dtype, qparams=(int(value), 0, 0, 0))
    return elementwise(be, K.FILL, "O(p0)", [], shape, dtype, params=(value, 0.0))


def arange(be, *, start, step, size, dtype):
    be._check_dtype(dtype)
    if dtype.is_floating:   # start and step as float32 pairs (value + remainder): within an ulp of float64's
        (start, start_rest), (step, step_rest) = _float_pair(start), _float_pair(step)
        expr = "O(fma(p1, f32(i), p0) + fma(uf(U_p + 3u), f32(i), uf(U_p + 2u)))"
        return elementwise(be, K.ARANGE, expr, [], (size,), dtype, params=(start, step, start_rest, step_rest),
                           vec4=False)
    return elementwise(be, K.ARANGE, "O(q0 + q1 * i32(i))", [], (size,), dtype, qparams=(start, step, 0, 0),
                       vec4=False)


def _float_pair(x: float) -> tuple:
    """``x`` as float32 ``high`` plus float32 ``low``: high is x rounded, low what rounding left out."""
    high = round_to_float32(x)
    return high, round_to_float32(x - high)


def linspace(be, *, start, end, steps, dtype):
    """torch.linspace's values (see kernel_names.LINSPACE) with WGSL's fma, in float32 (PyTorch's float32
    values exactly; integers from float32 here where PyTorch computes them in float64)."""
    be._check_dtype(dtype)
    start, end = round_to_float32(start), round_to_float32(end)
    step = round_to_float32((end - start) / (steps - 1)) if steps > 1 else 0.0
    step_ = "uf(U_p + 2u)"   # the third float param
    value = f"select(fma(-{step_}, f32(q0 - 1 - i32(i)), p1), fma({step_}, f32(i), p0), i32(i) < q1)"
    expr = f"O({value})" if dtype.is_floating else f"O(i32({value}))"
    return elementwise(be, K.LINSPACE, expr, [], (steps,), dtype, params=(start, end, step),
                       qparams=(steps, max(steps // 2, 1), 0, 0), vec4=False)


def random_values(be, *, shape, dtype, values):
    """The values a Generator drew on the host (PyTorch's numbers: a numpy array, or a list without numpy), uploaded."""
    if isinstance(values, list):
        return be.upload(values, tuple(shape), dtype)
    return be.from_array(values.reshape(tuple(shape)), dtype)


KERNELS = {**{n: unary(n) for n in (set(FLOAT_UNARY) | {K.GELU})},
           **{n: binary(n) for n in (set(FLOAT_BINARY) | set(INT_BINARY) | set(PREDICATES))},
           K.WHERE: where, K.BITWISE_NOT: bitwise_not, K.LOGICAL_NOT: logical_not, K.CAST: cast, K.FILL: fill,
           K.ARANGE: arange, K.LINSPACE: linspace,
           K.RANDOM_VALUES: random_values}
