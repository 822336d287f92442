"""1-d pooling (the 2-d pools on an input of height 1) and adaptive max pooling (a gather of each
output cell's window, padded to the widest window with -inf, then a max over it)."""
from __future__ import annotations

import functools
import math

from ...autograd import custom_grad
from ...ops.common import check_tensor
from ._utils import ntuple
from .pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d, max_pool2d_with_indices


def _check_1d(op, input):
    check_tensor(op, input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{op}: expected a 2-D or 3-D input, got shape {tuple(input.shape)}")


def _one(op, value, name):
    """A 1-d pool argument (an int or a 1-sequence) as the 2-d pool's pair with 1 (or 0) in front."""
    return ntuple(value, 1, op, name)[0]


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling over [N, C, L] or [C, L]; with ``return_indices`` also each maximum's position in L.

    >>> import webgrad as wg
    >>> max_pool1d(wg.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[3.0, 2.0]]]
    """
    _check_1d("max_pool1d", input)
    k = _one("max_pool1d", kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _one("max_pool1d", stride, "stride")
    args = ((1, k), (1, s), (0, _one("max_pool1d", padding, "padding")), (1, _one("max_pool1d", dilation, "dilation")),
            ceil_mode)
    if return_indices:
        y, idx = max_pool2d_with_indices(input.unsqueeze(-2), *args)
        return y.squeeze(-2), idx.squeeze(-2)
    return max_pool2d(input.unsqueeze(-2), *args).squeeze(-2)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool1d`` and each maximum's position in L (``return_indices`` has no effect, as PyTorch's).

    >>> import webgrad as wg
    >>> max_pool1d_with_indices(wg.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)[1].tolist()
    [[[1, 2]]]
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over [N, C, L] or [C, L], with PyTorch's divisors.

    >>> import webgrad as wg
    >>> avg_pool1d(wg.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[2.0, 1.0]]]
    """
    _check_1d("avg_pool1d", input)
    k = _one("avg_pool1d", kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _one("avg_pool1d", stride, "stride")
    y = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _one("avg_pool1d", padding, "padding")), ceil_mode,
                   count_include_pad)
    return y.squeeze(-2)


def _output_sizes(op, output_size, spatial):
    """``output_size`` (an int or a sequence, None keeping that dim) as positive ints, one per spatial dim."""
    n = len(spatial)
    size = (output_size,) * n if output_size is None or isinstance(output_size, int) else tuple(output_size)
    if len(size) != n:
        raise RuntimeError(f"{op}: output_size must be an int or a sequence of {n}, got {output_size!r}")
    out = tuple(s if o is None else o for o, s in zip(size, spatial))
    if not all(isinstance(o, int) and o >= 0 for o in out):
        raise RuntimeError(f"{op}: output_size must hold non-negative ints, got {output_size!r}")
    return out


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of [N, C, L] or [C, L] to length ``output_size``, with PyTorch's window bounds.

    >>> import webgrad as wg
    >>> adaptive_avg_pool1d(wg.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2).tolist()
    [[[2.0, 1.0]]]
    """
    _check_1d("adaptive_avg_pool1d", input)
    (o,) = _output_sizes("adaptive_avg_pool1d", output_size, input.shape[-1:])
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def _bounds(n_in, n_out):
    """PyTorch's adaptive windows: [floor(i*n_in/n_out), ceil((i+1)*n_in/n_out)) for each output i."""
    return [((i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)) for i in range(n_out)]


@functools.lru_cache(maxsize=64)
def _window_table(spatial, out):
    """For each output cell (row-major) the flat input positions of its window, padded with
    prod(spatial) (a -inf cell) to the widest window: ([cells * width] gather index, width)."""
    axes = [_bounds(n, o) for n, o in zip(spatial, out)]
    cells = [[]]
    for bounds in axes:
        cells = [c + [b] for c in cells for b in bounds]
    strides = [math.prod(spatial[i + 1:]) for i in range(len(spatial))]
    windows = []
    for cell in cells:
        flat = [0]
        for (lo, hi), st in zip(cell, strides):
            flat = [f + j * st for f in flat for j in range(lo, hi)]
        windows.append(flat)
    width = max(len(w) for w in windows)
    pad = math.prod(spatial)
    return [p for w in windows for p in w + [pad] * (width - len(w))], width


