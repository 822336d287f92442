"""Convolutions as Im2Col + matmul (and transposed convolution as matmul + Col2Im), plus
``unfold``/``fold``, the two window kernels themselves (torch's sliding-window layout)."""
from __future__ import annotations

from ... import kernel_names as K
from ...engine import run_kernel
from ...ops.common import check_tensor, reshape_to
from ...shapes import window_count
from ._utils import ntuple
from ...amp import lower_precision_op


def _window_attrs(op, kernel_size, dilation, padding, stride):
    return dict(kernel_size=ntuple(kernel_size, 2, op, "kernel_size"), stride=ntuple(stride, 2, op, "stride"),
                padding=ntuple(padding, 2, op, "padding"), dilation=ntuple(dilation, 2, op, "dilation"))


def _check_windows(op, spatial, attrs):
    """The window counts (oh, ow) over ``spatial`` (H, W), or a ValueError naming ``op``."""
    k, s, p, d = attrs["kernel_size"], attrs["stride"], attrs["padding"], attrs["dilation"]
    if min(k + s + d) < 1 or min(p) < 0:
        raise ValueError(f"{op}: kernel_size, stride and dilation must be positive and padding non-negative; got "
                         f"{attrs}")
    out = (window_count(spatial[0], k[0], s[0], p[0], d[0]), window_count(spatial[1], k[1], s[1], p[1], d[1]))
    if min(out) < 1:
        raise ValueError(f"{op}: input of spatial size {tuple(spatial)} (padding {attrs['padding']}) is smaller "
                         f"than the kernel {attrs['kernel_size']} with dilation {attrs['dilation']}")
    return out


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks: [N, C, H, W] -> [N, C*kh*kw, L] (torch's ``unfold``).

    >>> import webgrad as wg
    >>> unfold(wg.ones(1, 2, 3, 3), 2).shape
    webgrad.Size([1, 8, 4])
    """
    check_tensor("unfold", input)
    if input.ndim not in (3, 4):
        raise ValueError(f"unfold: expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    if input.ndim == 3:
        return unfold(input.unsqueeze(0), kernel_size, dilation, padding, stride).squeeze(0)
    attrs = _window_attrs("unfold", kernel_size, dilation, padding, stride)
    _check_windows("unfold", input.shape[2:], attrs)
    return run_kernel(K.IM2COL, input, **attrs)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding local blocks back into an image: [N, C*kh*kw, L] -> [N, C, H, W] (torch's ``fold``).

    >>> import webgrad as wg
    >>> fold(wg.ones(1, 4, 4), (3, 3), 2)[0, 0].tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    check_tensor("fold", input)
    if input.ndim not in (2, 3):
        raise ValueError(f"fold: expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    if input.ndim == 2:
        return fold(input.unsqueeze(0), output_size, kernel_size, dilation, padding, stride).squeeze(0)
    attrs = _window_attrs("fold", kernel_size, dilation, padding, stride)
    output_size = ntuple(output_size, 2, "fold", "output_size")
    oh, ow = _check_windows("fold", output_size, attrs)
    kh, kw = attrs["kernel_size"]
    if input.shape[1] % (kh * kw) or input.shape[2] != oh * ow:
        raise ValueError(f"fold: input of shape {tuple(input.shape)} does not match kernel_size {(kh, kw)} and "
                         f"output_size {output_size}: expected [N, C*{kh * kw}, {oh * ow}]")
    return run_kernel(K.COL2IM, input, output_size=output_size, **attrs)


def _same_padding(op, x, kernel, stride, dilation):
    """Pad ``x`` for padding='same' (extra on the right/bottom when the total is odd, as torch)."""
    if stride != (1, 1):
        raise ValueError(f"{op}: padding='same' is not supported for strided convolutions (stride {stride})")
    import webgrad as wg
    totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
    if all(t % 2 == 0 for t in totals):
        return x, tuple(t // 2 for t in totals)
    pads = (totals[1] // 2, totals[1] - totals[1] // 2, totals[0] // 2, totals[0] - totals[0] // 2)
    return wg.pad(x, pads), (0, 0)


def _conv_padding(op, x, padding, kernel, stride, dilation):
    if padding == "valid":
        return x, (0, 0)
    if padding == "same":
        return _same_padding(op, x, kernel, stride, dilation)
    if isinstance(padding, str):
        raise ValueError(f"{op}: padding must be an int, a pair, 'same' or 'valid'; got {padding!r}")
    return x, ntuple(padding, 2, op, "padding")


def _check_conv(op, x, weight, bias, groups, transposed=False):
    check_tensor(op, x)
    check_tensor(op, weight, "weight")
    if x.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"{op}: expected a 4-D input and 4-D weight, got input {tuple(x.shape)} and weight "
                         f"{tuple(weight.shape)}")
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{op}: groups must be a positive int, got {groups!r}")
    c_in = x.shape[1]
    want = weight.shape[0] if transposed else weight.shape[1] * groups
    c_out = weight.shape[1] * groups if transposed else weight.shape[0]
    if c_in != want or (weight.shape[0] % groups) or c_in % groups:
        raise ValueError(f"{op}: input of shape {tuple(x.shape)} ({c_in} channels) does not match weight of shape "
                         f"{tuple(weight.shape)} with groups={groups} (expected {want} input channels)")
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"{op}: bias must have shape ({c_out},), got {tuple(bias.shape)}")
    return c_out


def _matmul(a, b):
    """``a @ b`` for operands whose shapes are known to fit: straight to the MatMul kernel when their
    dtypes match and are floating (the op's promotion and checks are for the other cases)."""
    if a.dtype is b.dtype and a.dtype.is_floating:
        return run_kernel(K.MATMUL, a, b, transpose_a=False, transpose_b=False)
    return a @ b


@lower_precision_op
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) of [N, C_in, H, W] with weight [C_out, C_in/groups, kh, kw].
    ``padding`` is an int, a pair, 'same' or 'valid'. Unbatched [C, H, W] input works too.

    >>> import webgrad as wg
    >>> conv2d(wg.ones(1, 1, 3, 3), wg.ones(1, 1, 2, 2)).tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    return _conv("conv2d", input, weight, bias, stride, padding, dilation, groups)


def _conv(op, x, weight, bias, stride, padding, dilation, groups):
    check_tensor(op, x)
    if x.ndim == 3:
        return _conv(op, x.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    c_out = _check_conv(op, x, weight, bias, groups)
    kernel = tuple(weight.shape[2:])
    stride, dilation = ntuple(stride, 2, op, "stride"), ntuple(dilation, 2, op, "dilation")
    x, padding = _conv_padding(op, x, padding, kernel, stride, dilation)
    attrs = dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation)
    oh, ow = _check_windows(op, x.shape[2:], attrs)
    n, group_k = x.shape[0], weight.shape[1] * kernel[0] * kernel[1]   # a group's rows of cols
    cols = run_kernel(K.IM2COL, x, **attrs)                            # [N, C_in*kh*kw, L]
    if groups == 1:   # [C_out, C_in*kh*kw] @ [N, C_in*kh*kw, L] (batch broadcast): no reshape of cols
        y = _matmul(reshape_to(weight, (c_out, group_k)), cols)       # [N, C_out, L]
    else:
        cols = reshape_to(cols, (n, groups, group_k, oh * ow))
        y = _matmul(reshape_to(weight, (groups, c_out // groups, group_k)), cols)   # [N, G, C_out/G, L]
        y = reshape_to(y, (n, c_out, oh * ow))
    if bias is not None:
        y = y + reshape_to(bias, (1, c_out, 1))   # (1, C_out, 1): its gradient needs no Reshape back
    return reshape_to(y, (n, c_out, oh, ow))


@lower_precision_op
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of [N, C_in, L] with weight [C_out, C_in/groups, k] (a conv2d of height 1).

    >>> import webgrad as wg
    >>> conv1d(wg.ones(1, 1, 4), wg.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    check_tensor("conv1d", input)
    check_tensor("conv1d", weight, "weight")
    if input.ndim not in (2, 3) or weight.ndim != 3:
        raise ValueError(f"conv1d: expected a 2-D or 3-D input and 3-D weight, got input {tuple(input.shape)} "
                         f"and weight {tuple(weight.shape)}")
    pad = padding if isinstance(padding, str) else (0, ntuple(padding, 1, "conv1d", "padding")[0])
    y = _conv("conv1d", input.unsqueeze(-2), weight.unsqueeze(-2), bias,
              (1, ntuple(stride, 1, "conv1d", "stride")[0]), pad,
              (1, ntuple(dilation, 1, "conv1d", "dilation")[0]), groups)
    return y.squeeze(-2)


@lower_precision_op
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution (the gradient of conv2d w.r.t. its input) of [N, C_in, H, W] with
    weight [C_in, C_out/groups, kh, kw]: a matmul, then Col2Im sums the overlapping blocks.

    >>> import webgrad as wg
    >>> conv_transpose2d(wg.ones(1, 1, 2, 2), wg.ones(1, 1, 2, 2)).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    op = "conv_transpose2d"
    check_tensor(op, input)
    if input.ndim == 3:
        return conv_transpose2d(input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups,
                                dilation).squeeze(0)
    _check_conv(op, input, weight, bias, groups, transposed=True)
    (kh, kw), (n, c_in, h, w) = weight.shape[2:], input.shape
    stride, padding = ntuple(stride, 2, op, "stride"), ntuple(padding, 2, op, "padding")
    dilation, output_padding = ntuple(dilation, 2, op, "dilation"), ntuple(output_padding, 2, op, "output_padding")
    if any(o >= max(s, d) or o < 0 for o, s, d in zip(output_padding, stride, dilation)):
        raise ValueError(f"{op}: output_padding {output_padding} must be smaller than either stride {stride} or "
                         f"dilation {dilation}")
    full = tuple((i - 1) * s + d * (k - 1) + 1 for i, s, d, k in zip((h, w), stride, dilation, (kh, kw)))
    out = tuple(f - 2 * p + o for f, p, o in zip(full, padding, output_padding))
    if any(o < 1 for o in out):
        raise ValueError(f"{op}: padding {padding} leaves an empty output for input {tuple(input.shape)} and "
                         f"weight {tuple(weight.shape)}")
    wt = weight.reshape(groups, c_in // groups, -1).transpose(1, 2)   # [G, C_out/G*kh*kw, C_in/G]
    cols = (wt @ input.reshape(n, groups, c_in // groups, h * w)).reshape(n, -1, h * w)
    canvas = run_kernel(K.COL2IM, cols, output_size=full, kernel_size=(kh, kw), stride=stride, padding=(0, 0),
                        dilation=dilation)
    y = _crop(canvas, padding, out)
    return y if bias is None else y + reshape_to(bias, (1, y.shape[1], 1, 1))


@lower_precision_op
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution of [N, C_in, L] (or [C_in, L]) with weight [C_in, C_out/groups, k]
    (a conv_transpose2d of height 1).

    >>> import webgrad as wg
    >>> conv_transpose1d(wg.ones(1, 1, 2), wg.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    op = "conv_transpose1d"
    check_tensor(op, input)
    check_tensor(op, weight, "weight")
    if input.ndim not in (2, 3) or weight.ndim != 3:
        raise RuntimeError(f"{op}: expected a 2-D or 3-D input and 3-D weight, got input {tuple(input.shape)} and "
                           f"weight {tuple(weight.shape)}")
    one = lambda value, name: (0 if name in ("padding", "output_padding") else 1, ntuple(value, 1, op, name)[0])  # noqa: E731
    y = conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, one(stride, "stride"),
                         one(padding, "padding"), one(output_padding, "output_padding"), groups,
                         one(dilation, "dilation"))
    return y.squeeze(-2)


def _crop(canvas, padding, out):
    """Cut ``out`` rows/cols starting at ``padding`` from the full transposed-conv canvas, zero-filling
    any output_padding that runs past its end (negative pad amounts crop)."""
    import webgrad as wg
    (ph, pw), (oh, ow), (fh, fw) = padding, out, canvas.shape[2:]
    return wg.pad(canvas, (-pw, ow + pw - fw, -ph, oh + ph - fh))


def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution in (time, batch, channels) layout: ``input`` [T, B, C_in], ``weight``
    [K, C_in, C_out], ``bias`` [C_out], ``pad`` time steps of zeros on each side -> [T', B, C_out]
    (``conv1d`` on the permuted tensors).

    >>> import webgrad as wg
    >>> conv_tbc(wg.ones(5, 2, 3), wg.ones(3, 3, 4), wg.zeros(4), 1).shape
    webgrad.Size([5, 2, 4])
    """
    for name, t in (("input", input), ("weight", weight), ("bias", bias)):
        check_tensor("conv_tbc", t, name)
    if input.ndim != 3 or weight.ndim != 3 or bias.ndim != 1 or input.shape[2] != weight.shape[1] or \
            bias.shape[0] != weight.shape[2]:
        raise RuntimeError(f"conv_tbc: expected input [T, B, C_in], weight [K, C_in, C_out] and bias [C_out], got "
                           f"{tuple(input.shape)}, {tuple(weight.shape)} and {tuple(bias.shape)}")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


__all__ = ["conv_tbc", "unfold", "fold", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]
