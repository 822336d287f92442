"""Lookups of integer indices: one-hot encoding and embeddings."""
from __future__ import annotations

from ...autograd import custom_grad
from ...dtypes import int64, is_index
from ...engine import no_grad
from ...ops.binary import where
from ...ops.common import check_tensor
from ...ops.creation import arange, ones, zeros


def _check_index(op, idx):
    check_tensor(op, idx)
    if not is_index(idx.dtype):
        raise TypeError(f"{op}: indices must be an integer (long or int) tensor, got {idx.dtype.name}")


def one_hot(tensor, num_classes=-1):
    """[...] int indices -> [..., num_classes] int64 with a 1 at each index (``num_classes=-1``:
    max + 1, which reads the data back). Indices outside [0, num_classes) give rows of zeros.

    >>> import webgrad as wg
    >>> one_hot(wg.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    _check_index("one_hot", tensor)
    if num_classes == -1:
        if tensor.numel() == 0:
            raise ValueError("one_hot: can not infer the total number of classes from an empty tensor")
        num_classes = int(tensor.max().item()) + 1
    if not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(f"one_hot: num_classes must be a positive int or -1, got {num_classes!r}")
    classes = arange(num_classes, backend=tensor._backend)
    return (tensor.unsqueeze(-1) == classes).to(int64)


def _row_counts(flat, num_embeddings, dtype):
    """How often each row is looked up: [num_embeddings] in ``dtype``."""
    counts = zeros(num_embeddings, dtype=dtype, backend=flat._backend)
    return counts.index_add(0, flat, ones(flat.shape[0], dtype=dtype, backend=flat._backend))


def _renorm_rows_(weight, flat, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: rows of ``weight`` looked up in ``flat`` whose ``norm_type``
    norm exceeds ``max_norm`` are scaled in place by max_norm / (norm + 1e-7), under no_grad and
    without reading anything back (the other rows are multiplied by exactly 1)."""
    with no_grad():
        looked_up = _row_counts(flat, weight.shape[0], weight.dtype) > 0
        norms = weight.norm(norm_type, dim=1)
        scale = where(looked_up.logical_and(norms > max_norm), max_norm / (norms + 1e-7), 1.0)
        weight._assign(weight * scale.unsqueeze(1).to(weight.dtype), "embedding (max_norm)")


def _grad_scaled(rows, scale):
    """``rows`` unchanged, with their gradient multiplied by ``scale`` [n, 1]."""
    return custom_grad(lambda r: (r, lambda dy: (dy * scale,)))(rows)


