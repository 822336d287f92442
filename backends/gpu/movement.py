"""Movement kernels. Reshape aliases the buffer; Transpose, Expand and Slice (and Split's pieces) are
the elementwise identity read through strides; Concat and Pad copy into slabs of a new buffer (``kernels/copy.wgsl``)."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import WG, View, broadcast_view, contiguous_strides, elementwise, fill
from .program import WGSL_TYPES, Program
from .runtime import GpuArray


def reshape(be, x, *, shape):
    return GpuArray(x.storage, tuple(shape), x.dtype)


def _identity(be, view, shape, dtype):
    return elementwise(be, K.IDENTITY, "x0", [view], shape, dtype)


def transpose(be, x, *, perm):
    st = contiguous_strides(x.shape)
    return _identity(be, View(x, 0, [st[p] for p in perm]), tuple(x.shape[p] for p in perm), x.dtype)


def expand(be, x, *, shape):
    return _identity(be, broadcast_view(x, tuple(shape)), tuple(shape), x.dtype)


def slice_(be, x, *, begin, end, step):
    st = contiguous_strides(x.shape)
    shape = tuple(len(range(b, e, s)) for b, e, s in zip(begin, end, step))
    offset = sum(b * t for b, t, n in zip(begin, st, shape) if n)
    return _identity(be, View(x, offset, [s * t for s, t in zip(step, st)]), shape, x.dtype)


def split(be, x, *, sizes, axis):
    begin, end, step, out = [0] * len(x.shape), list(x.shape), [1] * len(x.shape), []
    for n in sizes:
        end[axis] = begin[axis] + n
        out.append(slice_(be, x, begin=begin, end=end, step=step))
        begin[axis] = end[axis]
    return tuple(out)


def copy_into(be, out, src: View, shape, dst_offset, dst_strides):
    """Record ``out[dst_offset + c . dst_strides] = src[c]`` for every coordinate c of ``shape``."""
    n = 1
    for d in shape:
        n *= d
    if n == 0:
        return
    rank, t = len(shape), WGSL_TYPES[out.dtype.name]
    key = ("copy", t, rank)

    def build():
        return Program("Copy", "copy", inputs=[("in0", t)], outputs=[("out", t)], wg=WG,
                       uniforms=[("n", "u32", 1), ("so", "i32", 1), ("do", "i32", 1), ("shape", "u32", rank),
                                 ("ss", "i32", rank), ("ds", "i32", rank)], subs={"RANK": str(rank)})
    be.run(key, build, [src.array], [out],
           [n, src.offset, dst_offset, *shape, *src.strides, *dst_strides], -(-n // WG))


def concat(be, *xs, axis):
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    out = be.alloc(tuple(shape), xs[0].dtype)
    ost, at = contiguous_strides(shape), 0
    for x in xs:
        copy_into(be, out, View(x, 0, contiguous_strides(x.shape)), x.shape, at * ost[axis], ost)
        at += x.shape[axis]
    return out


def pad(be, x, *, pads, value):
    shape = tuple(n + b + a for n, (b, a) in zip(x.shape, pads))
    out = fill(be, shape=shape, value=value, dtype=x.dtype)
    ist, ost = contiguous_strides(x.shape), contiguous_strides(shape)
    # negative pads crop: read the input from max(0, -before) and write from max(0, before)
    inner = tuple(n + min(b, 0) + min(a, 0) for n, (b, a) in zip(x.shape, pads))
    if all(d > 0 for d in inner):
        src = View(x, sum(max(0, -b) * s for (b, _), s in zip(pads, ist)), ist)
        copy_into(be, out, src, inner, sum(max(0, b) * s for (b, _), s in zip(pads, ost)), ost)
    return out


KERNELS = {K.RESHAPE: reshape, K.TRANSPOSE: transpose, K.EXPAND: expand, K.SLICE: slice_, K.CONCAT: concat,
           K.SPLIT: split, K.PAD: pad}
