"""Attention and AttentionGrad, memory-efficient (flash style): no [L, S] score matrix is made.

* ``kernels/attention.wgsl``: the forward, online softmax over key tiles in workgroup memory;
* ``kernels/attention_pre.wgsl``, ``attention_dq.wgsl``, ``attention_dkv.wgsl``: the backward,
  recomputing the weights from the saved log-sum-exp (dq by query rows, dk and dv by key rows);
  ``attention_ds.wgsl``: the scores' gradient, made only for a mask that needs one.

Loops over tiles are split over dispatches (each carries on from what the previous one left in its
outputs) so that an invocation runs at most ``LOOP_BUDGET`` loop iterations in all: Mesa's lavapipe
counts the iterations of all of an invocation's loops together and stops them at 65535 (measured:
a forward over 16384 keys in one dispatch came out wrong), and browsers may time out long dispatches. Limits kept to what browsers grant:
workgroups of 64 threads, ``SHARED`` floats (14 KiB) of workgroup memory, at most 8 storage buffers.
A thread holds its query (or key) rows in registers of ``ME`` floats, the head dims rounded up to a
power of two; E + Ev must leave a tile room in workgroup memory (at most ~3.5k)."""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.dtypes import float32

from .device import GpuLimitError
from .program import Program
from .reduce import reduction
from .runtime import GpuArray

WG = 64
SHARED = 3584
LOOP_BUDGET = 16384     # loop iterations per invocation (a quarter of lavapipe's cap)
_NEG_INF_BITS = 0xFF800000
_SUM = reduction(K.SUM)
_MASK = "mask[(((n / ui(U_mask_div)) % ui(U_M)) * ui(U_L) + i) * ui(U_S) + j]"


