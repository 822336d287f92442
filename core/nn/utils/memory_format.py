"""PyTorch's ``convert_conv2d_weight_memory_format``/``convert_conv3d_weight_memory_format``:
accepted and without effect, since webgrad's tensors are always row-major and no convolution's
result depends on its weight's memory format."""
from __future__ import annotations


def _convert(op, module, memory_format):
    from ...layouts import memory_format as format_type
    if not isinstance(memory_format, format_type):
        raise TypeError(f"{op}: memory_format must be a webgrad.memory_format, got {type(memory_format).__name__}")
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Returns ``module`` unchanged: webgrad's weights are row-major whatever the format asked
    (PyTorch's result values do not depend on it).

    >>> import webgrad as wg
    >>> m = wg.nn.Conv2d(1, 1, 1)
    >>> convert_conv2d_weight_memory_format(m, wg.channels_last) is m
    True
    """
    return _convert("convert_conv2d_weight_memory_format", module, memory_format)


def convert_conv3d_weight_memory_format(module, memory_format):
    """Returns ``module`` unchanged, as ``convert_conv2d_weight_memory_format``.

    >>> import webgrad as wg
    >>> m = wg.nn.Conv3d(1, 1, 1)
    >>> convert_conv3d_weight_memory_format(m, wg.channels_last_3d) is m
    True
    """
    return _convert("convert_conv3d_weight_memory_format", module, memory_format)


__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]
