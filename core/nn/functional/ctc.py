"""Connectionist temporal classification loss (PyTorch's ``ctc_loss``), composed from ops: the
forward (alpha) recursion in log space over the time steps, on [N, 2S+1] extended labels (blanks
between and around the targets), so every backend has it and autograd gives its gradient.

Impossible alignments are carried as a large finite negative number rather than -inf (so no NaN
reaches the gradient) and read back as an infinite loss, as PyTorch's (``zero_infinity``: 0 and a
zero gradient). PyTorch's gradient with respect to ``log_probs`` is that of the loss through an
implicit log-softmax (it adds ``exp(log_probs)``); webgrad adds the same term, so gradients match
PyTorch's whether or not ``log_probs`` come from ``log_softmax`` (where the term cancels)."""
from __future__ import annotations

from ...dtype_info import finfo
from ...dtypes import int64
from ...ops.binary import where
from ...ops.common import check_tensor
from ...ops.movement import stack
from ...tensor import Tensor, tensor

_REDUCTIONS = ("none", "mean", "sum")


def _as_list(op, name, value, n):
    values = value.tolist() if isinstance(value, Tensor) else value
    values = [values] if isinstance(values, int) else list(values)
    if len(values) != n:
        raise RuntimeError(f"{op}: {name} must have one entry per batch element ({n}), got {len(values)}")
    return [int(v) for v in values]


def _target_rows(op, targets, target_lengths, n):
    """Each batch element's target labels, from [N, S] (padded) or 1-D concatenated targets."""
    values = targets.tolist()
    if targets.ndim == 2:
        if any(length > targets.shape[1] for length in target_lengths):
            raise RuntimeError(f"{op}: a target length exceeds the targets' width {targets.shape[1]}")
        return [row[:length] for row, length in zip(values, target_lengths)]
    if sum(target_lengths) > len(values):
        raise RuntimeError(f"{op}: target_lengths sum to {sum(target_lengths)} but targets hold {len(values)} labels")
    starts = [sum(target_lengths[:i]) for i in range(n)]
    return [values[s:s + length] for s, length in zip(starts, target_lengths)]


def _extended(rows, blank, width):
    """[N, 2S+1] labels with blanks around and between the targets (padded with blank), and where
    the skip transition from s-2 is allowed (a label that differs from the one two back)."""
    ext = [[blank] * width for _ in rows]
    for e, row in zip(ext, rows):
        e[1:2 * len(row):2] = row
    skip = [[s >= 2 and e[s] != blank and e[s] != e[s - 2] for s in range(width)] for e in ext]
    return ext, skip


def _alphas(lp, skip, input_lengths, neg):
    """The log forward variables after each element's last time step, [N, L]."""
    steps, n, width = lp.shape
    like = dict(dtype=lp.dtype, device=lp.device)
    first = tensor([s < 2 for s in range(width)], device=lp.device)
    alpha = where(first, lp[0], tensor(neg, **like))
    lengths = tensor(input_lengths, dtype=int64, device=lp.device).unsqueeze(1)
    pad1, pad2 = tensor([[neg]], **like).expand(n, 1), tensor([[neg, neg]], **like).expand(n, 2)
    for t in range(1, steps):
        from_left = _shift(alpha, pad1)
        from_skip = where(skip, _shift(alpha, pad2), tensor(neg, **like))
        new = stack([alpha, from_left, from_skip]).logsumexp(0) + lp[t]
        alpha = where(lengths > t, new, alpha)
    return alpha


def _shift(alpha, pad):
    from ...ops.movement import cat
    return cat([pad, alpha[:, :alpha.shape[1] - pad.shape[1]]], dim=1)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The CTC loss of ``log_probs`` [T, N, C] (or [T, C]) against ``targets`` ([N, S] padded, or
    the targets concatenated in 1-D), with per-element ``input_lengths`` and ``target_lengths``
    (tensors or sequences of ints). ``reduction='mean'`` divides each loss by its target length,
    then averages, as PyTorch.

    >>> import webgrad as wg
    >>> lp = wg.full((2, 1, 2), 0.5).log()
    >>> round(ctc_loss(lp, wg.tensor([[1]]), [2], [1], reduction="sum").item(), 4)
    0.2877
    """
    op = "ctc_loss"
    check_tensor(op, log_probs, "log_probs")
    check_tensor(op, targets, "targets")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: {reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    if log_probs.ndim not in (2, 3) or not log_probs.dtype.is_floating:
        raise RuntimeError(f"{op}: expected floating log_probs [T, N, C] or [T, C], got {log_probs.dtype} of shape "
                           f"{tuple(log_probs.shape)}")
    lp_all = log_probs.unsqueeze(1) if unbatched else log_probs
    targets = targets.unsqueeze(0) if unbatched and targets.ndim == 1 else targets
    steps, n, classes = lp_all.shape
    if not 0 <= blank < classes:
        raise RuntimeError(f"{op}: blank must be in label range [0, {classes}), got {blank}")
    input_lengths = _as_list(op, "input_lengths", input_lengths, n)
    target_lengths = _as_list(op, "target_lengths", target_lengths, n)
    if any(not 0 <= length <= steps for length in input_lengths):
        raise RuntimeError(f"{op}: Expected input_lengths to be in [0, {steps}] (the input's T), got {input_lengths}")
    rows = _target_rows(op, targets, target_lengths, n)
    width = 2 * max(target_lengths, default=0) + 1
    ext, skip = _extended(rows, blank, width)
    index = tensor(ext, dtype=int64, device=lp_all.device)
    lp = lp_all.gather(2, index.unsqueeze(0).expand(steps, n, width))
    neg = finfo(lp_all.dtype).min / 8
    alpha = _alphas(lp, tensor(skip, device=lp_all.device), input_lengths, neg)
    last = tensor([[2 * k] for k in target_lengths], dtype=int64, device=lp_all.device)
    before = tensor([[max(2 * k - 1, 0)] for k in target_lengths], dtype=int64, device=lp_all.device)
    ends = stack([alpha.gather(1, last), where(last > 0, alpha.gather(1, before),
                                               tensor(neg, dtype=alpha.dtype, device=alpha.device))])
    nll = -ends.logsumexp(0).squeeze(1)
    nll = nll + _softmax_term(lp_all, input_lengths)
    impossible = nll > -neg / 2
    if zero_infinity:
        nll = where(impossible, nll * 0, nll)
    else:
        nll = where(impossible, tensor(float("inf"), dtype=nll.dtype, device=nll.device), nll)
    if reduction == "none":
        return nll.squeeze(0) if unbatched else nll
    if reduction == "sum":
        return nll.sum()
    divisors = tensor([max(k, 1) for k in target_lengths], dtype=nll.dtype, device=nll.device)
    return (nll / divisors).mean()


def _softmax_term(lp_all, input_lengths):
    """Zero, with gradient ``exp(log_probs)`` over each element's time steps: PyTorch's CTC gradient
    assumes ``log_probs`` are normalized and includes this term."""
    steps = lp_all.shape[0]
    mask = tensor([[t < length for length in input_lengths] for t in range(steps)], device=lp_all.device)
    probs = where(mask.unsqueeze(-1), lp_all.exp(), lp_all.detach() * 0)
    return (probs - probs.detach()).sum((0, 2))


__all__ = ["ctc_loss"]