def _check_padding_idx(op, padding_idx, num_embeddings):
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(f"{op}: padding_idx {padding_idx} must be within num_embeddings ({num_embeddings})")
    return padding_idx % num_embeddings


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` [num_embeddings, dim] picked by the int indices ``input`` -> [..., dim].
    Row ``padding_idx`` gets no gradient; ``max_norm`` first renormalises (in place, under no_grad)
    the looked-up rows whose ``norm_type`` norm exceeds it; ``scale_grad_by_freq`` divides each row's
    gradient by how often the batch looks it up. ``sparse=True`` (a sparse gradient) is not supported.

    >>> import webgrad as wg
    >>> embedding(wg.tensor([[1, 0]]), wg.tensor([[0.0, 1.0], [2.0, 3.0]])).tolist()
    [[[2.0, 3.0], [0.0, 1.0]]]
    """
    _check_index("embedding", input)
    check_tensor("embedding", weight, "weight")
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D [num_embeddings, embedding_dim], got {tuple(weight.shape)}")
    if sparse:
        raise NotImplementedError("embedding: sparse=True (a sparse gradient for weight) is not supported; "
                                  "sparse=False gives the same values as a dense gradient")
    padding_idx = _check_padding_idx("embedding", padding_idx, weight.shape[0])
    flat = input.reshape(-1)
    if max_norm is not None:
        _renorm_rows_(weight, flat, max_norm, norm_type)
    rows = weight.index_select(0, flat)
    if padding_idx is not None or scale_grad_by_freq:
        scale = (flat != padding_idx).to(weight.dtype) if padding_idx is not None else None
        if scale_grad_by_freq:
            freq = _row_counts(flat, weight.shape[0], weight.dtype).index_select(0, flat).reciprocal()
            scale = freq if scale is None else scale * freq
        rows = _grad_scaled(rows, scale.unsqueeze(1))
    return rows.reshape(*input.shape, weight.shape[1])


def _bag_ids(op, input, offsets, include_last_offset):
    """The flat indices, each one's bag number and the bag count: rows of a 2-D ``input``, or the
    runs of a 1-D ``input`` that start at ``offsets`` (the last one ending ``input`` unless
    ``include_last_offset``). Indices past the last bag get the bag number ``bags`` (dropped later)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{op}: if input is 2D, then offsets has to be None, as input is treated as a "
                             f"mini-batch of fixed length sequences; got offsets of shape {tuple(offsets.shape)}")
        bags, length = input.shape
        return input.reshape(-1), arange(bags, backend=input._backend).repeat_interleave(length), bags
    if input.ndim != 1:
        raise ValueError(f"{op}: input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None or offsets.ndim != 1:
        raise ValueError(f"{op}: offsets has to be a 1D Tensor, got "
                         f"{None if offsets is None else tuple(offsets.shape)}")
    _check_index(op, offsets)
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    starts = zeros(input.shape[0] + 1, dtype=int64, backend=input._backend)
    starts = starts.index_add(0, offsets[1:], ones(offsets.shape[0] - 1, dtype=int64, backend=input._backend))
    return input, starts.cumsum(0)[:input.shape[0]], bags


def _bag_sum(values, bag, bags):
    """[bags, D] sums of ``values`` [M, D] grouped by ``bag`` [M]."""
    out = zeros(bags + 1, values.shape[1], dtype=values.dtype, backend=values._backend)
    return out.index_add(0, bag, values)[:bags]


def _bag_max(values, bag, keep, bags):
    """[bags, D] maxima of ``values`` grouped by ``bag``, over the ``keep`` entries (0 for an empty bag)."""
    import math
    members = (bag.unsqueeze(0) == arange(bags, backend=values._backend).unsqueeze(1)).logical_and(keep)  # [B, M]
    spread = where(members.unsqueeze(2), values.unsqueeze(0), -math.inf)
    return where(members.any(1, keepdim=True), spread.amax(1), 0.0)


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows: each row of a 2-D ``input`` is a bag, or
    ``offsets`` cuts a 1-D ``input`` into bags. ``per_sample_weights`` (mode 'sum') scales each row;
    ``padding_idx`` entries are left out (an empty bag gives zeros). -> [bags, embedding_dim].

    >>> import webgrad as wg
    >>> w = wg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> embedding_bag(wg.tensor([0, 1, 2]), w, wg.tensor([0, 2]), mode="sum").tolist()
    [[4.0, 6.0], [5.0, 6.0]]
    """
    op = "embedding_bag"
    _check_index(op, input)
    check_tensor(op, weight, "weight")
    if mode not in _BAG_MODES:
        raise ValueError(f"{op}: mode has to be one of sum, mean or max, got {mode!r}")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError(f"{op}: max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"{op}: per_sample_weights is only supported for mode='sum' (got mode={mode!r})")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"{op}: per_sample_weights of shape {tuple(per_sample_weights.shape)} must have the "
                             f"input's shape {tuple(input.shape)}")
    flat, bag, bags = _bag_ids(op, input, offsets, include_last_offset)
    padding_idx = _check_padding_idx(op, padding_idx, weight.shape[0])
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)   # [M, D]
    keep = (flat != padding_idx) if padding_idx is not None else ones(flat.shape[0], dtype=int64,
                                                                        backend=flat._backend) > 0
    if mode == "max":
        return _bag_max(rows, bag, keep, bags)
    scale = keep.to(weight.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights.reshape(-1)
    total = _bag_sum(rows * scale.unsqueeze(1), bag, bags)
    if mode == "sum":
        return total
    counts = _bag_sum(keep.to(weight.dtype).unsqueeze(1), bag, bags)
    return total / counts.clamp(min=1)


__all__ = ["one_hot", "embedding", "embedding_bag"]
