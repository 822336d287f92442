"""Dropout: zero elements with probability p and scale the rest by 1/(1-p) (training only)."""
from __future__ import annotations

from ...ops.common import check_tensor


def dropout(input, p=0.5, training=True, inplace=False):
    """Randomly zero elements with probability ``p`` (mask from ``webgrad.rand``), scaling the kept
    ones by 1/(1-p); the identity when not ``training``. ``inplace`` writes the result into ``input``.

    >>> import webgrad as wg
    >>> dropout(wg.ones(3), p=0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    import webgrad as wg
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
        keep = wg.rand(*input.shape, dtype=input.dtype, backend=input._backend) >= p
        out = input * keep.to(input.dtype) * (1.0 / (1.0 - p))
    return input._assign(out, "dropout") if inplace else out


__all__ = ["dropout"]
