"""Lookups of integer indices: one-hot encoding and embeddings."""
from __future__ import annotations

from ...autograd import custom_grad
from ...dtypes import int64
from ...engine import no_grad
from ...ops.binary import where
from ...ops.common import check_tensor
from ...ops.creation import arange, ones, zeros


def _check_index(op, idx):
    check_tensor(op, idx)
    if idx.dtype.kind != "i":
        raise TypeError(f"{op}: indices must be an integer (long) tensor, got {idx.dtype.name}")


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


__all__ = ["one_hot", "embedding"]
