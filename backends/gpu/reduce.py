"""Reductions over axes (workgroup-shared-memory trees, multi-pass beyond ``CHUNK`` elements a
run), arg-reductions and cumsum (a block scan beyond ``SERIAL_SCAN`` elements a line).

No shader loop runs longer than its bound (see ``kernels/reduce.wgsl``, ``cumsum.wgsl``, ``scan_block.wgsl``):
some implementations stop a shader's loops after 65535 iterations (Mesa's lavapipe), so long
runs take more workgroups and passes instead. Max, min and the arg-reductions propagate NaN as
PyTorch does (an arg-reduction gives the index of the first NaN).
"""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.dtypes import bool_, int32, int64

from .elementwise import contiguous_strides, nan_helpers
from .program import WGSL_TYPES, Program

WG = 256
# runs at least this long get a workgroup per output (chunk), shorter ones a thread per output: on a
# hardware GPU (False) from 64; on a software adapter (True: lavapipe, SwiftShader, whose invocations are
# SIMD lanes and whose barriers are costly) from 1024 -- a bias gradient's sum over 128 rows of 256
# columns took 4.4 ms as trees on lavapipe and 62 ms on SwiftShader, 0.19 and 0.96 ms as serial loops
WG_THRESHOLD = {False: 64, True: 1024}
STEPS = 64               # a thread's strided loop over one chunk runs at most this many times
CHUNK = WG * STEPS       # the elements one workgroup reduces; a longer run is reduced in several passes

# b replaces a if it beats a, or ties with it and comes first (an arg-reduction's first occurrence)
_ARG_COMB = "if (beats(b.v, a.v) || (b.i < a.i && !beats(a.v, b.v))) { return b; } return a;"
# kernel -> (combine body, init): "first" is the chunk's first element (for max, min, arg-reductions)
_FIRST = "at(base + red_offset(lo), lo)"
_OPS = {
    K.SUM: ("return Acc(a.v + b.v, 0);", "Acc(A(0), 0)"),
    K.PROD: ("return Acc(a.v * b.v, 0);", "Acc(A(1), 0)"),
    K.MAX: ("return Acc(max_(a.v, b.v), 0);", _FIRST),
    K.MIN: ("return Acc(min_(a.v, b.v), 0);", _FIRST),
    K.ALL: ("return Acc(min(a.v, b.v), 0);", "Acc(A(1), 0)"),
    K.ANY: ("return Acc(max(a.v, b.v), 0);", "Acc(A(0), 0)"),
    # b wins if it comes first among equals; a NaN beats every number, the first NaN every NaN
    K.ARGMAX: (_ARG_COMB, _FIRST),
    K.ARGMIN: (_ARG_COMB, _FIRST),
}
# beats(p, q): p is strictly further in the arg-reduction's direction (> for argmax, < for argmin),
# or p is NaN and q is not; integers have no NaN, and for them max_/min_ are WGSL's max/min
_CMP = {K.ARGMAX: ">", K.ARGMIN: "<"}
_FLOAT_ORDER = "fn beats(p: A, q: A) -> bool {{ return (p {} q) || (isnan_(p) && !isnan_(q)); }}\n"
_INT_ORDER = ("fn beats(p: A, q: A) -> bool {{ return p {} q; }}\n"
              "fn max_(a: A, b: A) -> A {{ return max(a, b); }}\nfn min_(a: A, b: A) -> A {{ return min(a, b); }}\n")
_ARG = (K.ARGMAX, K.ARGMIN)
_NO_IDENTITY = (K.MAX, K.MIN, K.ARGMAX, K.ARGMIN)


