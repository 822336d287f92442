"""Resampling: ``interpolate`` (nearest / linear / bilinear), one spatial dim at a time with
index_select and a lerp; and ``pad`` (webgrad's own op, re-exported)."""
from __future__ import annotations

import math
import warnings

from ...ops.common import check_tensor
from ...ops.movement import pad  # noqa: F401

_MODES = {"nearest": None, "linear": 1, "bilinear": 2}   # mode -> spatial dims it needs (None: any)


def _output_sizes(x, size, scale_factor, spatial, recompute_scale_factor=False):
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: exactly one of size and scale_factor must be given")
    ins = tuple(x.shape[2:])
    if size is not None:
        out = (size,) * spatial if isinstance(size, int) else tuple(size)
        scales = tuple(i / o if o else 0.0 for i, o in zip(ins, out))
    else:
        factors = (scale_factor,) * spatial if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        out = tuple(int(math.floor(i * f)) for i, f in zip(ins, factors))
        scales = tuple(i / o if o else 0.0 for i, o in zip(ins, out)) if recompute_scale_factor else \
            tuple(1.0 / f for f in factors)
    if len(out) != spatial or any(o < 1 for o in out):
        raise ValueError(f"interpolate: output size {out} is invalid for input of shape {tuple(x.shape)} "
                         f"({spatial} spatial dims)")
    return out, scales


def _source_indices(n_in, n_out, scale, mode, align_corners):
    """Per output cell: (low index, high index, weight of high) in plain Python."""
    if mode == "nearest":
        return [min(int(math.floor(i * scale)), n_in - 1) for i in range(n_out)], None, None
    if align_corners:
        src = [i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0 for i in range(n_out)]
    else:
        src = [max((i + 0.5) * scale - 0.5, 0.0) for i in range(n_out)]
    lo = [min(int(s), n_in - 1) for s in src]
    return lo, [min(i + 1, n_in - 1) for i in lo], [s - i for s, i in zip(src, lo)]


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resize [N, C, *spatial] to ``size`` or by ``scale_factor`` with PyTorch's sampling rules:
    'nearest' (any spatial rank), 'linear' (1 spatial dim), 'bilinear' (2). ``recompute_scale_factor``
    samples as if the computed size had been given. ``antialias`` (bilinear only) changes nothing when
    no dim shrinks, as in PyTorch; its filter for shrinking is not implemented and raises.

    >>> import webgrad as wg
    >>> interpolate(wg.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    import webgrad as wg
    check_tensor("interpolate", input)
    spatial = input.ndim - 2
    if mode not in _MODES:
        raise ValueError(f"interpolate: mode must be one of {', '.join(map(repr, _MODES))}; got {mode!r}")
    if spatial < 1 or _MODES[mode] not in (None, spatial):
        raise ValueError(f"interpolate: mode {mode!r} needs a {(_MODES[mode] or 1) + 2}-D input, got shape "
                         f"{tuple(input.shape)}")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("interpolate: align_corners only has an effect with mode 'linear' or 'bilinear'")
    out, scales = _output_sizes(input, size, scale_factor, spatial, bool(recompute_scale_factor))
    if antialias:
        if mode != "bilinear":
            raise ValueError(f"interpolate: antialias is restricted to the bilinear mode (and PyTorch's bicubic), "
                             f"got mode {mode!r}")
        if any(o < i for i, o in zip(input.shape[2:], out)):
            raise NotImplementedError(f"interpolate: antialias=True when shrinking {tuple(input.shape[2:])} to "
                                      f"{out} is not implemented; use antialias=False, or pool first (avg_pool2d)")
    x = input
    for k, (n_in, n_out, scale) in enumerate(zip(input.shape[2:], out, scales)):
        dim = 2 + k
        lo, hi, lam = _source_indices(n_in, n_out, scale, mode, bool(align_corners))
        x0 = x.index_select(dim, wg.tensor(lo, dtype=wg.int64, backend=x._backend))
        if lam is None:
            x = x0
            continue
        x1 = x.index_select(dim, wg.tensor(hi, dtype=wg.int64, backend=x._backend))
        w = wg.tensor(lam, dtype=x.dtype, backend=x._backend).reshape((n_out,) + (1,) * (x.ndim - 1 - dim))
        x = x0 + (x1 - x0) * w
    return x


def _deprecated(name):
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated ``interpolate`` (a UserWarning says so, as PyTorch's).

    >>> import warnings, webgrad as wg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); upsample(wg.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    """
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated ``interpolate(..., mode='nearest')`` (a UserWarning says so).

    >>> import warnings, webgrad as wg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); upsample_nearest(wg.tensor([[[1.0, 2.0]]]), 3).tolist()
    [[[1.0, 1.0, 2.0]]]
    """
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated ``interpolate(..., mode='bilinear', align_corners=True)`` (a UserWarning says so).

    >>> import warnings, webgrad as wg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); upsample_bilinear(wg.tensor([[[[0.0, 2.0]]]]), (1, 3)).tolist()
    [[[[0.0, 1.0, 2.0]]]]
    """
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["interpolate", "pad", "upsample", "upsample_nearest", "upsample_bilinear"]