def _adaptive_max(op, input, output_size, return_indices, dims):
    import webgrad as wg
    check_tensor(op, input)
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{op}: expected a {dims + 1}-D or {dims + 2}-D input, got shape {tuple(input.shape)}")
    spatial = tuple(input.shape[-dims:])
    out = _output_sizes(op, output_size, spatial)
    if min(spatial) < 1 or min(out) < 1:
        raise RuntimeError(f"{op}: needs non-empty spatial dims and output_size, got input {tuple(input.shape)} "
                           f"and output_size {output_size!r}")
    lead = tuple(input.shape[:-dims])
    table, width = _window_table(spatial, out)
    flat = input.reshape(*lead, math.prod(spatial))
    flat = wg.cat([flat, wg.full((*lead, 1), -math.inf, dtype=input.dtype, device=input.device)], -1)
    index = wg.tensor(table, dtype=wg.long, device=input.device)
    windows = flat.index_select(-1, index).reshape(*lead, *out, width)
    values, arg = windows.max(-1)
    if not return_indices:
        return values
    positions = index.reshape(*out, width).expand(*lead, *out, width)
    return values, positions.gather(-1, arg.unsqueeze(-1)).squeeze(-1)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of [N, C, L] or [C, L] to length ``output_size`` (PyTorch's windows); with
    ``return_indices`` also each maximum's position.

    >>> import webgrad as wg
    >>> adaptive_max_pool1d(wg.tensor([[[1.0, 3.0, 2.0, 0.0, 5.0]]]), 2).tolist()
    [[[3.0, 5.0]]]
    """
    return _adaptive_max("adaptive_max_pool1d", input, output_size, return_indices, 1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of [N, C, H, W] or [C, H, W] to ``output_size`` (an int or pair, None keeps a dim);
    with ``return_indices`` also each maximum's flat position in H*W.

    >>> import webgrad as wg
    >>> adaptive_max_pool2d(wg.arange(16.0).reshape(1, 1, 4, 4), 1).tolist()
    [[[[15.0]]]]
    """
    return _adaptive_max("adaptive_max_pool2d", input, output_size, return_indices, 2)


def _lp(pooled, norm_type, cells):
    """PyTorch's power-average finish: (sign(m) relu(|m|) * cells) ** (1 / p) of the window means m."""
    import webgrad as wg
    return (pooled.sign() * wg.relu(pooled.abs()) * cells) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over [N, C, L]: (sum of x^p over each window)^(1/p).

    >>> import webgrad as wg
    >>> lp_pool1d(wg.tensor([[[3.0, 4.0]]]), 2, 2).tolist()
    [[[5.0]]]
    """
    k = _one("lp_pool1d", kernel_size, "kernel_size")
    return _lp(avg_pool1d(input ** norm_type, k, stride, 0, ceil_mode), norm_type, k)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over [N, C, H, W]: (sum of x^p over each window)^(1/p).

    >>> import webgrad as wg
    >>> lp_pool2d(wg.tensor([[[[3.0, 4.0]]]]), 2, (1, 2)).tolist()
    [[[[5.0]]]]
    """
    kh, kw = ntuple(kernel_size, 2, "lp_pool2d", "kernel_size")
    return _lp(avg_pool2d(input ** norm_type, (kh, kw), stride, 0, ceil_mode), norm_type, kh * kw)


def _unpool_size(op, input, kernel_size, stride, padding, output_size, n):
    """PyTorch's default unpooled size (in - 1) * stride - 2 * padding + kernel, or ``output_size`` checked."""
    k = ntuple(kernel_size, n, op, "kernel_size")
    s = k if stride is None else ntuple(stride, n, op, "stride")
    p = ntuple(padding, n, op, "padding")
    default = tuple((i - 1) * si - 2 * pi + ki for i, si, pi, ki in zip(input.shape[-n:], s, p, k))
    if output_size is None:
        return default
    size = tuple(output_size)[-n:] if len(tuple(output_size)) in (n, n + 1, n + 2) else None
    if size is None or any(not d - si < o < d + si for o, d, si in zip(size, default, s)):
        raise ValueError(f"{op}: output_size {output_size!r} is not within one stride {s} of the default "
                         f"size {default}")
    return size


def _max_unpool(op, input, indices, kernel_size, stride, padding, output_size, n):
    import webgrad as wg
    check_tensor(op, input)
    check_tensor(op, indices, "indices")
    if input.ndim not in (n + 1, n + 2) or tuple(indices.shape) != tuple(input.shape) or indices.dtype.kind != "i":
        raise RuntimeError(f"{op}: expected a {n + 1}-D or {n + 2}-D input and int64 indices of its shape, got "
                           f"input {tuple(input.shape)} and indices {indices.dtype.name} {tuple(indices.shape)}")
    size = _unpool_size(op, input, kernel_size, stride, padding, output_size, n)
    lead = tuple(input.shape[:-n])
    flat_in, flat_idx = input.reshape(*lead, -1), indices.reshape(*lead, -1)
    canvas = wg.zeros(*lead, math.prod(size), dtype=input.dtype, device=input.device)

    def put_back(values, index):   # gradient: each value's at its index, shared indices each getting it
        return canvas.scatter(-1, index, values), lambda dy: (dy.gather(-1, index), None)
    return custom_grad(put_back)(flat_in, flat_idx).reshape(*lead, *size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: each value put back at its index, zeros elsewhere.

    >>> import webgrad as wg
    >>> max_unpool1d(wg.tensor([[[3.0, 2.0]]]), wg.tensor([[[1, 2]]]), 2).tolist()
    [[[0.0, 3.0, 2.0, 0.0]]]
    """
    return _max_unpool("max_unpool1d", input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: each value put back at its flat H*W index, zeros elsewhere.

    >>> import webgrad as wg
    >>> max_unpool2d(wg.tensor([[[[5.0]]]]), wg.tensor([[[[3]]]]), 2).tolist()
    [[[[0.0, 0.0], [0.0, 5.0]]]]
    """
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of a 3-d max pool: each value put back at its flat D*H*W index (as
    ``adaptive_max_pool3d(..., return_indices=True)`` gives them), zeros elsewhere.

    >>> import webgrad as wg
    >>> max_unpool3d(wg.tensor([[[[[5.0]]]]]), wg.tensor([[[[[7]]]]]), 2).flatten().tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0]
    """
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride, padding, output_size, 3)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d`` and its indices (``return_indices`` has no effect, as PyTorch's).

    >>> import webgrad as wg
    >>> adaptive_max_pool1d_with_indices(wg.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)[1].tolist()
    [[[1, 2]]]
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d`` and its flat H*W indices (``return_indices`` has no effect, as PyTorch's).

    >>> import webgrad as wg
    >>> adaptive_max_pool2d_with_indices(wg.arange(4.0).reshape(1, 1, 2, 2), 1)[1].tolist()
    [[[[3]]]]
    """
    return adaptive_max_pool2d(input, output_size, True)


__all__ = ["adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "max_unpool3d", "lp_pool1d",
           "lp_pool2d", "max_unpool1d", "max_unpool2d", "max_pool1d", "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d"]
