"""cpu windows kernels: Im2Col (torch ``unfold``) and Col2Im (torch ``fold``).

Two roads each, picked by the length of a window row (``ow``, the windows across the output):

* short rows (at most ``_GATHER_MAX_ROW`` windows, a small net's 8x8 maps): one ``np.take`` along
  each sample's flattened pixels, through an index cached per geometry. A strided copy walks its
  innermost axis ``ow`` elements at a time and pays ~10 ns per such row, which at ``ow`` = 4..8 is
  most of its time; the gather costs ~0.6 ns an element whatever the row (~2x faster at 8x8).
  Zero padding is one zero column appended to each sample, which padded cells index.
* long rows: Im2Col is one strided view of the zero-padded input, copied into the column layout;
  Col2Im adds each kernel offset's slab back into the padded image (a loop over the kh*kw offsets,
  never over pixels) and crops the padding. When the windows tile the padded image exactly
  (stride = kernel, no dilation: a pooling's), the slabs are copied instead of added.

On short rows Col2Im gathers too: row m of the gather holds each pixel's m-th column entry (or a zero),
with as many rows as the most windows a pixel lies in (one where windows do not overlap, a pooling's;
kh*kw for a stride-1 convolution's), and the rows are added in kernel-offset order, the order the
slab loop adds them in (2-3x faster than the slab loop on 4x4..8x8 maps).
"""
import functools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from webgrad import kernel_names as K
from webgrad.shapes import window_count

from .registry import cpu_kernel

_GATHER_MAX_ROW = 8            # at most this many windows a row: gather (see the module docstring)
_GATHER_MAX_INDEX = 1 << 18    # most entries in one cached index (2 MiB): past it, the strided road


