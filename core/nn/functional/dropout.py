"""Dropout: zero elements with probability p and scale the rest by 1/(1-p) (training only)."""
from __future__ import annotations

import math

from ...ops.common import check_tensor
from ...ops.random import _bernoulli


def _noise(op, shape, p, input):
    """PyTorch's dropout noise: Bernoulli(1 - p) draws as 1/0 in ``input``'s dtype."""
    return _bernoulli(tuple(shape), 1.0 - p, input.dtype, input._backend, None, op)


def dropout(input, p=0.5, training=True, inplace=False):
    """Randomly zero elements with probability ``p``, scaling the kept ones by 1/(1-p) (PyTorch's
    noise: ``bernoulli_(1 - p)`` divided by 1 - p, so a seed drops what PyTorch drops); the identity
    when not ``training``. ``inplace`` writes the result into ``input``.

    >>> import webgrad as wg
    >>> dropout(wg.ones(3), p=0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    check_tensor("dropout", input)
    if not input.dtype.is_floating:
        raise TypeError(f"dropout: input must be a floating tensor, got {input.dtype.name}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        out = input * (_noise("dropout", input.shape, p, input) / (1.0 - p))
    return input._assign(out, "dropout") if inplace else out


def _channel_dropout(op, input, p, training, inplace, spatial):
    """Zero whole channels (dim 1 of [N, C, *spatial], or dim 0 of unbatched [C, *spatial]) with
    probability ``p``, scaling the kept ones by 1/(1-p)."""
    check_tensor(op, input)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{op}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input, got "
                           f"shape {tuple(input.shape)}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    lead = tuple(input.shape[:input.ndim - spatial])
    if p == 1.0:
        out = input * 0.0
    else:
        out = input * (_noise(op, lead, p, input) / (1.0 - p)).reshape(lead + (1,) * spatial)
    return input._assign(out, op) if inplace else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of [N, C, L] (or [C, L]) with probability ``p``, scaling the rest by 1/(1-p).

    >>> import webgrad as wg
    >>> dropout1d(wg.ones(1, 2, 3), training=False).shape
    webgrad.Size([1, 2, 3])
    """
    return _channel_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of [N, C, H, W] (or [C, H, W]) with probability ``p``, scaling the rest."""
    return _channel_dropout("dropout2d", input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of [N, C, D, H, W] (or [C, D, H, W]) with probability ``p``, scaling the rest."""
    return _channel_dropout("dropout3d", input, p, training, inplace, 3)


_SELU_ALPHA = 1.7580993408473766   # -scale * alpha of SELU: the value a dropped SELU unit is set to, negated


def _alpha_dropout(op, input, p, training, inplace, feature):
    """SELU-preserving dropout (PyTorch's): dropped units (whole channels when ``feature``) set to
    SELU's negative saturation, then an affine map a * x + b keeping mean 0 and variance 1."""
    check_tensor(op, input)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError(f"{op}: feature dropout requires at least 2 dimensions in the input, got shape "
                           f"{tuple(input.shape)}")
    if p == 1.0:
        out = input * 0.0
    else:
        shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
        keep = _noise(op, shape, p, input)
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
        out = input * (keep * a) + ((keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p)
    return input._assign(out, op) if inplace else out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: keeps the inputs' mean and variance (PyTorch's; not ``training`` by default).

    >>> import webgrad as wg
    >>> alpha_dropout(wg.ones(3), 0.5).tolist()
    [1.0, 1.0, 1.0]
    """
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``alpha_dropout`` of whole channels (dim 1) of [N, C, ...].

    >>> import webgrad as wg
    >>> feature_alpha_dropout(wg.ones(1, 2, 3), 0.5).shape
    webgrad.Size([1, 2, 3])
    """
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, True)


__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