def _reduce(be, name, x, axes, keepdim, shift=None):
    axes = tuple(sorted(a % max(1, len(x.shape)) for a in axes)) if x.shape else ()
    st = contiguous_strides(x.shape)
    kept = [d for d in range(len(x.shape)) if d not in axes]
    out_shape = tuple(1 if d in axes else x.shape[d] for d in range(len(x.shape))) if keepdim \
        else tuple(x.shape[d] for d in kept)
    out_dtype = _out_dtype(name, x)
    out = be.alloc(out_shape, out_dtype)
    rshape = [x.shape[d] for d in axes]
    if out.size == 0:
        return out
    if 0 in rshape and name in _NO_IDENTITY:
        raise ValueError(f"{name}: zero-size reduction has no identity (input shape {x.shape})")
    run = _Run(x, None, [x.shape[d] for d in kept], [st[d] for d in kept], rshape, [st[d] for d in axes], shift)
    _passes(be, name, run, out)
    return out


def sum_exp(be, x, shift, axis):
    """The sum of ``exp(x - shift)`` along ``axis``, ``shift`` holding one value per output (e.g.
    ``x``'s max along it, keepdim): a Sum whose first pass exponentiates as it reads, with no
    array of the exponentials (cross-entropy's long rows: losses.py)."""
    return _reduce(be, K.SUM, x, (axis,), False, shift)


class _Run:
    """One pass's input: values (and, after a first pass of an arg-reduction, the indices found; for
    sum_exp's first pass, the shift of each output), read through kept and reduced shapes and strides."""

    def __init__(self, x, idx, kshape, kstride, rshape, rstride, shift=None):
        self.x, self.idx, self.shift = x, idx, shift
        self.kshape, self.kstride, self.rshape, self.rstride = kshape, kstride, rshape, rstride
        self.nout = self.r = 1
        for d in kshape:
            self.nout *= d
        for d in rshape:
            self.r *= d


