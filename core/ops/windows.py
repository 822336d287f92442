"""Window functions for signal processing, as ``torch.hann_window`` and its family: ``window_length``
values of a taper (symmetric, or ``periodic``: the first ``window_length`` of one a sample longer, as
for spectral analysis). A window depends only on its Python arguments, so its values are computed on
the host in double precision and uploaded in ``dtype`` (a floating one).

>>> import webgrad as wg
>>> wg.hann_window(4).tolist()
[0.0, 0.5, 1.0, 0.5]
"""
from __future__ import annotations

import math
import operator

from ..dtypes import get_default_dtype, to_dtype
from ..layouts import check_factory
from ..tensor import Tensor, tensor
from .creation import _backend, _finish


def _cosine_sum(coefficients):
    """``sum_k (-1)^k a_k cos(2 pi k n / (N - 1))``: the Hann, Hamming and Blackman family."""
    return lambda n, N: sum((-1) ** k * a * math.cos(2 * math.pi * k * n / (N - 1)) for k, a in enumerate(coefficients))


def _bartlett(n, N):
    return 1 - abs(2 * n / (N - 1) - 1)


def _i0(x):
    """The modified Bessel function of the first kind, order 0, by its power series (converges for all x)."""
    term = total = 1.0
    for k in range(1, 500):
        term *= (x / (2 * k)) ** 2
        total += term
        if term < total * 1e-17:
            break
    return total


def _kaiser(beta):
    return lambda n, N: _i0(beta * math.sqrt(max(0.0, 1 - ((n - (N - 1) / 2) / ((N - 1) / 2)) ** 2))) / _i0(beta)


def _window(op, shape_of, window_length, periodic, dtype, layout, device, requires_grad, pin_memory) -> Tensor:
    check_factory(op, layout, pin_memory)
    try:
        window_length = operator.index(window_length)
    except TypeError:
        raise TypeError(f"{op}(): argument 'window_length' must be int, not {type(window_length).__name__}") from None
    if window_length < 0:
        raise RuntimeError(f"{op} requires non-negative window_length, got window_length={window_length}")
    dtype = to_dtype(dtype or get_default_dtype())
    if not dtype.is_floating:
        raise RuntimeError(f"{op} expects floating point dtypes, got: {dtype.name}")
    N = window_length + 1 if periodic else window_length
    values = [1.0] if window_length == 1 else [shape_of(n, N) for n in range(window_length)]
    return _finish(tensor(values, dtype=dtype, device=_backend(None, device)), requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False) -> Tensor:
    """The Hann window, ``0.5 - 0.5 cos(2 pi n / (N - 1))``.

    >>> import webgrad as wg
    >>> wg.hann_window(3, periodic=False).tolist()
    [0.0, 1.0, 0.0]
    """
    return _window("hann_window", _cosine_sum((0.5, 0.5)), window_length, periodic, dtype, layout, device,
                   requires_grad, pin_memory)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False) -> Tensor:
    """The Hamming window, ``alpha - beta cos(2 pi n / (N - 1))``.

    >>> import webgrad as wg
    >>> [round(v, 2) for v in wg.hamming_window(3, False).tolist()]
    [0.08, 1.0, 0.08]
    """
    return _window("hamming_window", _cosine_sum((alpha, beta)), window_length, periodic, dtype, layout, device,
                   requires_grad, pin_memory)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False) -> Tensor:
    """The Blackman window, ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``.

    >>> import webgrad as wg
    >>> round(wg.blackman_window(4, periodic=False)[1].item(), 4)
    0.63
    """
    return _window("blackman_window", _cosine_sum((0.42, 0.5, 0.08)), window_length, periodic, dtype, layout,
                   device, requires_grad, pin_memory)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False) -> Tensor:
    """The Bartlett (triangular) window, ``1 - |2n / (N - 1) - 1|``.

    >>> import webgrad as wg
    >>> wg.bartlett_window(5, False).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    return _window("bartlett_window", _bartlett, window_length, periodic, dtype, layout, device, requires_grad,
                   pin_memory)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False) -> Tensor:
    """The Kaiser window, ``I0(beta sqrt(1 - ((n - (N-1)/2) / ((N-1)/2))^2)) / I0(beta)``.

    >>> import webgrad as wg
    >>> [round(v, 4) for v in wg.kaiser_window(3, False, beta=1.0).tolist()]
    [0.7898, 1.0, 0.7898]
    """
    return _window("kaiser_window", _kaiser(float(beta)), window_length, periodic, dtype, layout, device,
                   requires_grad, pin_memory)


__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
METHODS = {}
