"""Losses with PyTorch's semantics and ``reduction`` ('mean' | 'sum' | 'none'), composed from ops."""
from __future__ import annotations

from ... import kernel_names as K
from ...amp import full_precision
from ...amp import state as autocast
from ...engine import no_grad, record_function, run_kernel
from ...ops.common import check_tensor, real_only
from ._utils import check_reduction, legacy_reduction, reduce_loss
from .activation import log_softmax
from ...node_names import labelled


def _pair(op, input, target):
    """The checked operands of a loss (in float32 under autocast, as PyTorch's losses run)."""
    check_tensor(op, input)
    check_tensor(op, target, "target")
    return full_precision(input, target) if autocast.dtypes else (input, target)


def _same_shape(op, input, target):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{op}: target of shape {tuple(target.shape)} must have the same shape as the input "
                         f"{tuple(input.shape)}")


def _weighted(op, loss, weight, reduction, mean_by_weight=True):
    """``loss * weight`` reduced as PyTorch's weighted regression losses: 'mean' divides by the summed
    weights (``mean_by_weight``, mse and l1) or by the element count (huber)."""
    if weight is None:
        return reduce_loss(loss, reduction, op)
    check_tensor(op, weight, "weight")
    if tuple(weight.shape) != tuple(loss.shape):
        raise ValueError(f"{op}: weights and input must have the same size, got {tuple(weight.shape)} and "
                         f"{tuple(loss.shape)}")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return reduce_loss(loss, reduction, op)


@real_only()
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (each element's times ``weight`` when given; 'mean' then divides by the
    summed weights). ``size_average`` and ``reduce`` are PyTorch's deprecated forms of ``reduction``.

    >>> import webgrad as wg
    >>> mse_loss(wg.tensor([1.0, 2.0]), wg.tensor([1.0, 4.0])).item()
    2.0
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair("mse_loss", input, target)
    d = input - target
    return labelled(_weighted("mse_loss", d * d, weight, reduction), "MseLossBackward0")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error (weighted as ``mse_loss``).

    >>> import webgrad as wg
    >>> l1_loss(wg.tensor([1.0, 2.0]), wg.tensor([1.0, 4.0])).item()
    1.0
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair("l1_loss", input, target)
    return _weighted("l1_loss", (input - target).abs(), weight, reduction)


def _piecewise(op, input, target, cut, small, large, reduction, weight=None):
    import webgrad as wg
    input, target = _pair(op, input, target)
    check_reduction(reduction, op)
    d = (input - target).abs()
    return _weighted(op, wg.where(d < cut, small(d), large(d)), weight, reduction, mean_by_weight=False)


@real_only()
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - beta/2 (the L1 loss when beta is 0).

    >>> import webgrad as wg
    >>> smooth_l1_loss(wg.tensor([0.5, 3.0]), wg.zeros(2), reduction="none").tolist()
    [0.125, 2.5]
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    return labelled(_piecewise("smooth_l1_loss", input, target, beta, lambda d: 0.5 * d * d / beta,
                               lambda d: d - 0.5 * beta, reduction), "SmoothL1LossBackward0")


