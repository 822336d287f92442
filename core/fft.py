"""``webgrad.fft``: PyTorch's ``torch.fft``: the eighteen transforms (``fft``, ``rfft``, ``hfft``, their
inverses, and their 2-dim and n-dim forms; ``ops/fft.py``) and the helpers ``fftfreq``, ``rfftfreq``,
``fftshift``, ``ifftshift``. The transforms make or take complex tensors, so they run on cpu only (the
GPU backends hold no complex dtypes and raise TypeError saying so); the helpers run everywhere.

>>> import webgrad as wg
>>> wg.fft.fftfreq(4).tolist()
[0.0, 0.25, -0.5, -0.25]
>>> wg.fft.irfft(wg.fft.rfft(wg.tensor([1.0, 2.0, 3.0])), n=3).tolist()
[1.0, 2.0, 3.0]
"""
from __future__ import annotations

import math

from .dtypes import get_default_dtype
from .ops import binary, creation, movement
from .ops.fft import *  # noqa: F401,F403  (the transforms)
from .ops.fft import __all__ as _TRANSFORMS
from .ops.common import check_tensor
from .porting_table import module_getattr as _module_getattr
from .tensor import Tensor


def _frequencies(op, ranges, n, d, dtype, layout, device, requires_grad):
    """``k / (n d)`` for the integers ``k`` of ``ranges``, in PyTorch's order of operations (a float
    arange times the scale 1 / (n d))."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"{op}: n must be a non-negative int, got {n!r}")
    parts = [creation.arange(lo, hi, dtype=dtype, layout=layout, device=device) for lo, hi in ranges]
    k = parts[0] if len(parts) == 1 else movement.cat(parts)
    if not k.dtype.is_floating:
        raise RuntimeError(f"{op}: expected a floating dtype, got {k.dtype.name}")
    scale = 1.0 / (n * d) if n * d else math.copysign(math.inf, d)   # C's 1.0 / 0.0 (nothing to scale when n is 0)
    return binary.mul(k, scale).requires_grad_(requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``: 0, 1, ..., then the
    negative ones, over ``n * d``.

    >>> import webgrad as wg
    >>> wg.fft.fftfreq(5, d=0.5).tolist()
    [0.0, 0.4000000059604645, 0.800000011920929, -0.800000011920929, -0.4000000059604645]
    """
    ranges = [(0, (n + 1) // 2), (-(n // 2), 0)]
    return _frequencies("fftfreq", ranges, n, d, dtype or get_default_dtype(), layout, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of a one-sided (real) ``n``-point FFT: 0 .. n // 2, over ``n * d``.

    >>> import webgrad as wg
    >>> wg.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    ranges = [(0, n // 2 + 1)]
    return _frequencies("rfftfreq", ranges, n, d, dtype or get_default_dtype(), layout, device, requires_grad)


def _shifted(op, input, dim, shift):
    check_tensor(op, input)
    dims = tuple(range(input.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    return movement.roll(input, [shift(input.shape[k]) for k in dims], dims)


def fftshift(input, dim=None) -> Tensor:
    """Move the zero frequency to the middle: a roll by ``size // 2`` along ``dim`` (every dim when None).

    >>> import webgrad as wg
    >>> wg.fft.fftshift(wg.fft.fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    return _shifted("fftshift", input, dim, lambda size: size // 2)


def ifftshift(input, dim=None) -> Tensor:
    """The inverse of ``fftshift``: a roll by ``size // 2`` back.

    >>> import webgrad as wg
    >>> wg.fft.ifftshift(wg.fft.fftshift(wg.arange(5))).tolist()
    [0, 1, 2, 3, 4]
    """
    return _shifted("ifftshift", input, dim, lambda size: -(size // 2))   # = (size + 1) // 2 forward


__all__ = [*_TRANSFORMS, "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

__getattr__ = _module_getattr("webgrad.fft")
