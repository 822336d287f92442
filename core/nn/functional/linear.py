"""The affine map of a fully connected layer."""
from __future__ import annotations

from ... import kernel_names as K
from ...engine import run_kernel
from ...ops.common import check_tensor
from ...node_names import labelled
from ...amp import lower_precision_op


@lower_precision_op
def linear(input, weight, bias=None):
    """x @ weight.T + bias, with weight [out_features, in_features] (or [in_features]).

    >>> import webgrad as wg
    >>> linear(wg.ones(2, 3), wg.ones(4, 3), wg.zeros(4)).shape
    webgrad.Size([2, 4])
    """
    check_tensor("linear", input)
    check_tensor("linear", weight, "weight")
    if weight.ndim not in (1, 2) or input.ndim < 1 or input._data.shape[-1] != weight._data.shape[-1]:
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


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = input1[...] @ weight[o] @ input2[...] + bias[o]`` with weight [out, in1, in2]
    (``nn.Bilinear``'s function).

    >>> import webgrad as wg
    >>> bilinear(wg.ones(5, 3), wg.ones(5, 4), wg.ones(2, 3, 4)).shape
    webgrad.Size([5, 2])
    """
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        check_tensor("bilinear", t, name)
    if weight.ndim != 3 or input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2] or \
            input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear: expected input1 [..., in1], input2 [..., in2] with the same leading dims and "
                           f"weight [out, in1, in2], got {tuple(input1.shape)}, {tuple(input2.shape)} and "
                           f"{tuple(weight.shape)}")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise RuntimeError(f"bilinear: bias must have shape ({weight.shape[0]},), got {tuple(bias.shape)}")
    o, i, j = weight.shape
    w = weight.permute(1, 0, 2).reshape(i, o * j)                    # [in1, out*in2]
    left = (input1 @ w).reshape(*input1.shape[:-1], o, j)            # [..., out, in2]
    y = (left * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias


__all__ = ["linear", "bilinear"]
