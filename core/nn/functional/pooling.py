"""Pooling: max and average pooling as Im2Col followed by a reduction over each window, and
adaptive average pooling as two small averaging matrices (one per spatial dim)."""
from __future__ import annotations

import functools
import math

from ... import kernel_names as K
from ...engine import run_kernel
from ...ops.common import check_tensor, reshape_to
from ._utils import ntuple


def _pool_geometry(op, x, kernel_size, stride, padding, dilation, ceil_mode):
    """Validated pairs and the output size, plus the extra bottom/right padding ceil_mode needs."""
    check_tensor(op, x)
    if x.ndim not in (3, 4):
        raise ValueError(f"{op}: expected a 3-D or 4-D input, got shape {tuple(x.shape)}")
    k = ntuple(kernel_size, 2, op, "kernel_size")
    s = k if stride is None or stride == [] else ntuple(stride, 2, op, "stride")
    p, d = ntuple(padding, 2, op, "padding"), ntuple(dilation, 2, op, "dilation")
    if min(k + s + d) < 1 or min(p) < 0 or 2 * p[0] > k[0] or 2 * p[1] > k[1]:
        raise ValueError(f"{op}: need positive kernel_size/stride/dilation and 0 <= padding <= kernel_size/2; "
                         f"got kernel_size={k}, stride={s}, padding={p}, dilation={d}")
    out, extra = [], []
    for n, ki, si, pi, di in zip(x.shape[-2:], k, s, p, d):
        span = n + 2 * pi - di * (ki - 1) - 1
        o = (-(-span // si) if ceil_mode else span // si) + 1
        if ceil_mode and (o - 1) * si >= n + pi:
            o -= 1
        if o < 1:
            raise ValueError(f"{op}: input of spatial size {tuple(x.shape[-2:])} is too small for kernel_size {k} "
                             f"with padding {p} and dilation {d}")
        out.append(o)
        extra.append(max(0, (o - 1) * si + di * (ki - 1) + 1 - (n + 2 * pi)))
    return k, s, p, d, tuple(out), tuple(extra)


def _windows(x, k, s, d, out):
    """The windows of ``x`` [N, C, H', W'] (already padded) and the axis that runs over each window:
    [kh*kw, N, C, oh, ow] and 0 where every window lies in a band of ``sh`` rows that tile H' (a
    2x2/stride-2 pool over an even height): the N*C images stacked into one tall image then have
    exactly their own windows, and a reduction over the first axis (and its gradient) runs on
    contiguous slabs, ~5x faster on small maps than over the middle axis of torch's layout;
    [N, C, kh*kw, oh, ow] and 2 otherwise."""
    n, c, h, w = x.shape
    attrs = dict(kernel_size=k, stride=s, padding=(0, 0), dilation=d)
    if n * c and h == out[0] * s[0] and d[0] * (k[0] - 1) < s[0]:
        cols = run_kernel(K.IM2COL, reshape_to(x, (1, 1, n * c * h, w)), **attrs)   # [1, kh*kw, N*C*oh*ow]
        return reshape_to(cols, (k[0] * k[1], n, c, out[0], out[1])), 0
    cols = run_kernel(K.IM2COL, x, **attrs)
    return reshape_to(cols, (n, c, k[0] * k[1], out[0], out[1])), 2


def _batched(fn):
    """Let a 4-D pooling function take unbatched [C, H, W] input too (each of its outputs unbatched)."""
    @functools.wraps(fn)
    def wrapped(input, *args, **kwargs):
        if getattr(input, "ndim", None) == 3:
            out = fn(input.unsqueeze(0), *args, **kwargs)
            return tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)
        return fn(input, *args, **kwargs)
    return wrapped


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling over [N, C, H, W] (padding counts as -inf). ``stride`` defaults to ``kernel_size``.
    With ``return_indices`` also each maximum's flat position in H*W (as ``max_unpool2d`` takes them).

    >>> import webgrad as wg
    >>> max_pool2d(wg.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def _padded_windows(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    import webgrad as wg
    k, s, p, d, out, extra = _pool_geometry(op, input, kernel_size, stride, padding, dilation, ceil_mode)
    pads = (p[1], p[1] + extra[1], p[0], p[0] + extra[0])
    x = wg.pad(input, pads, value=-math.inf) if any(pads) else input
    return (k, s, p, d, out), x


@_batched
def _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode):
    (k, s, _p, d, out), x = _padded_windows("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    windows, axis = _windows(x, k, s, d, out)
    return run_kernel(K.MAX, windows, axes=(axis,), keepdim=False)   # amax(axis): windows are nonempty


@_batched
def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool2d`` and the flat H*W position of each maximum (the first, where several tie).
    ``return_indices`` has no effect: the indices always come back, as PyTorch's.

    >>> import webgrad as wg
    >>> max_pool2d_with_indices(wg.arange(16.0).reshape(1, 1, 4, 4), 2)[1].tolist()
    [[[[5, 7], [13, 15]]]]
    """
    import webgrad as wg
    (k, s, p, d, out), x = _padded_windows("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    n, c = x.shape[:2]
    windows = reshape_to(run_kernel(K.IM2COL, x, kernel_size=k, stride=s, padding=(0, 0), dilation=d),
                         (n, c, k[0] * k[1], out[0], out[1]))
    values, arg = windows.max(2)
    rows = wg.arange(out[0], device=input.device).reshape(out[0], 1) * s[0] - p[0]
    cols = wg.arange(out[1], device=input.device) * s[1] - p[1]
    index = (rows + (arg // k[1]) * d[0]) * input.shape[-1] + cols + (arg % k[1]) * d[1]
    return values, index


@_batched
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling over [N, C, H, W], with PyTorch's divisors for padding and ceil_mode.

    >>> import webgrad as wg
    >>> avg_pool2d(wg.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    import webgrad as wg
    k, s, p, d, out, extra = _pool_geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    pads = (p[1], p[1] + extra[1], p[0], p[0] + extra[0])
    x = wg.pad(input, pads) if any(pads) else input
    windows, axis = _windows(x, k, s, d, out)
    total = windows.sum(axis)
    if divisor_override is not None:
        return total / divisor_override
    # the divisor counts the window's cells inside the input (plus the padding, if included); cells added
    # by ceil_mode never count, as in PyTorch
    inside = wg.ones(1, 1, *input.shape[-2:], dtype=input.dtype, backend=input._backend)
    inside = wg.pad(inside, (p[1], p[1], p[0], p[0]), value=1.0 if count_include_pad else 0.0)
    inside = wg.pad(inside, (0, extra[1], 0, extra[0]))
    windows, axis = _windows(inside, k, s, d, out)
    return total / windows.sum(axis)


def _averaging_matrix(n_in, n_out, like):
    """[n_out, n_in] matrix whose row i averages input cells floor(i*n_in/n_out) .. ceil((i+1)*n_in/n_out)."""
    import webgrad as wg
    rows = []
    for i in range(n_out):
        lo, hi = (i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)
        rows.append([1.0 / (hi - lo) if lo <= j < hi else 0.0 for j in range(n_in)])
    return wg.tensor(rows, dtype=like.dtype, backend=like._backend)


@_batched
def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size (``None`` keeps that dim), with PyTorch's window bounds.

    >>> import webgrad as wg
    >>> adaptive_avg_pool2d(wg.arange(16.0).reshape(1, 1, 4, 4), 1).tolist()
    [[[[7.5]]]]
    """
    check_tensor("adaptive_avg_pool2d", input)
    if input.ndim != 4:
        raise ValueError(f"adaptive_avg_pool2d: expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    size = (output_size, output_size) if output_size is None or isinstance(output_size, int) else tuple(output_size)
    h, w = input.shape[2:]
    oh, ow = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    if len(size) != 2 or oh < 1 or ow < 1:
        raise ValueError(f"adaptive_avg_pool2d: output_size must be a positive int or pair, got {output_size!r}")
    rows, cols = _averaging_matrix(h, oh, input), _averaging_matrix(w, ow, input)
    return rows @ input @ cols.transpose(0, 1)


__all__ = ["max_pool2d", "max_pool2d_with_indices", "avg_pool2d", "adaptive_avg_pool2d"]