def _pad(x, ph, pw, value=0):
    """x padded with ``value`` by (ph, pw) on its last two dims (np.pad costs ~40 µs more a call)."""
    n, c, h, w = x.shape
    out = np.full((n, c, h + 2 * ph, w + 2 * pw), value, dtype=x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def _window_view(xp, kernel_size, stride, dilation, out_hw):
    """The padded image ``xp`` [N, C, H', W'] seen as its windows [N, C, kh, kw, oh, ow] (no copy)."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = kernel_size, stride, dilation, out_hw
    s0, s1, s2, s3 = xp.strides
    return as_strided(xp, (xp.shape[0], xp.shape[1], kh, kw, oh, ow),
                      (s0, s1, dh * s2, dw * s3, sh * s2, sw * s3), writeable=False)


def _out_hw(h, w, kernel_size, stride, padding, dilation):
    """(oh, ow): the windows down and across an [H, W] image."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    return window_count(h, kh, sh, ph, dh), window_count(w, kw, sw, pw, dw)


@functools.lru_cache(maxsize=32)
def _gather_index(c, h, w, kernel_size, stride, padding, dilation):
    """The gather road's index for one [C, H, W] sample: for each entry of its column layout
    ([C*kh*kw, L], flattened) the flat index of the pixel it holds, or C*H*W (a zero column appended
    to the sample) where that is padding; and whether any entry is padding. None where the row is too
    long or the index too big to be worth it. The cached arrays stay writeable (private to this module):
    np.take copies a read-only index on every call (~0.2 ns an entry)."""
    oh, ow = _out_hw(h, w, kernel_size, stride, padding, dilation)
    (kh, kw), (ph, pw) = kernel_size, padding
    if ow > _GATHER_MAX_ROW or c * kh * kw * oh * ow > _GATHER_MAX_INDEX:
        return None
    pixels = np.arange(c * h * w, dtype=np.intp).reshape(1, c, h, w)
    if ph or pw:
        pixels = _pad(pixels, ph, pw, value=c * h * w)
    index = np.ascontiguousarray(_window_view(pixels, kernel_size, stride, dilation, (oh, ow))).ravel()
    return index, bool((index == c * h * w).any())


@functools.lru_cache(maxsize=32)
def _scatter_index(c, h, w, kernel_size, stride, padding, dilation):
    """Col2Im's gather index, the inverse of ``_gather_index``: M rows, each with one entry per pixel of
    a [C, H, W] sample, row m holding the pixel's m-th column entry (in column order: kernel-offset
    order, the order the slab loop adds them in) or C*kh*kw*L (a zero column appended) past its last;
    M is the most windows a pixel lies in (1 where windows do not overlap). Returns (index [M*C*H*W],
    whether any slot is empty, M); None where Im2Col does not gather or this index would be too big
    (sparse windows over a big image: stride above the kernel)."""
    found = _gather_index(c, h, w, kernel_size, stride, padding, dilation)
    if found is None:
        return None
    index, size = found[0], c * h * w
    entries = np.flatnonzero(index < size)           # the column entries holding a pixel (not padding)
    pixels = index[entries]
    order = np.argsort(pixels, kind="stable")        # grouped by pixel, each group in column order
    entries, pixels = entries[order], pixels[order]
    counts = np.bincount(pixels, minlength=size)
    slots = np.arange(len(pixels)) - (np.cumsum(counts) - counts)[pixels]   # rank within the pixel's group
    rows = max(1, int(counts.max(initial=0)))
    if rows * size > _GATHER_MAX_INDEX:
        return None
    inverse = np.full((rows, size), index.size, dtype=np.intp)
    inverse[slots, pixels] = entries
    return inverse.ravel(), bool((inverse == index.size).any()), rows


def _sum_rows(g):
    """``g`` [N, M, P] summed over M in order, as a fresh [N, P] array: M - 1 adds of contiguous rows
    (numpy's own reduce over a middle axis walks it several times slower)."""
    if g.shape[1] == 1:
        return g.reshape(g.shape[0], g.shape[2])
    out = np.add(g[:, 0], g[:, 1])
    for m in range(2, g.shape[1]):
        np.add(out, g[:, m], out=out)
    return out


def _gather(a, index, zero_column):
    """``a`` [N, ...] flattened per sample, its entries picked by ``index`` (one row per sample),
    where ``index`` may point one past the end at a zero (``zero_column``)."""
    rows = a.reshape(a.shape[0], math.prod(a.shape[1:]))   # (not -1: N may be 0)
    if zero_column:
        src = np.empty((rows.shape[0], rows.shape[1] + 1), dtype=a.dtype)
        src[:, :-1] = rows
        src[:, -1] = 0
        rows = src
    # every index is in range: 'wrap' skips the bounds check of the default 'raise' (~25% faster)
    return np.take(rows, index, axis=1, mode="wrap")


@cpu_kernel(K.IM2COL)
def im2col(x, *, kernel_size, stride, padding, dilation):
    (kh, kw), (ph, pw), (n, c, h, w) = kernel_size, padding, x.shape
    oh, ow = _out_hw(h, w, kernel_size, stride, padding, dilation)
    found = _gather_index(c, h, w, kernel_size, stride, padding, dilation)
    if found is not None:
        return _gather(x, *found).reshape(n, c * kh * kw, oh * ow)
    xp = _pad(x, ph, pw) if ph or pw else np.ascontiguousarray(x)
    win = _window_view(xp, kernel_size, stride, dilation, (oh, ow))
    return np.ascontiguousarray(win).reshape(n, c * kh * kw, oh * ow)


@cpu_kernel(K.COL2IM)
def col2im(cols, *, output_size, kernel_size, stride, padding, dilation):
    (h, w), (kh, kw), (sh, sw), (ph, pw), (dh, dw) = output_size, kernel_size, stride, padding, dilation
    n = cols.shape[0]
    c = cols.shape[1] // (kh * kw)
    found = _scatter_index(c, h, w, kernel_size, stride, padding, dilation)
    if found is not None:
        index, zero_column, rows = found
        return _sum_rows(_gather(cols, index, zero_column).reshape(n, rows, c * h * w)).reshape(n, c, h, w)
    oh, ow = _out_hw(h, w, kernel_size, stride, padding, dilation)
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
