"""The affine map of a fully connected layer."""
from __future__ import annotations

from ... import kernel_names as K
from ...engine import run_kernel
from ...ops.common import check_tensor
from ...node_names import labelled


def linear(input, weight, bias=None):
    """x @ weight.T + bias, with weight [out_features, in_features] (or [in_features]).

    >>> import webgrad as wg
    >>> linear(wg.ones(2, 3), wg.ones(4, 3), wg.zeros(4)).shape
    (2, 4)
    """
    check_tensor("linear", input)
    check_tensor("linear", weight, "weight")
    if weight.ndim not in (1, 2) or input.ndim < 1 or input.shape[-1] != weight.shape[-1]:
        raise ValueError(f"linear: input of shape {tuple(input.shape)} does not match weight of shape "
                         f"{tuple(weight.shape)} (expected input[..., {weight.shape[-1]}] and weight "
                         f"[out_features, in_features])")
    if weight.ndim == 2 and input.ndim >= 2 and input.dtype is weight.dtype and input.dtype.is_floating:
        # weight.T folded into the kernel's flag: no Transpose forward, none in backward
        y = run_kernel(K.MATMUL, input, weight, transpose_a=False, transpose_b=True)
    else:
        y = input @ (weight.transpose(0, 1) if weight.ndim == 2 else weight)
    if bias is not None:
        y = y + bias
    return labelled(y, _LINEAR_NAMES[input.ndim == 2, bias is not None]) if weight.ndim == 2 else y


# PyTorch's node name for linear by (2-D input, with bias)
_LINEAR_NAMES = {(True, True): "AddmmBackward0", (True, False): "MmBackward0", (False, True): "ViewBackward0",
                 (False, False): "UnsafeViewBackward0"}


__all__ = ["linear"]
