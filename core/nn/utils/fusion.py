"""Folding an eval-mode batch norm into the convolution or linear layer before it (PyTorch's
``torch.nn.utils.fusion``): ``bn(conv(x)) == fused(x)`` with one layer fewer."""
from __future__ import annotations

import copy

from ...ops.creation import ones_like, zeros_like
from ..parameter import Parameter


def _bn_state(op, layer, bn):
    if layer.training or bn.training:
        raise AssertionError(f"{op}: Fusion only for eval! (call .eval() on both modules)")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError(f"{op}: bn.running_mean and bn.running_var must not be None")
    return bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose: bool = False):
    """The convolution weight and bias that compute ``bn(conv(x))`` for a batch norm with running
    mean ``bn_rm``, variance ``bn_rv`` (``transpose``: the weight is a transposed convolution's,
    channels in dim 1). Returns two Parameters.

    >>> import webgrad as wg
    >>> w, b = fuse_conv_bn_weights(wg.ones(2, 1, 1, 1), None, wg.zeros(2), wg.full((2,), 3.0), 1.0,
    ...                             None, wg.ones(2))
    >>> w.flatten().tolist(), b.tolist()
    ([0.5, 0.5], [1.0, 1.0])
    """
    weight_dtype = conv_w.dtype
    bias_dtype = weight_dtype if conv_b is None else conv_b.dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(weight_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of the eval-mode ``conv`` whose output is ``bn(conv(x))`` for the eval-mode ``bn``.

    >>> import webgrad as wg
    >>> conv, bn = wg.nn.Conv2d(1, 2, 3).eval(), wg.nn.BatchNorm2d(2).eval()
    >>> x = wg.randn(1, 1, 5, 5)
    >>> bool(wg.allclose(fuse_conv_bn_eval(conv, bn)(x), bn(conv(x)), atol=1e-6))
    True
    """
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, *_bn_state("fuse_conv_bn_eval", conv, bn),
                                                    transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The linear weight and bias that compute ``bn(linear(x))``. Returns two Parameters.

    >>> import webgrad as wg
    >>> w, b = fuse_linear_bn_weights(wg.ones(2, 3), None, wg.zeros(2), wg.full((2,), 3.0), 1.0,
    ...                               wg.ones(2), wg.ones(2))
    >>> w.tolist(), b.tolist()
    ([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], [1.0, 1.0])
    """
    weight_dtype = linear_w.dtype
    bias_dtype = weight_dtype if linear_b is None else linear_b.dtype
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * scale.unsqueeze(-1).to(weight_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of the eval-mode ``linear`` whose output is ``bn(linear(x))`` for the eval-mode ``bn``
    (``bn.num_features`` must equal ``linear.out_features`` or be 1).

    >>> import webgrad as wg
    >>> lin, bn = wg.nn.Linear(3, 2).eval(), wg.nn.BatchNorm1d(2).eval()
    >>> x = wg.randn(4, 3)
    >>> bool(wg.allclose(fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)), atol=1e-6))
    True
    """
    state = _bn_state("fuse_linear_bn_eval", linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(f"To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, *state)
    return fused


__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]
