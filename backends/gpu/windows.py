"""Im2Col and Col2Im (torch's unfold/fold on [N, C, H, W]): conv2d is im2col + matmul, and its
gradients are matmuls + col2im. Col2Im gathers per image element, so it needs no atomics; a
window of more than ``Q_CHUNK`` offsets takes several dispatches (no shader loop runs longer)."""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.shapes import window_count

from .elementwise import WG
from .program import WGSL_TYPES, Program


# the window geometry both shaders read from the uniforms (the order of ``geometry`` in _run)
GEOMETRY = """    let C = ii(U_g); let H = ii(U_g + 1u); let W = ii(U_g + 2u);
    let kh = ii(U_g + 3u); let kw = ii(U_g + 4u); let sh = ii(U_g + 5u); let sw = ii(U_g + 6u);
    let ph = ii(U_g + 7u); let pw = ii(U_g + 8u); let dh = ii(U_g + 9u); let dw = ii(U_g + 10u);
    let oh = ii(U_g + 11u); let ow = ii(U_g + 12u);
    let L = oh * ow;"""


Q_CHUNK = 4096          # Col2Im: window offsets (kernel rows x columns) one dispatch walks


def _run(be, name, body, src, out, geometry, chunks=(0,)):
    """Dispatch ``body`` once per first window offset in ``chunks`` (Col2Im's; Im2Col has none)."""
    t = WGSL_TYPES[src.dtype.name]
    if out.size:
        for q_begin in chunks:
            be.run((body, t), lambda: Program(name, body, inputs=[("in0", t)], outputs=[("out", t)], wg=WG,
                                              uniforms=[("total", "u32", 1), ("g", "i32", 13), ("q_begin", "i32", 1)],
                                              subs={"T": t, "GEOMETRY": GEOMETRY, "Q_CHUNK": str(Q_CHUNK)}),
                   [src], [out], [out.size, *geometry, q_begin], -(-out.size // WG))
    return out


def im2col(be, x, *, kernel_size, stride, padding, dilation):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    n, c, h, w = x.shape
    oh, ow = window_count(h, kh, sh, ph, dh), window_count(w, kw, sw, pw, dw)
    out = be.alloc((n, c * kh * kw, oh * ow), x.dtype)
    return _run(be, K.IM2COL, "im2col", x, out, (c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow))


def col2im(be, cols, *, output_size, kernel_size, stride, padding, dilation):
    (h, w), (kh, kw), (sh, sw), (ph, pw), (dh, dw) = output_size, kernel_size, stride, padding, dilation
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    oh, ow = window_count(h, kh, sh, ph, dh), window_count(w, kw, sw, pw, dw)
    out = be.alloc((n, c, h, w), cols.dtype)
    return _run(be, K.COL2IM, "col2im", cols, out, (c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow),
                range(0, kh * kw, Q_CHUNK))


KERNELS = {K.IM2COL: im2col, K.COL2IM: col2im}
