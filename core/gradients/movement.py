"""Gradients of the movement kernels: each undoes its kernel's rearrangement on ``dy``."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..ops import movement as M
from ..ops.creation import zeros
from ..registry import register_gradient


@register_gradient(K.RESHAPE, kernel=K.RESHAPE_GRAD)
def _reshape(dy, saved, attrs):
    return (M.reshape(dy, saved.shapes[0]),)


@register_gradient(K.TRANSPOSE, kernel=K.TRANSPOSE_GRAD)
def _transpose(dy, saved, attrs):
    perm = attrs["perm"]
    return (M.permute(dy, sorted(range(len(perm)), key=perm.__getitem__)),)


@register_gradient(K.EXPAND, kernel=K.EXPAND_GRAD)
def _expand(dy, saved, attrs):
    return (dy,)  # the engine sums the broadcast dims back


def _unslice(dy, shape, begin, step):
    """Put ``dy`` (a Slice's output gradient) back where the slice took it from, zeros elsewhere:
    flip the reversed dims, interleave ``step - 1`` zeros in the strided ones, then pad or crop."""
    ks = dy.shape
    flipped = tuple(d for d, s in enumerate(step) if s < 0)
    dy = M.flip(dy, flipped) if flipped else dy
    begin = [b + (k - 1) * s if s < 0 else b for b, k, s in zip(begin, ks, step)]
    step = [abs(s) for s in step]
    if any(s > 1 and k for s, k in zip(step, ks)):
        dy = M.reshape(dy, [p for k, s in zip(ks, step) for p in ((k, 1) if s > 1 else (k,))])
        dy = M.pad(dy, [p for k, s in zip(ks[::-1], step[::-1]) for p in ((0, s - 1, 0, 0) if s > 1 else (0, 0))])
        dy = M.reshape(dy, [k * s for k, s in zip(ks, step)])
    pads = [(b, n - b - k * s) if k else (0, n) for n, b, k, s in zip(shape, begin, ks, step)]
    return M._pad_constant(dy, pads, 0.0)


@register_gradient(K.SLICE)
def _slice(dy, saved, attrs):
    return (_unslice(dy, saved.shapes[0], attrs["begin"], attrs["step"]),)


@register_gradient(K.CONCAT)
def _concat(dy, saved, attrs):
    axis = attrs["axis"]
    return M.split(dy, [s[axis] for s in saved.shapes], axis)


@register_gradient(K.SPLIT)
def _split(dy, saved, attrs):
    """The pieces' gradients side by side again (zeros for a piece that got none): one Concat where a
    Pad per piece and their sum would fill and add the whole input once for each."""
    return (M.concat(list(dy) if isinstance(dy, tuple) else [dy], attrs["axis"]),)


@register_gradient(K.PAD)
def _pad(dy, saved, attrs):
    return (M._slice(dy, [lo for lo, _ in attrs["pads"]], [lo + n for (lo, _), n in zip(attrs["pads"],
                                                                                   saved.shapes[0])],
                     [1] * dy.ndim),)


@register_gradient(K.AS_STRIDED)
def _as_strided(dy, saved, attrs):
    """The view's gradient written into zeros of the root's shape (its positions are distinct)."""
    base = zeros(saved.shapes[0], dtype=dy.dtype, backend=dy._backend)
    return (run_kernel(K.AS_STRIDED_SCATTER, base, dy, **attrs),)


@register_gradient(K.AS_STRIDED_SCATTER)
def _as_strided_scatter(dy, saved, attrs):
    """The root keeps the gradient outside the written positions; the source takes it from them."""
    src = run_kernel(K.AS_STRIDED, dy, **attrs)
    return (run_kernel(K.AS_STRIDED_SCATTER, dy, zeros(src.shape, dtype=dy.dtype, backend=dy._backend), **attrs),
            src)
