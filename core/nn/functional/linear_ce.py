"""``linear_cross_entropy`` (PyTorch 2.13): the cross entropy of ``linear(input, linear_weight)``
against ``target``, by PyTorch's reference path."""
from __future__ import annotations

import math

from ...ops.common import check_tensor
from .linear import linear
from .loss import cross_entropy


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`` with ``linear_weight``
    [C, *out_features, in_features] (logits [N, C, *out_features]); ``ignore_index=None`` ignores no
    class. ``options`` (PyTorch's chunked implementation, whose accumulation settings change the
    rounding) is not implemented: it must be None (NotImplementedError).

    >>> import webgrad as wg
    >>> round(linear_cross_entropy(wg.ones(2, 3), wg.zeros(4, 3), wg.tensor([0, 1])).item(), 4)
    1.3863
    """
    op = "linear_cross_entropy"
    for name, t in (("input", input), ("linear_weight", linear_weight), ("target", target)):
        check_tensor(op, t, name)
    if options is not None:
        raise NotImplementedError(f"{op}: options (PyTorch's chunked path) is not implemented in webgrad; pass "
                                  f"options=None for the reference computation")
    if not 1 <= input.ndim <= 2:
        raise RuntimeError(f"{op}: expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"{op}: expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"{op}: expected equal input and linear_weight last dimensions (in_features), got "
                           f"{in_features} and {linear_weight.shape[-1]}, respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"{op}: expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"{op}: K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
                           f"requires batched input, (N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError(f"{op}: ignore_index cannot be specified when target contains probabilities")
    if out_features:
        rows = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        linear_bias = None if linear_bias is None else linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)


__all__ = ["linear_cross_entropy"]