@real_only()
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - delta/2); times ``weight`` when given ('mean' then
    divides by the element count, as PyTorch's).

    >>> import webgrad as wg
    >>> huber_loss(wg.tensor([0.5, 3.0]), wg.zeros(2), reduction="none", delta=2.0).tolist()
    [0.125, 4.0]
    """
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    return _piecewise("huber_loss", input, target, delta, lambda d: 0.5 * d * d,
                      lambda d: delta * (d - 0.5 * delta), reduction, weight)


def _class_dim(op, input):
    if input.ndim < 1:
        raise ValueError(f"{op}: input must have a class dimension, got a 0-d tensor")
    return 0 if input.ndim == 1 else 1


def _check_class_target(op, input, target, cdim):
    want = tuple(s for i, s in enumerate(input.shape) if i != cdim)
    if target.dtype.kind != "i" or tuple(target.shape) != want:
        raise ValueError(f"{op}: class-index target must be int64 of shape {want} for input of shape "
                         f"{tuple(input.shape)}; got {target.dtype.name} {tuple(target.shape)}")


def _picked(op, logp, target, weight, ignore_index, cdim):
    """Per element: (-weight[t] * logp[t], weight[t]), both 0 where t == ignore_index."""
    import webgrad as wg
    keep = target != ignore_index
    safe = wg.where(keep, target, 0)
    nll = -logp.gather(cdim, safe.unsqueeze(cdim)).squeeze(cdim)
    w = keep.to(logp.dtype)
    if weight is not None:
        if tuple(weight.shape) != (logp.shape[cdim],):
            raise ValueError(f"{op}: weight must have shape ({logp.shape[cdim]},), got {tuple(weight.shape)}")
        w = w * weight.index_select(0, safe.reshape(-1)).reshape(target.shape)
    return nll * w, w


def _mean_by(loss, w, reduction):
    return loss.sum() / w.sum() if reduction == "mean" else reduce_loss(loss, reduction, "nll_loss")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood of log-probabilities ``input`` [N, C, ...] (or [C]) at class indices
    ``target`` [N, ...]; 'mean' divides by the summed weights of the non-ignored targets.

    >>> import webgrad as wg
    >>> nll_loss(wg.tensor([[-1.0, -2.0]]), wg.tensor([1])).item()
    2.0
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair("nll_loss", input, target)
    check_reduction(reduction, "nll_loss")
    cdim = _class_dim("nll_loss", input)
    _check_class_target("nll_loss", input, target, cdim)
    loss, w = _picked("nll_loss", input, target, weight, ignore_index, cdim)
    return labelled(_mean_by(loss, w, reduction), "NllLossBackward0")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy of logits ``input`` [N, C, ...] (or [C]) against class indices [N, ...] (int64)
    or class probabilities (same shape as the input), with optional class ``weight`` and
    ``label_smoothing`` as in PyTorch.

    >>> import webgrad as wg
    >>> round(cross_entropy(wg.tensor([[0.0, 0.0]]), wg.tensor([1])).item(), 4)
    0.6931
    """
    op = "cross_entropy"
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair(op, input, target)
    check_reduction(reduction, op)
    if weight is None and not label_smoothing:
        shape = input.shape
        if len(shape) == 2 and target.shape == shape[:1] and target.dtype.kind == "i" and input.dtype.kind == "f":
            # logits [N, C] at class indices [N], the common case: the fused kernel, reduction and all
            return run_kernel(K.SOFTMAX_CROSS_ENTROPY, input, target, ignore_index=ignore_index,
                              reduction=reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    cdim = _class_dim(op, input)
    n_classes = input.shape[cdim]
    logp = log_softmax(input, cdim)
    wshape = (n_classes,) + (1,) * (input.ndim - 1 - cdim)
    indices_shape = tuple(s for i, s in enumerate(input.shape) if i != cdim)
    is_probs = target.dtype.is_floating and tuple(target.shape) == tuple(input.shape)
    if not is_probs and (target.dtype.kind != "i" or tuple(target.shape) != indices_shape):
        raise ValueError(f"{op}: target must be class indices (int64 of shape {indices_shape}) or class "
                         f"probabilities (floating, of the input's shape {tuple(input.shape)}); got "
                         f"{target.dtype.name} {tuple(target.shape)}")
    if is_probs:
        if label_smoothing:
            target = target * (1.0 - label_smoothing) + label_smoothing / n_classes
        prod = logp * target if weight is None else logp * target * weight.reshape(wshape)
        loss = -prod.sum(cdim)
        return loss.sum() / (input.numel() // n_classes) if reduction == "mean" else reduce_loss(loss, reduction, op)
    loss, w = _picked(op, logp, target, weight, ignore_index, cdim)
    if label_smoothing:
        import webgrad as wg
        lw = logp if weight is None else logp * weight.reshape(wshape)
        smooth = wg.where(target != ignore_index, -lw.sum(cdim), 0.0)
        loss = loss * (1.0 - label_smoothing) + smooth * (label_smoothing / n_classes)
    return _mean_by(loss, w, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)) for probabilities x, each log clamped at -100 as in PyTorch.

    >>> import webgrad as wg
    >>> round(binary_cross_entropy(wg.tensor([0.5]), wg.tensor([1.0])).item(), 4)
    0.6931
    """
    op = "binary_cross_entropy"
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair(op, input, target)
    check_reduction(reduction, op)
    _same_shape(op, input, target)
    with no_grad():
        loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    record_function("BinaryCrossEntropy", _bce_gradient, [input, target], (loss,), saved=(input, target))
    return labelled(reduce_loss(loss if weight is None else loss * weight, reduction, op), "BinaryCrossEntropyBackward0")


def _bce_gradient(dy, saved, attrs):
    """PyTorch's: (x - t) / max((1 - x) x, 1e-12) for the input (finite at 0 and 1, where the loss's logs
    are clamped), log(1 - x) - log(x) for the target."""
    x, t = saved
    dx = dy * (x - t) / ((1 - x) * x).clamp(min=1e-12)
    return dx, dy * ((1 - x).log() - x.log())


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Sigmoid + binary cross entropy in one stable expression:
    (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x).

    >>> import webgrad as wg
    >>> round(binary_cross_entropy_with_logits(wg.tensor([0.0]), wg.tensor([1.0])).item(), 4)
    0.6931
    """
    import webgrad as wg
    op = "binary_cross_entropy_with_logits"
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair(op, input, target)
    check_reduction(reduction, op)
    _same_shape(op, input, target)
    log_weight = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    loss = (1 - target) * input + log_weight * wg.softplus(-input)
    return labelled(reduce_loss(loss if weight is None else loss * weight, reduction, op),
                    "BinaryCrossEntropyWithLogitsBackward0")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence target * (log target - input) with ``input`` given as log-probabilities
    (``target`` too when ``log_target``); 0 where target is 0. ``reduction`` may also be 'batchmean'.

    >>> import webgrad as wg
    >>> kl_div(wg.tensor([0.0]), wg.tensor([1.0])).item()
    0.0
    """
    import webgrad as wg
    op = "kl_div"
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair(op, input, target)
    check_reduction(reduction, op, ("batchmean",))
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        loss = target * wg.where(positive, target, 1.0).log() - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return reduce_loss(loss, reduction, op)


__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"]