def _passes(be, name, run, out):
    """Reduce ``run`` into ``out``: directly when a run fits one chunk, else its chunks' partial
    results first (values, and indices for an arg-reduction), reduced by a further pass."""
    chunks = -(-run.r // CHUNK)
    if chunks <= 1:
        _dispatch(be, name, run, [out], 1)
        return
    arg = name in _ARG
    vals = be.alloc((run.nout, chunks), run.x.dtype if arg else out.dtype)
    writes = [be.alloc((run.nout, chunks), int32), vals] if arg else [vals]
    _dispatch(be, name, run, writes, chunks)
    nxt = _Run(vals, writes[0] if arg else None, [run.nout], [chunks], [chunks], [1])
    _passes(be, name, nxt, out)


def _dispatch(be, name, run, writes, chunks):
    """One pass: ``chunks`` partial results per output (1: the results) into ``writes``."""
    wgred = chunks > 1 or run.r >= WG_THRESHOLD[be.software]     # (chunks > 1: a CHUNK below the threshold)
    t, kr, rr = WGSL_TYPES[run.x.dtype.name], len(run.kshape), len(run.rshape)
    partial_arg = len(writes) == 2
    key = ("reduce", name, t, kr, rr, wgred, run.idx is not None, partial_arg, run.shift is not None, CHUNK)

    def build():
        comb, init = _OPS[name]
        logical, floating, cmp = name in (K.ALL, K.ANY), t == "f32", _CMP.get(name, ">")
        store = "out[w] = acc.i; vals[w] = acc.v;" if partial_arg else \
            "out[w] = acc.i;" if name in _ARG else "out[w] = O(acc.v);"
        outs = [("out", "i32"), ("vals", t)] if partial_arg else [("out", WGSL_TYPES[_out_dtype(name, run.x).name])]
        subs = {"T": t, "A": "u32" if logical else t, "O": outs[0][1], "COMB": comb, "INIT": init,
                "LOAD": "select(0u, 1u, !(in0[j] == T(0)))" if logical else
                        "exp(in0[j] - shift[o_at])" if run.shift is not None else "in0[j]",
                "INDEX": "idx[j]" if run.idx is not None else "i32(r)",
                "HELPERS": (nan_helpers("f32") + _FLOAT_ORDER.format(cmp) if floating and not logical
                            else _INT_ORDER.format(cmp)),
                "STORE": "            " + store, "CHUNK": str(CHUNK),
                "KR": str(kr), "RR": str(rr), "WGRED": "true" if wgred else "false"}
        ins = [("in0", t)] + ([("idx", "i32")] if run.idx is not None else []) + \
            ([("shift", t)] if run.shift is not None else [])
        return Program(name, "reduce", inputs=ins, outputs=outs, wg=WG, subs=subs,
                       uniforms=[("nout", "u32", 1), ("r", "u32", 1), ("chunks", "u32", 1),
                                 ("kshape", "u32", kr), ("kstride", "i32", kr),
                                 ("rshape", "u32", rr), ("rstride", "i32", rr)])
    reads = [a for a in (run.x, run.idx, run.shift) if a is not None]
    groups = run.nout * chunks if wgred else -(-run.nout // WG)
    be.run(key, build, reads, writes, [run.nout, run.r, chunks, *run.kshape, *run.kstride, *run.rshape, *run.rstride],
           groups)


def _out_dtype(name, x):
    return bool_ if name in (K.ALL, K.ANY) else int64 if name in _ARG else x.dtype


def reduction(name):
    def fn(be, x, *, axes, keepdim):
        return _reduce(be, name, x, tuple(axes), keepdim)
    return fn


def arg_reduction(name):
    def fn(be, x, *, axis, keepdim):
        return _reduce(be, name, x, (axis,) if x.shape else (), keepdim)
    return fn


SERIAL_SCAN = 1024       # a line at most this long is scanned by one thread, in order; longer: block scan
SCAN_PER = 8             # a block-scan thread's run: blocks of WG * SCAN_PER elements (8 KiB of shared memory)


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
    _scan(be, x, out, out.size // (n * inner), n, inner)
    return out


def _scan(be, x, out, outer, n, inner):
    """Inclusive prefix sums of ``x`` viewed as [outer, n, inner] along n, into ``out``: in order
    by a thread per line up to SERIAL_SCAN, else by blocks of WG * SCAN_PER whose totals are
    scanned in turn (the same way, so each level divides the length by 2048) and added back."""
    t, lines = WGSL_TYPES[x.dtype.name], outer * inner
    uniforms = [("lines", "u32", 1), ("len", "u32", 1), ("inner", "u32", 1)]
    if n <= SERIAL_SCAN:
        be.run(("cumsum", t), lambda: Program(K.CUMSUM, "cumsum", inputs=[("in0", t)], outputs=[("out", t)], wg=WG,
                                              uniforms=uniforms, subs={"T": t}),
               [x], [out], [lines, n, inner], -(-lines // WG))
        return
    block = WG * SCAN_PER
    blocks = -(-n // block)
    totals, sums = be.alloc((outer, blocks, inner), x.dtype), be.alloc((outer, blocks, inner), x.dtype)
    uniforms = uniforms + [("blocks", "u32", 1)]
    be.run(("scan_block", t, SCAN_PER), lambda: Program(K.CUMSUM, "scan_block", inputs=[("in0", t)],
                                              outputs=[("out", t), ("totals", t)], wg=WG, uniforms=uniforms,
                                              subs={"T": t, "PER": str(SCAN_PER), "BLOCK": str(block)}),
           [x], [out, totals], [lines, n, inner, blocks], lines * blocks)
    _scan(be, totals, sums, outer, blocks, inner)
    be.run(("scan_add", t), lambda: Program(K.CUMSUM, "scan_add", inputs=[("sums", t)], outputs=[("out", t)], wg=WG,
                                            uniforms=[("total", "u32", 1)] + uniforms[1:], subs={"BLOCK": str(block)}),
           [sums], [out], [out.size, n, inner, blocks], -(-out.size // WG))


KERNELS = {**{n: reduction(n) for n in (K.SUM, K.PROD, K.MAX, K.MIN, K.ALL, K.ANY)},
           K.ARGMAX: arg_reduction(K.ARGMAX), K.ARGMIN: arg_reduction(K.ARGMIN), K.CUMSUM: cumsum}
