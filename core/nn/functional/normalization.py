"""Layer normalisation (one fused kernel, ``LayerNorm``, with a fused backward) and batch
normalisation (composed from reductions and arithmetic)."""
from __future__ import annotations

import functools
import math

from ... import kernel_names as K
from ...engine import no_grad, run_kernel
from ...dtypes import bfloat16, float16, float32
from ...ops.common import check_tensor
from ...tensor import Tensor


def half_input_float_params(fn):
    """Decorate a normalisation: a float16/bfloat16 input with float32 parameters (weights, running
    statistics) is normalised in float32 and the result rounded to the input's dtype, as PyTorch's CPU
    mixed-dtype kernels (a model's float32 LayerNorm under ``autocast``).

    >>> import webgrad as wg
    >>> layer_norm(wg.ones(2, 4, dtype=wg.bfloat16), (4,), wg.ones(4), wg.zeros(4)).dtype
    webgrad.bfloat16
    """
    @functools.wraps(fn)
    def op(*args, **kwargs):   # (any arguments: fn's own signature refuses what it does not take)
        input = args[0] if args else kwargs.get("input")
        if isinstance(input, Tensor) and input._dtype in (float16, bfloat16):
            params = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor) and a is not input]
            if params and all(p._dtype is float32 for p in params):
                cast = [input.float() if a is input else a for a in args]
                return fn(*cast, **{k: input.float() if v is input else v for k, v in kwargs.items()}).to(input._dtype)
        return fn(*args, **kwargs)
    return op


