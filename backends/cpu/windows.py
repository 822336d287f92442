"""cpu windows kernels: Im2Col (torch ``unfold``) and Col2Im (torch ``fold``).

Im2Col is one strided view of the zero-padded input, copied into the column layout;
Col2Im adds each kernel offset's slab back into the padded image (a loop over the
kh*kw offsets, never over pixels) and crops the padding. When the windows tile the
padded image exactly (stride = kernel, no dilation: a pooling's), the slabs are copied
instead of added (one 6-d transposing copy is ~2x slower than these strided ones).
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from webgrad import kernel_names as K
from webgrad.shapes import window_count

from .registry import cpu_kernel


def _pad(x, ph, pw):
    """x zero-padded by (ph, pw) on its last two dims (np.pad costs ~40 µs more a call)."""
    n, c, h, w = x.shape
    out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


@cpu_kernel(K.IM2COL)
def im2col(x, *, kernel_size, stride, padding, dilation):
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    n, c, h, w = x.shape
    oh, ow = window_count(h, kh, sh, ph, dh), window_count(w, kw, sw, pw, dw)
    xp = _pad(x, ph, pw) if ph or pw else np.ascontiguousarray(x)
    s0, s1, s2, s3 = xp.strides
    win = as_strided(xp, (n, c, kh, kw, oh, ow), (s0, s1, dh * s2, dw * s3, sh * s2, sw * s3), writeable=False)
    return np.ascontiguousarray(win).reshape(n, c * kh * kw, oh * ow)


@cpu_kernel(K.COL2IM)
def col2im(cols, *, output_size, kernel_size, stride, padding, dilation):
    (h, w), (kh, kw), (sh, sw), (ph, pw), (dh, dw) = output_size, kernel_size, stride, padding, dilation
    n = cols.shape[0]
    c = cols.shape[1] // (kh * kw)
    oh, ow = window_count(h, kh, sh, ph, dh), window_count(w, kw, sw, pw, dw)
    blocks = cols.reshape(n, c, kh, kw, oh, ow)
    # windows that tile the padded image (stride = kernel, no dilation: a pooling's) put each pixel
    # in exactly one window: each offset's slab is copied, not added, and nothing needs zeroing
    tiled = (sh, sw) == (kh, kw) and (dh, dw) == (1, 1) and (oh * kh, ow * kw) == (h + 2 * ph, w + 2 * pw)
    out = (np.empty if tiled else np.zeros)((n, c, h + 2 * ph, w + 2 * pw), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            dst = out[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            if tiled:
                dst[...] = blocks[:, :, i, j]
            else:
                dst += blocks[:, :, i, j]
    return out[:, :, ph:ph + h, pw:pw + w].copy() if ph or pw else out
