"""Max pooling over windows given by their start coordinates, by gathering each window's cells from
the flattened input: ``fractional_max_pool2d/3d`` (pseudo-random window starts per plane, drawn as
PyTorch draws them) and ``max_pool3d_with_indices``. Cells outside the input count as -inf; the
gradient reaches the input through ``gather`` on every backend."""
from __future__ import annotations

import math

from ...dtypes import int64
from ...ops.binary import where
from ...ops.common import check_tensor
from ...ops.creation import arange, full
from ...ops.movement import cat
from ...ops.random import rand
from ._utils import ntuple


def _gathered_max(x, starts, kernel, dilation):
    """Max of x [N, C, *S] over windows: ``starts[d]`` broadcasts to [N, C, out_d] (the first cell
    of each window along dim d). Returns (values [N, C, *out], flat indices into *S)."""
    n, c, sizes = x.shape[0], x.shape[1], list(x.shape[2:])
    dims = len(sizes)
    outs = [s.shape[-1] for s in starts]
    flat_index, valid = 0, None
    for d in range(dims):
        at = [1] * (2 + 2 * dims)
        at[0], at[1] = (n, c) if starts[d].ndim == 3 else (1, 1)
        at[2 + d] = outs[d]
        step = [1] * (2 + 2 * dims)
        step[2 + dims + d] = kernel[d]
        coord = starts[d].reshape(at) + (arange(kernel[d], dtype=int64, device=x.device) * dilation[d]).reshape(step)
        inside = (coord >= 0) & (coord < sizes[d])
        valid = inside if valid is None else valid & inside
        safe = where(inside, coord, full((), 0, dtype=int64, device=x.device))   # any in-range cell: masked below
        flat_index = flat_index + safe * math.prod(sizes[d + 1:])
    shape = [n, c] + outs + list(kernel)
    flat_index, valid = flat_index.expand(*shape), valid.expand(*shape)
    cells = x.reshape(n, c, -1).gather(2, flat_index.reshape(n, c, -1)).reshape(shape)
    cells = where(valid, cells, full((), -math.inf, dtype=x.dtype, device=x.device))
    windows = cells.reshape(n, c, *outs, -1)
    values, arg = windows.max(-1)
    indices = flat_index.reshape(n, c, *outs, -1).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    return values, indices


def _intervals(samples, n_in, n_out, pool):
    """PyTorch's fractional window starts along one dim, per plane: ``samples`` [N, C] in [0, 1)."""
    if n_out == 1:
        return full((*samples.shape, 1), n_in - pool, dtype=int64, device=samples.device)
    alpha = (n_in - pool) / (n_out - 1)
    i = arange(n_out - 1, dtype=samples.dtype, device=samples.device)
    alpha_t = full((), alpha, dtype=samples.dtype, device=samples.device)
    seq = (((i + samples.unsqueeze(-1)) * alpha_t).floor() - (samples.unsqueeze(-1) * alpha_t).floor()).to(int64)
    last = full((*samples.shape, 1), n_in - pool, dtype=int64, device=samples.device)
    return cat([seq, last], -1)


# which of PyTorch's random samples sets each spatial dim's windows: (H, W) <- (1, 0); (T, H, W) <- (0, 1, 2)
_SAMPLE_OF_DIM = {2: (1, 0), 3: (0, 1, 2)}


def _fractional(op, dims, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    check_tensor(op, input)
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{op}: expected a {dims + 1}-D or {dims + 2}-D input, got shape {tuple(input.shape)}")
    x = input.unsqueeze(0) if input.ndim == dims + 1 else input
    kernel = ntuple(kernel_size, dims, op, "kernel_size")
    sizes = list(x.shape[2:])
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
        ratio = (output_ratio,) * dims if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        output_size = [int(s * r) for s, r in zip(sizes, ratio)]
    out = ntuple(output_size, dims, op, "output_size")
    for d in range(dims):
        if out[d] + kernel[d] - 1 > sizes[d]:
            raise RuntimeError(f"{op}: pool size {kernel[d]} too large relative to input size {sizes[d]} for output "
                               f"size {out[d]} along spatial dim {d}")
    samples = rand(x.shape[0], x.shape[1], dims, dtype=x.dtype, device=x.device) if _random_samples is None else \
        _random_samples.reshape(x.shape[0], x.shape[1], dims)
    starts = [_intervals(samples[..., k], sizes[d], out[d], kernel[d]) for d, k in enumerate(_SAMPLE_OF_DIM[dims])]
    values, indices = _gathered_max(x, starts, kernel, (1,) * dims)
    if input.ndim == dims + 1:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over [N, C, H, W] (or [C, H, W]) to ``output_size`` (or ``output_ratio``
    of the input size): windows of ``kernel_size`` at pseudo-random starts per plane, from
    ``_random_samples`` [N, C, 2] in [0, 1) or drawn as PyTorch draws them (seeded runs match).

    >>> import webgrad as wg
    >>> fractional_max_pool2d(wg.arange(16.0).reshape(1, 1, 4, 4), 2, output_size=2,
    ...                       _random_samples=wg.full((1, 1, 2), 0.5)).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool2d`` and each maximum's flat H*W index (``return_indices``: no effect)."""
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio, True,
                       _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over [N, C, D, H, W] (or [C, D, H, W]); ``_random_samples`` [N, C, 3].

    >>> import webgrad as wg
    >>> fractional_max_pool3d(wg.arange(8.0).reshape(1, 1, 2, 2, 2), 1, output_size=1,
    ...                       _random_samples=wg.zeros(1, 1, 3)).item()
    7.0
    """
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool3d`` and each maximum's flat D*H*W index (``return_indices``: no effect)."""
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio, True,
                       _random_samples)


def _pool_size(op, n, k, s, p, d, ceil_mode):
    if p > k // 2:
        raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, but got pad={p}, "
                           f"kernel_size={k}")
    span = n + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    if out < 1:
        raise RuntimeError(f"{op}: Given input size {n} and kernel {k}, the calculated output size {out} is too small")
    return out


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool3d`` and each maximum's flat D*H*W index (the first, where several tie; padding is
    -inf). ``return_indices`` has no effect: the indices always come back, as PyTorch's.

    >>> import webgrad as wg
    >>> max_pool3d_with_indices(wg.arange(8.0).reshape(1, 1, 2, 2, 2), 2)[1].flatten().tolist()
    [7]
    """
    op = "max_pool3d"
    check_tensor(op, input)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{op}: expected a 4-D or 5-D input, got shape {tuple(input.shape)}")
    x = input.unsqueeze(0) if input.ndim == 4 else input
    k = ntuple(kernel_size, 3, op, "kernel_size")
    s = k if stride is None or stride == [] else ntuple(stride, 3, op, "stride")
    p, d = ntuple(padding, 3, op, "padding"), ntuple(dilation, 3, op, "dilation")
    outs = [_pool_size(op, n, *args, ceil_mode) for n, args in zip(x.shape[2:], zip(k, s, p, d))]
    starts = [arange(o, dtype=int64, device=x.device) * s[i] - p[i] for i, o in enumerate(outs)]
    values, indices = _gathered_max(x, starts, k, d)
    return (values.squeeze(0), indices.squeeze(0)) if input.ndim == 4 else (values, indices)


__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices", "max_pool3d_with_indices"]