def _normalize(x, dims, eps):
    mean = x.mean(dims, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(dims, keepdim=True)
    return centred * (var + eps).rsqrt(), mean, var


def _check_channel_params(op, input, error, **params):
    """Each given per-channel tensor has shape (C,) for ``input`` [N, C, ...], else ``error`` naming it."""
    c = input.shape[1]
    for name, p in params.items():
        if p is not None and tuple(p.shape) != (c,):
            raise error(f"{op}: {name} must have shape ({c},) for input {tuple(input.shape)}, got {tuple(p.shape)}")


@half_input_float_params
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing dims ``normalized_shape`` (biased variance, ``eps`` added to it
    under the square root, as PyTorch), then scale by ``weight`` and shift by ``bias``.

    >>> import webgrad as wg
    >>> layer_norm(wg.tensor([[1.0, 3.0]]), (2,)).round(decimals=3).tolist()
    [[-1.0, 1.0]]
    """
    check_tensor("layer_norm", input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.ndim < k or input._data.shape[input.ndim - k:] != shape:
        raise ValueError(f"layer_norm: normalized_shape {shape} does not match the trailing dims of the input "
                         f"of shape {tuple(input.shape)}")
    if not input.dtype.is_floating:
        raise NotImplementedError(f"layer_norm: input must be a floating tensor, got {input.dtype.name}")
    params = []
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        check_tensor("layer_norm", p, name)
        if p._data.shape != shape:
            raise ValueError(f"layer_norm: {name} must have shape {shape}, got {tuple(p.shape)}")
        if p.dtype is not input.dtype:
            raise RuntimeError(f"layer_norm: {name} has dtype {p.dtype.name} but the input has {input.dtype.name}; "
                               f"they must match")
        params.append(p)
    y, _mean, _rstd = run_kernel(K.LAYER_NORM, input, *params, ndim=k, eps=float(eps),
                                 has_weight=weight is not None, has_bias=bias is not None)
    return y


@half_input_float_params
def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalise [N, C, ...] over groups of ``C / num_groups`` channels and all positions (the fused
    layer-norm kernel on [N, num_groups, -1]), then scale and shift per channel (``nn.GroupNorm``'s
    function).

    >>> import webgrad as wg
    >>> group_norm(wg.tensor([[[1.0], [3.0]]]), 1).round(decimals=3).flatten().tolist()
    [-1.0, 1.0]
    """
    check_tensor("group_norm", input)
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: Expected at least 2 dimensions for input tensor but received {input.ndim}")
    if num_groups <= 0 or input.shape[1] % num_groups:
        raise RuntimeError(f"group_norm: Expected number of channels in input to be divisible by num_groups, but got "
                           f"input of shape {list(input.shape)} and num_groups={num_groups}")
    _check_channel_params("group_norm", input, RuntimeError, weight=weight, bias=bias)
    grouped = input.reshape(input.shape[0], num_groups, -1)
    y = layer_norm(grouped, (grouped.shape[-1],), eps=eps).reshape(input.shape)
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    return y if bias is None else y + bias.reshape(shape)


@half_input_float_params
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise [N, C, ...] per channel C: with batch statistics when ``training`` (then the running
    statistics are updated in place, the variance unbiased, as in PyTorch), else with the running ones.

    >>> import webgrad as wg
    >>> rm, rv = wg.zeros(1), wg.ones(1)
    >>> batch_norm(wg.tensor([[1.0], [3.0]]), rm, rv, training=True).round(decimals=3).tolist()
    [[-1.0], [1.0]]
    >>> round(rm.item(), 3), round(rv.item(), 3)
    (0.2, 1.1)
    """
    check_tensor("batch_norm", input)
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected an input of shape [N, C, ...], got {tuple(input.shape)}")
    _check_channel_params("batch_norm", input, ValueError, running_mean=running_mean, running_var=running_var,
                          weight=weight, bias=bias)
    return _by_channel_stats("batch_norm", input, (0,) + tuple(range(2, input.ndim)), training, running_mean,
                             running_var, weight, bias, momentum, eps, "value per channel")


def _by_channel_stats(op, input, dims, use_input_stats, running_mean, running_var, weight, bias, momentum, eps,
                      unit):
    """Normalise ``input`` [N, C, ...] over ``dims`` with its own statistics (updating the given running
    ones with their mean over what ``dims`` leaves besides C, the variance unbiased) or with the running
    ones; then scale and shift per channel. Batch norm's dims hold N, instance norm's do not."""
    c = input.shape[1]
    bshape = (1, c) + (1,) * (input.ndim - 2)
    if use_input_stats:
        count = math.prod(input.shape[d] for d in dims)
        if count <= 1:
            raise ValueError(f"{op}: expected more than 1 {unit} when training, got input of shape "
                             f"{tuple(input.shape)}")
        y, mean, var = _normalize(input, dims, eps)
        if 0 not in dims:                     # per-instance statistics: their mean over the batch
            mean, var = mean.mean(0), var.mean(0)
        _update_running(running_mean, mean, momentum)
        _update_running(running_var, var * (count / (count - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(f"{op}: running_mean and running_var are needed without the input's statistics")
        y = (input - running_mean.reshape(bshape)) * (running_var.reshape(bshape) + eps).rsqrt()
    y = y if weight is None else y * weight.reshape(bshape)
    return y if bias is None else y + bias.reshape(bshape)


def _update_running(stat, batch_value, momentum):
    if stat is not None:
        with no_grad():
            new = stat * (1.0 - momentum) + batch_value.detach().reshape(stat.shape) * momentum
            stat._assign(new, "batch_norm")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalise [N, C, ...] over its spatial dims, per sample and channel (``use_input_stats``), or with
    the running per-channel statistics; given running statistics are updated in place with the
    batch-averaged instance mean and unbiased variance, as PyTorch.

    >>> import webgrad as wg
    >>> instance_norm(wg.tensor([[[1.0, 3.0]]])).round(decimals=3).tolist()
    [[[-1.0, 1.0]]]
    """
    check_tensor("instance_norm", input)
    if input.ndim < 3:
        raise ValueError(f"instance_norm: expected an input of shape [N, C, ...] with a spatial dim, got "
                         f"{tuple(input.shape)}")
    _check_channel_params("instance_norm", input, RuntimeError, running_mean=running_mean, running_var=running_var,
                          weight=weight, bias=bias)
    return _by_channel_stats("instance_norm", input, tuple(range(2, input.ndim)), use_input_stats, running_mean,
                             running_var, weight, bias, momentum, eps, "spatial element")


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divide each channel by (k + alpha * mean of the squares over ``size`` neighbouring channels)^beta
    (the window zero-padded at the ends, as PyTorch's).

    >>> import webgrad as wg
    >>> local_response_norm(wg.ones(1, 2, 1), 2, alpha=1.0, k=0.0, beta=1.0).tolist()
    [[[2.0], [1.0]]]
    """
    import webgrad as wg
    from .pooling import avg_pool2d
    check_tensor("local_response_norm", input)
    if input.ndim < 3:
        raise ValueError(f"local_response_norm: expected a 3-D or higher input, got shape {tuple(input.shape)}")
    if input.numel() == 0:
        return input
    n, c = input.shape[:2]
    squares = (input * input).reshape(n, 1, c, -1)
    squares = wg.pad(squares, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(squares, (size, 1), stride=1).reshape(input.shape)
    return input / (div * alpha + k) ** beta


__all__ = ["layer_norm", "group_norm", "batch_norm", "instance_norm", "local_response_norm"]