class _Shape:
    """The sizes of one call and what they ask of the shaders."""

    def __init__(self, q, k, v, masks, scale, causal, group, mask_div):
        (self.N, self.L, self.E), (self.NK, self.S, _), self.Ev = q.shape, k.shape, v.shape[-1]
        self.scale, self.causal, self.group, self.mask_div = scale, int(bool(causal)), group, mask_div
        self.masked = bool(masks)
        self.M = masks[0].shape[0] if masks else 1
        widest = max(self.E, self.Ev, 1)
        self.me = 1 << (widest - 1).bit_length()
        if self.E + self.Ev + 2 > SHARED:
            raise GpuLimitError(f"{K.ATTENTION}: head dims E={self.E} and Ev={self.Ev} leave no room for a tile in "
                                f"{SHARED} floats of workgroup memory (E + Ev must stay below {SHARED - 1})")
        self.bc = min(64, SHARED // (self.E + self.Ev))          # keys per tile (forward, dq)
        self.bq = min(64, SHARED // (self.E + self.Ev + 2))      # queries per tile (dk, dv)

    def sizes(self):
        return [self.N, self.L, self.S, self.E, self.Ev, self.group, self.M, self.mask_div, self.causal]

    def subs(self):
        return {"ME": str(self.me), "SHARED": str(SHARED), "MASK": _MASK if self.masked else "0.0"}


_SIZES = [("N", "u32", 1), ("L", "u32", 1), ("S", "u32", 1), ("E", "u32", 1), ("Ev", "u32", 1), ("group", "u32", 1),
          ("M", "u32", 1), ("mask_div", "u32", 1), ("causal", "u32", 1)]


def _spans(total, rows, widths):
    """[t0, t1) ranges covering ``total`` tiles (at least one range), each taking at most LOOP_BUDGET loop
    iterations of an invocation: per tile of ``rows`` rows, a loop of ``width`` per row for each of
    ``widths``, and the tile's loads (one pass per 64 floats of each row)."""
    per_tile = rows * (sum(widths) + 2) + rows * sum(widths) // WG + 2
    step = max(1, (LOOP_BUDGET - 4 * max(widths)) // per_tile)
    return [(t, min(total, t + step)) for t in range(0, max(total, 1), step)]


def _mask_input(sh):
    return [("mask", "f32")] if sh.masked else []


def attention(be, q, k, v, *masks, scale, causal, group, mask_div):
    sh = _Shape(q, k, v, masks, scale, causal, group, mask_div)
    out, lse = be.alloc((sh.N, sh.L, sh.Ev), q.dtype), be.alloc((sh.N, sh.L), float32)
    if sh.N * sh.L == 0:
        return out, lse
    qtiles = -(-sh.L // WG)

    def build():
        return Program(K.ATTENTION, "attention", inputs=[("Q", "f32"), ("K", "f32"), ("V", "f32"), *_mask_input(sh)],
                       outputs=[("out", "f32"), ("lse", "f32")], wg=WG, subs=sh.subs(),
                       uniforms=[*_SIZES, ("scale", "f32", 1), ("bc", "u32", 1), ("t0", "u32", 1), ("t1", "u32", 1),
                                 ("neg_inf", "u32", 1)])
    for t0, t1 in _spans(-(-sh.S // sh.bc), sh.bc, (sh.E, sh.Ev)):
        be.run(("attention", sh.me, sh.masked), build, [q, k, v, *masks], [out, lse],
               [*sh.sizes(), scale, sh.bc, t0, t1, _NEG_INF_BITS], sh.N * qtiles)
    return out, lse


def attention_grad(be, dout, q, k, v, out, lse, dlse, *masks, scale, causal, group, mask_div, mask_grad):
    sh = _Shape(q, k, v, masks, scale, causal, group, mask_div)
    dq, dk, dv = be.alloc(q.shape, q.dtype), be.alloc(k.shape, k.dtype), be.alloc(v.shape, v.dtype)
    grads = [dq, dk, dv]
    stats = be.alloc((sh.N, sh.L, 2), float32)
    if sh.N * sh.L:
        _run_pre(be, sh, dout, out, lse, dlse, stats)
    _run_dq(be, sh, [q, k, v, dout, stats, *masks], dq)
    _run_dkv(be, sh, [q, k, v, dout, stats, *masks], dk, dv)
    if mask_grad:
        grads.append(_mask_grad(be, sh, [q, k, v, dout, stats, *masks], masks[0]))
    return tuple(grads)


def _run_pre(be, sh, dout, out, lse, dlse, stats):
    rows = sh.N * sh.L

    def build():
        return Program(K.ATTENTION_GRAD, "attention_pre",
                       inputs=[("dout", "f32"), ("out", "f32"), ("lse", "f32"), ("dlse", "f32")],
                       outputs=[("stats", "f32")], wg=WG, uniforms=[("rows", "u32", 1), ("Ev", "u32", 1)])
    be.run(("attention_pre",), build, [dout, out, lse, dlse], [stats], [rows, sh.Ev], -(-rows // WG))


_GRAD_INPUTS = [("Q", "f32"), ("K", "f32"), ("V", "f32"), ("dO", "f32"), ("stats", "f32")]


def _run_dq(be, sh, inputs, dq):
    """dq, a workgroup per (query batch, 64 query rows); zeros where there is no key."""
    if sh.N * sh.L == 0:
        return
    qtiles = -(-sh.L // WG)

    def build():
        return Program(K.ATTENTION_GRAD, "attention_dq", inputs=[*_GRAD_INPUTS, *_mask_input(sh)],
                       outputs=[("dQ", "f32")], wg=WG, subs=sh.subs(),
                       uniforms=[*_SIZES, ("scale", "f32", 1), ("bc", "u32", 1), ("t0", "u32", 1), ("t1", "u32", 1)])
    for t0, t1 in _spans(-(-sh.S // sh.bc), sh.bc, (sh.E, sh.Ev, sh.E)):
        be.run(("attention_dq", sh.me, sh.masked), build, inputs, [dq], [*sh.sizes(), sh.scale, sh.bc, t0, t1],
               sh.N * qtiles)


def _run_dkv(be, sh, inputs, dk, dv):
    """dk and dv, a workgroup per (key batch, 64 key rows), over every query of the key's group."""
    if sh.NK * sh.S == 0:
        return
    ktiles = -(-sh.S // WG)

    def build():
        return Program(K.ATTENTION_GRAD, "attention_dkv", inputs=[*_GRAD_INPUTS, *_mask_input(sh)],
                       outputs=[("dK", "f32"), ("dV", "f32")], wg=WG, subs=sh.subs(),
                       uniforms=[*_SIZES, ("NK", "u32", 1), ("scale", "f32", 1), ("bq", "u32", 1), ("t0", "u32", 1),
                                 ("t1", "u32", 1)])
    for t0, t1 in _spans(sh.group * -(-sh.L // sh.bq), sh.bq, (sh.E, sh.Ev, sh.E)):
        be.run(("attention_dkv", sh.me, sh.masked), build, inputs, [dk, dv],
               [*sh.sizes(), sh.NK, sh.scale, sh.bq, t0, t1], sh.NK * ktiles)


def _mask_grad(be, sh, inputs, mask):
    """The scores' gradient [N, L, S], summed to the mask's [M, L, S] (query n adds mask (n // div) % M)."""
    ds = be.alloc((sh.N, sh.L, sh.S), float32)
    total = sh.N * sh.L * sh.S
    if total:
        def build():
            return Program(K.ATTENTION_GRAD, "attention_ds", inputs=[*_GRAD_INPUTS, ("mask", "f32")],
                           outputs=[("ds", "f32")], wg=WG, subs={"MASK": _MASK},
                           uniforms=[*_SIZES, ("scale", "f32", 1)])
        be.run(("attention_ds",), build, inputs, [ds], [*sh.sizes(), sh.scale], -(-total // WG))
    folded = GpuArray(ds.storage, (sh.N // (sh.M * sh.mask_div), sh.M, sh.mask_div, sh.L * sh.S), float32)
    return GpuArray(_SUM(be, folded, axes=(0, 2), keepdim=False).storage, mask.shape, float32)


KERNELS = {K.ATTENTION: attention, K.ATTENTION_GRAD: attention_grad}
