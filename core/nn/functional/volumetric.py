"""3-d pooling and convolution over [N, C, D, H, W], composed from the 2-d ops: max and average
pooling are separable (a box's max is the max over depth of the (H, W) window maxima; its
in-bounds cell count, the divisor, is the product of the per-axis counts), adaptive pooling too,
and a 3-d convolution is a sum over the kernel's depth of 2-d convolutions of depth slices."""
from __future__ import annotations

from ...ops.common import check_tensor
from ._utils import ntuple
from .conv import conv2d, conv_transpose2d
from .pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from .pooling_more import _adaptive_max, _lp, _output_sizes, adaptive_avg_pool1d
from ...amp import lower_precision_op


def _volume(op, input):
    """``input`` as batched [N, C, D, H, W] and a function undoing the batching."""
    check_tensor(op, input)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{op}: expected a 4-D or 5-D input, got shape {tuple(input.shape)}")
    if input.ndim == 4:
        return input.unsqueeze(0), lambda y: y.squeeze(0)
    return input, lambda y: y


def _separable(x, plane, depth):
    """``plane`` applied to each (H, W) slice of x [N, C, D, H, W], then ``depth`` to each depth
    column of the result (as [M, 1, 1, D] -> [M, 1, 1, OD])."""
    n, c, d = x.shape[:3]
    y = plane(x.reshape(n * c, d, *x.shape[3:]))                     # [N*C, D, OH, OW]
    oh, ow = y.shape[2:]
    cols = y.reshape(n * c, d, oh * ow).transpose(1, 2).reshape(n * c * oh * ow, 1, 1, d)
    z = depth(cols)                                                    # [N*C*OH*OW, 1, 1, OD]
    od = z.shape[-1]
    return z.reshape(n * c, oh * ow, od).transpose(1, 2).reshape(n, c, od, oh, ow)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling over [N, C, D, H, W] (or [C, D, H, W]); with ``return_indices`` also each
    maximum's flat D*H*W index (``max_pool3d_with_indices``).

    >>> import webgrad as wg
    >>> max_pool3d(wg.arange(8.0).reshape(1, 1, 2, 2, 2), 2).flatten().tolist()
    [7.0]
    """
    op = "max_pool3d"
    if return_indices:
        from .pool_gather import max_pool3d_with_indices   # pool_gather builds on this module's neighbours
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    x, unbatch = _volume(op, input)
    k = ntuple(kernel_size, 3, op, "kernel_size")
    s = k if stride is None or stride == [] else ntuple(stride, 3, op, "stride")
    p, d = ntuple(padding, 3, op, "padding"), ntuple(dilation, 3, op, "dilation")
    y = _separable(x, lambda t: max_pool2d(t, k[1:], s[1:], p[1:], d[1:], ceil_mode),
                   lambda t: max_pool2d(t, (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]), ceil_mode))
    return unbatch(y)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling over [N, C, D, H, W] (or [C, D, H, W]), with PyTorch's divisors.

    >>> import webgrad as wg
    >>> avg_pool3d(wg.arange(8.0).reshape(1, 1, 2, 2, 2), 2).flatten().tolist()
    [3.5]
    """
    op = "avg_pool3d"
    x, unbatch = _volume(op, input)
    k = ntuple(kernel_size, 3, op, "kernel_size")
    s = k if stride is None or stride == [] else ntuple(stride, 3, op, "stride")
    p = ntuple(padding, 3, op, "padding")
    per_axis = None if divisor_override is None else 1      # sums per axis, then the one override
    y = _separable(x, lambda t: avg_pool2d(t, k[1:], s[1:], p[1:], ceil_mode, count_include_pad, per_axis),
                   lambda t: avg_pool2d(t, (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, count_include_pad, per_axis))
    return unbatch(y if divisor_override is None else y / divisor_override)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of [N, C, D, H, W] (or [C, D, H, W]) to ``output_size`` (None keeps a dim).

    >>> import webgrad as wg
    >>> adaptive_avg_pool3d(wg.arange(8.0).reshape(1, 1, 2, 2, 2), 1).flatten().tolist()
    [3.5]
    """
    x, unbatch = _volume("adaptive_avg_pool3d", input)
    od, oh, ow = _output_sizes("adaptive_avg_pool3d", output_size, tuple(x.shape[2:]))
    y = _separable(x, lambda t: adaptive_avg_pool2d(t, (oh, ow)),
                   lambda t: adaptive_avg_pool1d(t.squeeze(1), od).unsqueeze(1))
    return unbatch(y)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of [N, C, D, H, W] (or [C, D, H, W]) to ``output_size``; with ``return_indices``
    also each maximum's flat position in D*H*W.

    >>> import webgrad as wg
    >>> adaptive_max_pool3d(wg.arange(8.0).reshape(1, 1, 2, 2, 2), 1).flatten().tolist()
    [7.0]
    """
    return _adaptive_max("adaptive_max_pool3d", input, output_size, return_indices, 3)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool3d`` and its flat D*H*W indices (``return_indices`` has no effect, as PyTorch's).

    >>> import webgrad as wg
    >>> adaptive_max_pool3d_with_indices(wg.arange(8.0).reshape(1, 1, 2, 2, 2), 1)[1].flatten().tolist()
    [7]
    """
    return adaptive_max_pool3d(input, output_size, True)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over [N, C, D, H, W]: (sum of x^p over each window)^(1/p).

    >>> import webgrad as wg
    >>> lp_pool3d(wg.full((1, 1, 1, 1, 2), 2.0), 1, (1, 1, 2)).flatten().tolist()
    [4.0]
    """
    k = ntuple(kernel_size, 3, "lp_pool3d", "kernel_size")
    return _lp(avg_pool3d(input ** norm_type, k, stride, 0, ceil_mode), norm_type, k[0] * k[1] * k[2])


def _conv3d_padding(op, x, padding, kernel, stride, dilation):
    """``x`` zero-padded for ``padding`` (ints, 'valid' or 'same', the odd extra on the far side)."""
    import webgrad as wg
    if padding == "valid":
        return x
    if padding == "same":
        if stride != (1, 1, 1):
            raise ValueError(f"{op}: padding='same' is not supported for strided convolutions (stride {stride})")
        totals = [dd * (k - 1) for k, dd in zip(kernel, dilation)]
        pairs = [(t // 2, t - t // 2) for t in totals]
    elif isinstance(padding, str):
        raise ValueError(f"{op}: padding must be an int, a triple, 'same' or 'valid'; got {padding!r}")
    else:
        pairs = [(q, q) for q in ntuple(padding, 3, op, "padding")]
    flat = [v for pair in reversed(pairs) for v in pair]
    return wg.pad(x, flat) if any(flat) else x


@lower_precision_op
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution of [N, C_in, D, H, W] (or unbatched) with weight [C_out, C_in/groups, kd, kh, kw]:
    for each kernel depth, one conv2d of the depth slices it meets, summed.

    >>> import webgrad as wg
    >>> conv3d(wg.ones(1, 1, 3, 3, 3), wg.ones(1, 1, 2, 2, 2)).flatten().tolist()
    [8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0]
    """
    op = "conv3d"
    x, unbatch = _volume(op, input)
    check_tensor(op, weight, "weight")
    if weight.ndim != 5:
        raise RuntimeError(f"{op}: expected a 5-D weight, got shape {tuple(weight.shape)}")
    kernel = tuple(weight.shape[2:])
    stride, dilation = ntuple(stride, 3, op, "stride"), ntuple(dilation, 3, op, "dilation")
    x = _conv3d_padding(op, x, padding, kernel, stride, dilation)
    n, c, depth = x.shape[:3]
    od = (depth - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    if od < 1:
        raise RuntimeError(f"{op}: input depth {depth} (padded) is smaller than the kernel depth {kernel[0]} with "
                           f"dilation {dilation[0]}")
    total = None
    for i in range(kernel[0]):
        start = i * dilation[0]
        slices = x[:, :, start:start + (od - 1) * stride[0] + 1:stride[0]]          # [N, C, OD, H, W]
        planes = slices.transpose(1, 2).reshape(n * od, c, *x.shape[3:])
        y = conv2d(planes, weight[:, :, i], None, stride[1:], 0, dilation[1:], groups)
        total = y if total is None else total + y
    out = total.reshape(n, od, *total.shape[1:]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return unbatch(out)


def _spread_depth(y, step, before, length):
    """y [N, D, ...] placed at depths before + d * step of a zero canvas [N, length, ...]."""
    import webgrad as wg
    n, d = y.shape[:2]
    rest = tuple(y.shape[2:])
    if step > 1:
        gaps = wg.zeros(n, d, step - 1, *rest, dtype=y.dtype, device=y.device)
        y = wg.cat([y.unsqueeze(2), gaps], 2).reshape(n, d * step, *rest)[:, :(d - 1) * step + 1]
    after = length - before - y.shape[1]
    return wg.pad(y, (0, 0) * len(rest) + (before, after))


@lower_precision_op
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-D convolution of [N, C_in, D, H, W] (or unbatched) with weight
    [C_in, C_out/groups, kd, kh, kw]: for each kernel depth one conv_transpose2d of every input depth
    slice, spread to its output depths and summed.

    >>> import webgrad as wg
    >>> conv_transpose3d(wg.ones(1, 1, 1, 1, 1), wg.ones(1, 1, 2, 1, 1)).flatten().tolist()
    [1.0, 1.0]
    """
    import webgrad as wg
    op = "conv_transpose3d"
    x, unbatch = _volume(op, input)
    check_tensor(op, weight, "weight")
    if weight.ndim != 5:
        raise RuntimeError(f"{op}: expected a 5-D weight, got shape {tuple(weight.shape)}")
    s, p = ntuple(stride, 3, op, "stride"), ntuple(padding, 3, op, "padding")
    o, d = ntuple(output_padding, 3, op, "output_padding"), ntuple(dilation, 3, op, "dilation")
    if any(oi >= max(si, di) or oi < 0 for oi, si, di in zip(o, s, d)):
        raise RuntimeError(f"{op}: output_padding {o} must be smaller than either stride {s} or dilation {d}")
    n, c, depth = x.shape[:3]
    kd = weight.shape[2]
    full = (depth - 1) * s[0] + d[0] * (kd - 1) + 1
    planes = x.transpose(1, 2).reshape(n * depth, c, *x.shape[3:])
    total = None
    for i in range(kd):
        y = conv_transpose2d(planes, weight[:, :, i], None, s[1:], p[1:], o[1:], groups, d[1:])
        y = _spread_depth(y.reshape(n, depth, *y.shape[1:]), s[0], i * d[0], full)
        total = y if total is None else total + y
    out_depth = full - 2 * p[0] + o[0]
    if out_depth < 1:
        raise RuntimeError(f"{op}: padding {p} leaves an empty output for input {tuple(input.shape)}")
    rest = total.ndim - 2
    out = wg.pad(total, (0, 0) * rest + (-p[0], out_depth + p[0] - full)).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return unbatch(out)


__all__ = ["adaptive_max_pool3d_with_indices", "lp_pool3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "conv3d"]
