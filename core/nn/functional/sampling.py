"""Sampling an image at given points (PyTorch's ``affine_grid`` and ``grid_sample``, the spatial
transformer's pair), composed from existing ops: the points are unnormalized to pixel coordinates,
folded by the padding mode, and each of the 2 (nearest: 1) neighbours per spatial dim is gathered
from the flattened image and weighted. Gradients reach the input through ``gather`` and the grid
through the interpolation weights (``floor``'s gradient is zero, as the kernels' is), on every
backend."""
from __future__ import annotations

import itertools
import math
import warnings

from ...dtypes import int64
from ...ops.common import check_tensor
from ...ops.creation import linspace, ones, zeros
from ...ops.movement import stack
from ...ops.binary import where

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")
_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _align(align_corners, stacklevel=3):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=stacklevel)
        return False
    return bool(align_corners)


def _base_coords(n: int, align_corners: bool, like):
    """The normalized centres of ``n`` pixels along one dim, in [-1, 1] (one pixel: 0, as PyTorch's)."""
    coords = linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device) if n > 1 else \
        zeros(1, dtype=like.dtype, device=like.device)
    return coords if align_corners else coords * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid [N, H, W, 2] (or [N, D, H, W, 3]) of the affine maps ``theta`` [N, 2, 3]
    (or [N, 3, 4]) for an output of ``size`` [N, C, H, W] (or [N, C, D, H, W]): each output pixel's
    normalized (x, y[, z]) mapped by theta. ``align_corners=None`` warns and means False, as PyTorch's.

    >>> import webgrad as wg
    >>> affine_grid(wg.tensor([[[1.0, 0, 0], [0, 1.0, 0]]]), [1, 1, 1, 2], align_corners=True).tolist()
    [[[[-1.0, 0.0], [1.0, 0.0]]]]
    """
    align_corners = _align(align_corners)
    check_tensor("affine_grid", theta, "theta")
    if not theta.dtype.is_floating:
        raise ValueError(f"affine_grid: Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    rows = {4: 2, 5: 3}.get(len(size))
    if rows is None:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (rows, rows + 1):
        raise ValueError(f"affine_grid: Expected a batch of {rows}D affine matrices of shape Nx{rows}x{rows + 1} for "
                         f"size {size}. Got {tuple(theta.shape)}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"affine_grid: Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: theta has {theta.shape[0]} matrices but size asks for a batch of {size[0]}")
    axes = [_base_coords(n, align_corners, theta) for n in reversed(spatial)]   # x (last dim) first
    mesh = [a.reshape([-1 if i == len(spatial) - 1 - k else 1 for i in range(len(spatial))]).expand(*spatial)
            for k, a in enumerate(axes)]
    base = stack(mesh + [ones(*spatial, dtype=theta.dtype, device=theta.device)], dim=-1)
    grid = base.reshape(1, -1, rows + 1) @ theta.transpose(1, 2)
    return grid.reshape(size[0], *spatial, rows)


def _unnormalize(coord, n: int, align_corners: bool):
    return (coord + 1) * ((n - 1) / 2) if align_corners else ((coord + 1) * n - 1) / 2


def _reflect(coord, twice_low: int, twice_high: int):
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = (coord - low).abs()
    flips = (distance / span).floor()
    extra = distance - flips * span
    return where(flips.remainder(2) == 0, extra + low, span - extra + low)


def _fold(coord, n: int, padding_mode: str, align_corners: bool):
    """Pixel coordinates after the padding mode: border clips, reflection mirrors then clips."""
    if padding_mode == "zeros":
        return coord
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (n - 1)) if align_corners else _reflect(coord, -1, 2 * n - 1)
    return coord.clamp(0, n - 1)


def _gather(flat, index, valid, channels):
    """``flat`` [N, C, P] at ``index`` [N, Q] (zero where not ``valid``) -> [N, C, Q]."""
    n, q = index.shape
    picked = flat.gather(2, index.reshape(n, 1, q).expand(n, channels, q))
    return picked * valid.reshape(n, 1, q).to(flat.dtype)


def _neighbours(coords, sizes, mode):
    """Per spatial dim: [(index tensor, weight), ...] for the 2 (or 1) neighbours."""
    out = []
    for coord in coords:
        if mode == "nearest":   # weight 1 with a zero gradient: the grid gets zeros, as PyTorch's, not None
            out.append([(coord.round(), coord * 0 + 1)])
            continue
        low = coord.floor()
        frac = coord - low
        out.append([(low, 1 - frac), (low + 1, frac)])
    return out


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` [N, C, H, W] (or [N, C, D, H, W]) at the normalized points ``grid``
    [N, Ho, Wo, 2] (or [N, Do, Ho, Wo, 3]; (x, y[, z]) in [-1, 1]) -> [N, C, Ho, Wo]. ``mode``:
    'bilinear' (trilinear for 5-D) or 'nearest' (half to even, as PyTorch's); ``padding_mode``:
    'zeros', 'border' or 'reflection'. 'bicubic' is not implemented (NotImplementedError).

    >>> import webgrad as wg
    >>> img = wg.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    >>> grid_sample(img, wg.tensor([[[[0.0, 0.0]]]]), align_corners=True).item()
    2.5
    """
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align_corners = _align(align_corners)
    check_tensor("grid_sample", input)
    check_tensor("grid_sample", grid, "grid")
    dims = input.ndim - 2
    if dims not in (2, 3) or grid.ndim != input.ndim or grid.shape[-1] != dims or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected a 4-D or 5-D input and a grid [N, *out, {max(dims, 2)}] of the "
                           f"same rank and batch, got input {tuple(input.shape)} and grid {tuple(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode 'bicubic' is not implemented in webgrad; use 'bilinear'")
    n, channels, sizes = input.shape[0], input.shape[1], list(input.shape[2:])
    out_shape = list(grid.shape[1:-1])
    flat_grid = grid.reshape(n, -1, dims)
    coords = [_fold(_unnormalize(flat_grid[..., dims - 1 - d], sizes[d], align_corners), sizes[d], padding_mode,
                    align_corners) for d in range(dims)]   # grid's last entry is the first spatial dim
    flat = input.reshape(n, channels, -1)
    strides = [math.prod(sizes[d + 1:]) for d in range(dims)]
    out = None
    for corner in itertools.product(*_neighbours(coords, sizes, mode)):
        index, valid, weight = 0, None, None
        for d, (at, w) in enumerate(corner):
            inside = (at >= 0) & (at <= sizes[d] - 1)
            valid = inside if valid is None else valid & inside
            index = index + at.clamp(0, sizes[d] - 1).to(int64) * strides[d]
            weight = w if weight is None else weight * w
        term = _gather(flat, index, valid, channels) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out.reshape(n, channels, *out_shape)


__all__ = ["affine_grid", "grid_sample"]
