"""Reductions over axes (workgroup-shared-memory trees), arg-reductions and cumsum."""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.dtypes import bool_, int64

from .elementwise import contiguous_strides
from .program import WGSL_TYPES, Program

WG = 256
WG_THRESHOLD = 64        # reductions at least this long get a workgroup per output

# kernel -> (accumulator init, combine body); "first" is the first element of the reduced run
_OPS = {
    K.SUM: ("A(0)", "return Acc(a.v + b.v, 0);"),
    K.PROD: ("A(1)", "return Acc(a.v * b.v, 0);"),
    K.MAX: ("load(base)", "return Acc(max(a.v, b.v), 0);"),
    K.MIN: ("load(base)", "return Acc(min(a.v, b.v), 0);"),
    K.ALL: ("A(1)", "return Acc(min(a.v, b.v), 0);"),
    K.ANY: ("A(0)", "return Acc(max(a.v, b.v), 0);"),
    K.ARGMAX: ("load(base)", "if (b.v > a.v || (b.v == a.v && b.i < a.i)) { return b; } return a;"),
    K.ARGMIN: ("load(base)", "if (b.v < a.v || (b.v == a.v && b.i < a.i)) { return b; } return a;"),
}


def _reduce(be, name, x, axes, keepdim):
    axes = tuple(sorted(a % max(1, len(x.shape)) for a in axes)) if x.shape else ()
    st = contiguous_strides(x.shape)
    kept = [d for d in range(len(x.shape)) if d not in axes]
    kshape, kstride = [x.shape[d] for d in kept], [st[d] for d in kept]
    rshape, rstride = [x.shape[d] for d in axes], [st[d] for d in axes]
    out_shape = tuple(1 if d in axes else x.shape[d] for d in range(len(x.shape))) if keepdim \
        else tuple(kshape)
    logical = name in (K.ALL, K.ANY)
    arg = name in (K.ARGMAX, K.ARGMIN)
    out_dtype = bool_ if logical else int64 if arg else x.dtype
    out = be.alloc(out_shape, out_dtype)
    nout, r = out.size, 1
    for d in rshape:
        r *= d
    if nout == 0:
        return out
    if r == 0 and name in (K.MAX, K.MIN, K.ARGMAX, K.ARGMIN):
        raise ValueError(f"{name}: zero-size reduction has no identity (input shape {x.shape})")
    wgred = r >= WG_THRESHOLD
    t = WGSL_TYPES[x.dtype.name]
    key = ("reduce", name, t, len(kshape), len(rshape), wgred)

    def build():
        init, comb = _OPS[name]
        subs = {"T": t, "A": "u32" if logical else t, "O": WGSL_TYPES[out_dtype.name],
                "LOAD": "select(0u, 1u, in0[j] != T(0))" if logical else "in0[j]", "COMB": comb, "INIT": init,
                "FINAL": ("sh[0]" if wgred else "acc") + (".i" if arg else ".v"),
                "KR": str(len(kshape)), "RR": str(len(rshape)), "WGRED": "true" if wgred else "false"}
        return Program(name, "reduce", inputs=[("in0", t)], outputs=[("out", subs["O"])], wg=WG, subs=subs,
                       uniforms=[("nout", "u32", 1), ("r", "u32", 1), ("kshape", "u32", len(kshape)),
                                 ("kstride", "i32", len(kshape)), ("rshape", "u32", len(rshape)),
                                 ("rstride", "i32", len(rshape))])
    be.run(key, build, [x], [out], [nout, r, *kshape, *kstride, *rshape, *rstride],
           nout if wgred else -(-nout // WG))
    return out


def reduction(name):
    def fn(be, x, *, axes, keepdim):
        return _reduce(be, name, x, tuple(axes), keepdim)
    return fn


def arg_reduction(name):
    def fn(be, x, *, axis, keepdim):
        return _reduce(be, name, x, (axis,) if x.shape else (), keepdim)
    return fn


def cumsum(be, x, *, axis):
    out = be.alloc(x.shape, x.dtype)
    if out.size == 0:
        return out
    if not x.shape:
        from .elementwise import elementwise
        return elementwise(be, K.IDENTITY, "x0", [x], (), x.dtype)
    axis %= len(x.shape)
    n, inner = x.shape[axis], 1
    for d in x.shape[axis + 1:]:
        inner *= d
    lines = out.size // n
    t = WGSL_TYPES[x.dtype.name]
    be.run(("cumsum", t), lambda: Program(K.CUMSUM, "cumsum", inputs=[("in0", t)], outputs=[("out", t)], wg=WG,
                                          uniforms=[("lines", "u32", 1), ("len", "u32", 1), ("inner", "u32", 1)],
                                          subs={"T": t}),
           [x], [out], [lines, n, inner], -(-lines // WG))
    return out


KERNELS = {**{n: reduction(n) for n in (K.SUM, K.PROD, K.MAX, K.MIN, K.ALL, K.ANY)},
           K.ARGMAX: arg_reduction(K.ARGMAX), K.ARGMIN: arg_reduction(K.ARGMIN), K.CUMSUM: cumsum}
