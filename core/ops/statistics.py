"""Integrals, covariances and distances along dims: ``trapezoid``/``trapz``/``cumulative_trapezoid``,
``cov``/``corrcoef``, ``cdist`` and ``renorm``, composed of elementwise, reduction and matmul ops as
PyTorch defines them (so their gradients come with them).

>>> import webgrad as wg
>>> wg.trapezoid(wg.tensor([1.0, 2.0, 4.0])).item()
4.5
"""
from __future__ import annotations

import builtins
import math
import warnings

from ..dtypes import get_default_dtype, int64
from ..shapes import normalize_axis
from ..tensor import Tensor, tensor
from . import movement as M
from .binary import where
from .common import check_tensor, inplace_method, is_scalar, real_only
from .linalg import matmul
from .reduce import cumsum, norm, sum as _sum


def _floating(x):
    return x if x.dtype.kind in "fc" else x.to(get_default_dtype())


def _pieces(op, y, x, dx, dim):
    """The trapezoids' areas along ``dim``: ``(x[i+1] - x[i]) * (y[i+1] + y[i]) / 2`` (``dx`` for the
    spacing when ``x`` is None; 1 when both are)."""
    check_tensor(op, y, "y")
    if x is not None and dx is not None:
        raise TypeError(f"{op}(): give x (a tensor of sample points) or dx (a spacing), not both")
    y = _floating(y)
    d = normalize_axis(dim, y.ndim, op)
    n = y.shape[d]
    mean = (M._slice_dim(y, d, 1, n) + M._slice_dim(y, d, 0, max(n - 1, 0))) / 2
    if x is None:
        return mean * (1 if dx is None else dx), d
    if is_scalar(x):
        return mean * x, d
    check_tensor(op, x, "x")
    x = _floating(x)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point; x has {x.shape[0]}, y "
                               f"has {n} along dim {dim}")
        x = M.reshape(x, (n,) + (1,) * (y.ndim - d - 1))
        step = M._slice_dim(x, 0, 1, n) - M._slice_dim(x, 0, 0, max(n - 1, 0))
    else:
        xd = normalize_axis(d - y.ndim, x.ndim, op)
        step = M._slice_dim(x, xd, 1, n) - M._slice_dim(x, xd, 0, max(n - 1, 0))
    return mean * step, d


def trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor:
    """The trapezoidal rule along ``dim``: ``y`` sampled at ``x`` (a tensor, 1-d or broadcasting with
    ``y``), or ``dx`` apart (1 by default).

    >>> import webgrad as wg
    >>> wg.trapezoid(wg.tensor([1.0, 3.0]), wg.tensor([0.0, 2.0])).item()
    4.0
    """
    pieces, d = _pieces("trapezoid", y, x, dx, dim)
    return _sum(pieces, d)


