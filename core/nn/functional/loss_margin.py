"""PyTorch's margin, embedding and likelihood losses (margin ranking, hinge/cosine embedding, soft
and multi-label/multi-class margin, triplet, Poisson and Gaussian NLL), composed from ops, with
``reduction`` ('mean' | 'sum' | 'none') and the deprecated ``size_average``/``reduce``."""
from __future__ import annotations

import math

from ...engine import no_grad
from ...ops.common import check_tensor
from ._utils import check_reduction, legacy_reduction, reduce_loss


def _checked(op, *tensors):
    for name, t in tensors:
        check_tensor(op, t, name)


def _reduced(op, loss, size_average, reduce, reduction):
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction), op)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin), target holding 1 or -1.

    >>> import webgrad as wg
    >>> margin_ranking_loss(wg.tensor([1.0, 2.0]), wg.tensor([2.0, 1.0]), wg.tensor([1.0, 1.0])).item()
    0.5
    """
    op = "margin_ranking_loss"
    _checked(op, ("input1", input1), ("input2", input2), ("target", target))
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"{op}: all input tensors should have the same number of dimensions, got input1 "
                           f"{tuple(input1.shape)}, input2 {tuple(input2.shape)}, target {tuple(target.shape)}")
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return _reduced(op, loss, size_average, reduce, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where target is 1, max(0, margin - input) where it is -1 (PyTorch's: both terms where
    the target is neither).

    >>> import webgrad as wg
    >>> hinge_embedding_loss(wg.tensor([0.3, 2.0]), wg.tensor([1.0, -1.0]), reduction="none").tolist()
    [0.30000001192092896, 0.0]
    """
    import webgrad as wg
    op = "hinge_embedding_loss"
    _checked(op, ("input", input), ("target", target))
    if not input.dtype.is_floating:   # PyTorch's: the margin in the integer dtype (truncated), the loss too
        margin = int(margin)
    hinge = wg.where(target != 1, (margin - input).clamp(min=0), 0)
    loss = hinge + wg.where(target != -1, input, 0)
    return _reduced(op, loss, size_average, reduce, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), target holding 1 or -1.

    >>> import webgrad as wg
    >>> round(soft_margin_loss(wg.tensor([0.0]), wg.tensor([1.0])).item(), 4)
    0.6931
    """
    op = "soft_margin_loss"
    _checked(op, ("input", input), ("target", target))
    loss = (-target * input).exp().log1p()     # input and target broadcast, as PyTorch's
    return _reduced(op, loss, size_average, reduce, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy of logits per class (times ``weight``), averaged over the class (last) dim.

    >>> import webgrad as wg
    >>> round(multilabel_soft_margin_loss(wg.tensor([[0.0, 0.0]]), wg.tensor([[1.0, 0.0]])).item(), 4)
    0.6931
    """
    import webgrad as wg
    op = "multilabel_soft_margin_loss"
    _checked(op, ("input", input), ("target", target))
    loss = -(target * wg.nn.functional.logsigmoid(input) + (1 - target) * wg.nn.functional.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    classes = input.ndim - 1
    loss = loss.sum(classes) / input.shape[classes]
    return _reduced(op, loss, size_average, reduce, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1; the cosine over
    the last dim of [N, D] (or [D] with a 0-d target), 1e-12 added to each squared norm as PyTorch.

    >>> import webgrad as wg
    >>> cosine_embedding_loss(wg.tensor([[1.0, 0.0]]), wg.tensor([[0.0, 1.0]]), wg.tensor([1.0])).item()
    1.0
    """
    import webgrad as wg
    op = "cosine_embedding_loss"
    _checked(op, ("input1", input1), ("input2", input2), ("target", target))
    if target.ndim not in (0, 1) or input1.ndim != target.ndim + 1 or input2.ndim != input1.ndim:
        raise RuntimeError(f"{op}: expected 1-D inputs with a 0-D target or 2-D inputs with a 1-D target, got "
                           f"input1 {tuple(input1.shape)}, input2 {tuple(input2.shape)}, target "
                           f"{tuple(target.shape)}")
    dim = target.ndim
    dot = (input1 * input2).sum(dim)
    norms = ((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)
    cos = dot / norms.sqrt()
    loss = wg.where(target == 1, 1 - cos, 0.0) + wg.where(target == -1, (cos - margin).clamp(min=0), 0.0)
    return _reduced(op, loss, size_average, reduce, reduction)


def _check_triplet(op, anchor, positive, negative):
    _checked(op, ("anchor", anchor), ("positive", positive), ("negative", negative))
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"{op}: the anchor, positive and negative tensors must have the same number of "
                           f"dimensions, got {tuple(anchor.shape)}, {tuple(positive.shape)}, "
                           f"{tuple(negative.shape)}")


def _triplet(op, anchor, positive, negative, distance, margin, swap, reduction):
    check_reduction(reduction, op)
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return reduce_loss((margin + d_pos - d_neg).clamp(min=0), reduction, op)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with d the p-norm pairwise distance
    (``swap``: d(anchor, negative) replaced by d(positive, negative) where that is smaller).

    >>> import webgrad as wg
    >>> a = wg.tensor([[0.0, 0.0]])
    >>> round(triplet_margin_loss(a, wg.tensor([[1.0, 0.0]]), wg.tensor([[3.0, 0.0]])).item(), 4)
    0.0
    """
    import webgrad as wg
    op = "triplet_margin_loss"
    _check_triplet(op, anchor, positive, negative)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    reduction = legacy_reduction(size_average, reduce, reduction)
    distance = lambda a, b: wg.nn.functional.pairwise_distance(a, b, p, eps)  # noqa: E731
    return _triplet(op, anchor, positive, negative, distance, margin, swap, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """``triplet_margin_loss`` with any ``distance_function(a, b)`` (default: pairwise_distance).

    >>> import webgrad as wg
    >>> a = wg.tensor([[0.0, 0.0]])
    >>> round(triplet_margin_with_distance_loss(a, wg.tensor([[1.0, 0.0]]), wg.tensor([[1.5, 0.0]])).item(), 4)
    0.5
    """
    import webgrad as wg
    op = "triplet_margin_with_distance_loss"
    _check_triplet(op, anchor, positive, negative)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    distance = distance_function if distance_function is not None else wg.nn.functional.pairwise_distance
    return _triplet(op, anchor, positive, negative, distance, margin, swap, reduction)


def _class_target(op, input, target):
    """[N, C] input and [N] target (a [C] input takes a 0-d or [1] target), or a RuntimeError."""
    if input.ndim not in (1, 2) or target.dtype.kind != "i":
        raise RuntimeError(f"{op}: expected a 1-D or 2-D input and an integer target, got input "
                           f"{tuple(input.shape)} and target {target.dtype.name} {tuple(target.shape)}")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if target.numel() != x.shape[0] or target.ndim > 1:
        raise RuntimeError(f"{op}: inconsistent target size {tuple(target.shape)} for input of shape "
                           f"{tuple(input.shape)}")
    return x, target.reshape(x.shape[0])


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])^p (times weight[y]) / C.

    >>> import webgrad as wg
    >>> round(multi_margin_loss(wg.tensor([[0.1, 0.2, 0.4, 0.8]]), wg.tensor([3])).item(), 4)
    0.325
    """
    import webgrad as wg
    op = "multi_margin_loss"
    _checked(op, ("input", input), ("target", target))
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 are supported, got p={p!r}")
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, op)
    x, y = _class_target(op, input, target)
    n, c = x.shape
    picked = x.gather(1, y.unsqueeze(1))
    z = (margin - picked + x).clamp(min=0)
    z = z * z if p == 2 else z
    if weight is not None:
        z = z * weight.index_select(0, y).unsqueeze(1)
    own = wg.arange(c, device=x.device).unsqueeze(0) == y.unsqueeze(1)
    loss = wg.where(own, 0.0, z).sum(1) / c
    return reduce_loss(loss if input.ndim == 2 else loss.squeeze(0), reduction, op)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: ``target`` lists each sample's classes, ended by the first -1; the loss
    sums max(0, 1 - (x[y] - x[i])) over its classes y and the classes i not among them, / C.

    >>> import webgrad as wg
    >>> round(multilabel_margin_loss(wg.tensor([[0.1, 0.2, 0.4, 0.8]]), wg.tensor([[3, 0, -1, 1]])).item(), 4)
    0.85
    """
    import webgrad as wg
    op = "multilabel_margin_loss"
    _checked(op, ("input", input), ("target", target))
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, op)
    if input.ndim not in (0, 1, 2) or tuple(target.shape) != tuple(input.shape) or target.dtype.kind != "i":
        raise RuntimeError(f"{op}: expected a 0-D, 1-D or 2-D input and an integer target of its shape, got input "
                           f"{tuple(input.shape)} and target {target.dtype.name} {tuple(target.shape)}")
    classes = input.shape[-1] if input.ndim else 1
    x, t = input.reshape(-1, classes), target.reshape(-1, classes)
    c = x.shape[1]
    listed = (t == -1).to(wg.long).cumsum(1) == 0                       # [N, C]: before the first -1
    safe = wg.where(listed, t, 0)
    classes = wg.arange(c, device=x.device)
    is_target = ((safe.unsqueeze(2) == classes) & listed.unsqueeze(2)).any(1)       # [N, C]
    picked = x.gather(1, safe)                                          # [N, C]: x[y_j]
    hinge = (1 - picked.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0)    # [N, j, i]
    counted = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = wg.where(counted, hinge, 0.0).sum((1, 2)) / c
    return reduce_loss(loss if input.ndim == 2 else loss.reshape(()), reduction, op)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Poisson negative log likelihood: exp(input) - target * input (``log_input``), else
    input - target * log(input + eps); ``full`` adds Stirling's term where target > 1.

    >>> import webgrad as wg
    >>> poisson_nll_loss(wg.tensor([0.0]), wg.tensor([1.0])).item()
    1.0
    """
    import webgrad as wg
    op = "poisson_nll_loss"
    _checked(op, ("input", input), ("target", target))
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction, op)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        t = wg.where(target > 1, target, 1.0)
        stirling = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + wg.where(target > 1, stirling, 0.0)
    return reduce_loss(loss, reduction, op)


def _gaussian_var(op, input, var):
    import webgrad as wg
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError(f"{op}: var has negative entry/entries ({var})")
        return wg.full(tuple(input.shape), float(var), dtype=input.dtype, device=input.device)
    check_tensor(op, var, "var")
    if bool((var < 0).any().item()):
        raise ValueError(f"{op}: var has negative entry/entries")
    if tuple(var.shape) == tuple(input.shape):
        return var
    if tuple(input.shape[:-1]) == tuple(var.shape):
        return var.unsqueeze(-1)
    if input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var
    raise ValueError(f"{op}: var of shape {tuple(var.shape)} is of incorrect size for input {tuple(input.shape)}")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood 0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi when
    ``full``); ``var`` (a tensor or a float) is clamped at ``eps`` without changing its gradient.

    >>> import webgrad as wg
    >>> gaussian_nll_loss(wg.tensor([1.0]), wg.tensor([3.0]), wg.tensor([1.0])).item()
    2.0
    """
    op = "gaussian_nll_loss"
    _checked(op, ("input", input), ("target", target))
    var = _gaussian_var(op, input, var)
    check_reduction(reduction, op)
    with no_grad():
        lift = var.clamp(min=eps) - var
    var = var + lift
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction, op)


__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss", "multi_margin_loss",
           "multilabel_margin_loss", "poisson_nll_loss", "gaussian_nll_loss"]
