"""Norm-based ops of ``torch.nn.functional``: ``normalize``, ``rms_norm``, ``cosine_similarity``
and ``pairwise_distance``, composed from reductions as PyTorch computes them."""
from __future__ import annotations

from ...dtype_info import finfo
from ...dtypes import float32
from ...engine import no_grad
from ...ops import binary, reduce, unary
from ...ops.common import check_tensor
from ...ops.opmath import HALF, opmath
from ...ops.grids import triu_indices
from ...shapes import broadcast_shapes
from .normalization import half_input_float_params


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``. ``out`` must be None (webgrad writes no out=).

    >>> import webgrad as wg
    >>> normalize(wg.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    check_tensor("normalize", input)
    if out is not None:
        raise TypeError("normalize: out= is not supported; assign the result instead")
    norm = reduce.norm(input, p, dim, keepdim=True)
    return binary.div(input, unary.clamp(norm, min=eps).expand_as(input))


@half_input_float_params
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input ** 2) + eps) * weight`` over the trailing ``normalized_shape`` dims
    (``eps`` defaults to the machine epsilon of the dtype it computes in, float32 for float16/bfloat16, as PyTorch's).

    >>> import webgrad as wg
    >>> rms_norm(wg.tensor([[3.0, 4.0]]), (2,)).tolist()
    [[0.8485281467437744, 1.1313709020614624]]
    """
    check_tensor("rms_norm", input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"rms_norm: normalized_shape {shape} does not match the trailing dims of the input "
                           f"{tuple(input.shape)}")
    eps = finfo(float32 if input.dtype in HALF else input.dtype).eps if eps is None else eps   # its opmath dtype's
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    return _normalized_by_rms(input, dims, eps, weight)


@opmath   # float16/bfloat16 in float32, rounded once, as PyTorch's
def _normalized_by_rms(x, dims, eps, weight):
    out = binary.mul(x, unary.rsqrt(binary.add(reduce.mean(binary.mul(x, x), dims, keepdim=True), eps)))
    return out if weight is None else binary.mul(out, weight)


def _clamped_norm(x, dim, eps):
    """``||x||`` along ``dim``, clamped below at ``eps`` where the gradient does not see the clamp
    (PyTorch clamps it in place under no_grad)."""
    norm = reduce.norm(x, 2, dim, keepdim=True)
    with no_grad():
        lift = binary.sub(unary.clamp(norm, min=eps), norm)
    return binary.add(norm, lift)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcasting), each norm
    clamped at ``eps``.

    >>> import webgrad as wg
    >>> cosine_similarity(wg.tensor([[1.0, 0.0]]), wg.tensor([[1.0, 1.0]])).tolist()
    [0.7071067690849304]
    """
    check_tensor("cosine_similarity", x1)
    check_tensor("cosine_similarity", x2, "x2")
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape), op="cosine_similarity")
    a, b = x1.broadcast_to(shape), x2.broadcast_to(shape)
    return reduce.sum(binary.mul(binary.div(a, _clamped_norm(a, dim, eps)), binary.div(b, _clamped_norm(b, dim, eps))),
                      dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim (broadcasting).

    >>> import webgrad as wg
    >>> round(pairwise_distance(wg.tensor([[0.0, 0.0]]), wg.tensor([[3.0, 4.0]])).item(), 4)
    5.0
    """
    check_tensor("pairwise_distance", x1)
    check_tensor("pairwise_distance", x2, "x2")
    last = max(x1.ndim, x2.ndim) - 1
    return reduce.norm(binary.add(binary.sub(x1, x2), eps), p, last if last >= 0 else None, keepdim=keepdim)


def pdist(input, p=2.0):
    """The ``p``-norm distances between the rows of ``input`` [N, M], for each pair i < j in
    row-major order -> [N * (N - 1) / 2] (the upper triangle of ``cdist(input, input)``).

    >>> import webgrad as wg
    >>> pdist(wg.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])).tolist()
    [5.0, 10.0, 5.0]
    """
    check_tensor("pdist", input)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating:
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype}")
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got {p}")
    rows, cols = triu_indices(input.shape[0], input.shape[0], 1, device=input.device)
    return reduce.norm(binary.sub(input.index_select(0, rows), input.index_select(0, cols)), p, 1)


__all__ = ["normalize", "rms_norm", "cosine_similarity", "pairwise_distance", "pdist"]