def trapz(y, x=None, *, dx=None, dim=-1) -> Tensor:
    """``trapezoid`` (its older name).

    >>> import webgrad as wg
    >>> wg.trapz(wg.tensor([1.0, 3.0]), dx=0.5).item()
    1.0
    """
    pieces, d = _pieces("trapz", y, x, dx, dim)
    return _sum(pieces, d)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one element fewer than ``y`` there).

    >>> import webgrad as wg
    >>> wg.cumulative_trapezoid(wg.tensor([1.0, 2.0, 4.0])).tolist()
    [1.5, 4.5]
    """
    pieces, d = _pieces("cumulative_trapezoid", y, x, dx, dim)
    return cumsum(pieces, d)


def cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in ``input``'s rows (observations in columns; a 1-d tensor
    is one variable), with ``correction`` (1: Bessel's) and optional integer frequency weights and
    float observation weights, as ``torch.cov``.

    >>> import webgrad as wg
    >>> wg.cov(wg.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    check_tensor("cov", input)
    if input.ndim > 2:
        raise RuntimeError(f"cov: expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = _floating(M.reshape(input, (1, -1)) if input.ndim < 2 else input)
    n = x.shape[1]
    w = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        check_tensor("cov", weights, name)
        if weights.ndim > 1 or weights.numel() != n:
            raise RuntimeError(f"cov: expected {name} to have one dimension and {n} elements (one per "
                               f"observation), got shape {tuple(weights.shape)}")
        if name == "fweights" and weights.dtype.is_floating:
            raise RuntimeError(f"cov: expected fweights to have integral dtype, got {weights.dtype.name}")
        if name == "aweights" and not weights.dtype.is_floating:
            raise RuntimeError(f"cov: expected aweights to have floating point dtype, got {weights.dtype.name}")
        weights = weights.to(x.dtype)
        w = weights if w is None else w * weights
    if w is None:
        w_sum, avg = n, x.mean(1)
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm_factor = w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if (norm_factor <= 0).item() if isinstance(norm_factor, Tensor) else norm_factor <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0 if isinstance(norm_factor, Tensor) else 0
    x = x - M.unsqueeze(avg, 1)
    c = matmul(x, (x if w is None else x * w).mH)    # (the conjugate, for complex x)
    return M.squeeze(c / norm_factor)


@real_only()
def corrcoef(input) -> Tensor:
    """Pearson's correlation coefficients of the variables in ``input``'s rows (``cov`` normalised by
    the standard deviations, clipped to [-1, 1]).

    >>> import webgrad as wg
    >>> wg.corrcoef(wg.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / M.unsqueeze(std, 1)
    c = c / M.unsqueeze(std, 0)
    return c.clamp(-1, 1)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` ``[..., P, M]`` and each row of ``x2``
    ``[..., R, M]`` (batch dims broadcast) -> ``[..., P, R]``. ``compute_mode`` is accepted and checked:
    the distances are always taken from the differences (PyTorch's matmul shortcut for p = 2 rounds
    differently, by a few units in the last place).

    >>> import webgrad as wg
    >>> wg.cdist(wg.tensor([[0.0, 0.0]]), wg.tensor([[3.0, 4.0], [1.0, 0.0]])).tolist()
    [[5.0, 1.0]]
    """
    check_tensor("cdist", x1, "x1")
    check_tensor("cdist", x2, "x2")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"cdist: {compute_mode} is not a valid value for compute_mode (one of "
                         f"{', '.join(_CDIST_MODES)})")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
                           f"{x2.shape[-1]}")
    if not (x1.dtype.is_floating and x2.dtype.is_floating):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype.name}, X2 got: "
                           f"{x2.dtype.name}")
    if not is_scalar(p) or p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p!r}")
    diff = M.unsqueeze(x1, -2) - M.unsqueeze(x2, -3)
    if p == 0:
        return (diff != 0).to(diff.dtype).sum(-1)
    return norm(diff, p if p != math.inf else math.inf, dim=-1)


def renorm(input, p, dim, maxnorm) -> Tensor:
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm
    ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, as PyTorch's).

    >>> import webgrad as wg
    >>> wg.renorm(wg.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    check_tensor("renorm", input)
    if not input.dtype.is_floating:
        raise RuntimeError(f"renorm: expected a floating-point tensor, got {input.dtype.name}")
    if not is_scalar(p) or p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p!r}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = normalize_axis(dim, max(input.ndim, 1), "renorm")
    axes = tuple(a for a in range(input.ndim) if a != d)
    n = norm(input, p, dim=axes, keepdim=True) if axes else input.abs()
    factor = where(n > maxnorm, maxnorm / (n + 1e-7), 1.0)
    return input * factor.to(input.dtype)


def _spacing_list(op, spacing, dims, input):
    """One spacing per dim of ``dims``: a number (uniform steps) or a 1-d tensor of coordinates."""
    if is_scalar(spacing) or isinstance(spacing, Tensor) and spacing.ndim == 0:
        return [float(spacing)] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise RuntimeError(f"{op}: expected spacing to be unspecified, a scalar, or a list of length equal to the "
                           f"number of dims ({len(dims)}), got {len(spacing)} spacings")
    out = []
    for s, d in zip(spacing, dims):
        if isinstance(s, Tensor) and s.ndim == 1:
            if s.shape[0] != input.shape[d]:
                raise RuntimeError(f"{op}: expected each tensor spacing to have the size of its dim ({input.shape[d]}"
                                   f" for dim {d}), got {s.shape[0]}")
            out.append(_floating(s).to(input.dtype))
        else:
            out.append(float(s))
    return out


def _derivative(f, d, h, edge_order):
    """The derivative of ``f`` along dim ``d``: central differences inside, one-sided ones of order
    ``edge_order`` at the two ends; ``h`` a step (number) or the coordinates (a 1-d tensor)."""
    n = f.shape[d]
    take = lambda a, b: M._slice_dim(f, d, a % n if a < 0 else a, b % n if b <= 0 else b)  # noqa: E731
    if not isinstance(h, Tensor):
        inner = (take(2, n) - take(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first, last = (take(1, 2) - take(0, 1)) / h, (take(-1, n) - take(-2, -1)) / h
        else:
            first = (take(0, 1) * -1.5 + take(1, 2) * 2 - take(2, 3) * 0.5) / h
            last = (take(-3, -2) * 0.5 - take(-2, -1) * 2 + take(-1, n) * 1.5) / h
        return M.cat([first, inner, last], d)
    shape = lambda t: M.reshape(t, (-1,) + (1,) * (f.ndim - d - 1))  # noqa: E731
    dx = h[1:] - h[:-1]
    dx1, dx2 = shape(dx[:-1]), shape(dx[1:])
    inner = (-dx2 / (dx1 * (dx1 + dx2))) * take(0, n - 2) + ((dx2 - dx1) / (dx1 * dx2)) * take(1, n - 1) + \
        (dx1 / (dx2 * (dx1 + dx2))) * take(2, n)
    if edge_order == 1:
        first, last = (take(1, 2) - take(0, 1)) / shape(dx[:1]), (take(-1, n) - take(-2, -1)) / shape(dx[-1:])
    else:
        a, b = shape(dx[:1]), shape(dx[1:2])
        first = (-(2 * a + b) / (a * (a + b))) * take(0, 1) + ((a + b) / (a * b)) * take(1, 2) + \
            (-a / (b * (a + b))) * take(2, 3)
        a, b = shape(dx[-2:-1]), shape(dx[-1:])
        last = (b / (a * (a + b))) * take(-3, -2) + (-(a + b) / (a * b)) * take(-2, -1) + \
            ((2 * b + a) / (b * (a + b))) * take(-1, n)
    return M.cat([first, inner, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1) -> tuple:
    """The derivatives of ``input`` along each of ``dim`` (all dims by default) by finite differences, as
    ``torch.gradient``: second-order central differences inside, one-sided ones of order ``edge_order``
    (1 or 2) at the ends; ``spacing`` a number, one number per dim, or one tensor of coordinates per dim.

    >>> import webgrad as wg
    >>> wg.gradient(wg.tensor([1.0, 2.0, 4.0, 8.0]))[0].tolist()
    [1.0, 1.5, 3.0, 4.0]
    """
    check_tensor("gradient", input)
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_axis(d, input.ndim, "gradient") for d in dims]
    x = _floating(input)
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1; dim {d} "
                               f"of shape {tuple(input.shape)} has {x.shape[d]}")
    return tuple(_derivative(x, d, h, edge_order) for d, h in zip(dims, _spacing_list("gradient", spacing, dims, x)))


METHODS = {"cov": cov, "corrcoef": corrcoef, "renorm": renorm, "renorm_": inplace_method("renorm_", renorm)}

__all__ = ["gradient", "trapezoid", "trapz", "cumulative_trapezoid", "cov", "corrcoef", "cdist", "renorm"]
