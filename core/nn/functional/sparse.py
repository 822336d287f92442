"""Lookups of integer indices: one-hot encoding and embeddings."""
from __future__ import annotations

from ...ops.common import check_tensor


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
    import webgrad as wg
    _check_index("one_hot", tensor)
    if num_classes == -1:
        if tensor.numel() == 0:
            raise ValueError("one_hot: can not infer the total number of classes from an empty tensor")
        num_classes = int(tensor.max().item()) + 1
    if not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(f"one_hot: num_classes must be a positive int or -1, got {num_classes!r}")
    classes = wg.arange(num_classes, backend=tensor._backend)
    return (tensor.unsqueeze(-1) == classes).to(wg.int64)


def embedding(input, weight, padding_idx=None):
    """Rows of ``weight`` [num_embeddings, dim] picked by the int indices ``input`` -> [..., dim].
    Row ``padding_idx`` gets no gradient.

    >>> import webgrad as wg
    >>> embedding(wg.tensor([[1, 0]]), wg.tensor([[0.0, 1.0], [2.0, 3.0]])).tolist()
    [[[2.0, 3.0], [0.0, 1.0]]]
    """
    import webgrad as wg
    _check_index("embedding", input)
    check_tensor("embedding", weight, "weight")
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D [num_embeddings, embedding_dim], got {tuple(weight.shape)}")
    if padding_idx is not None:
        if not -weight.shape[0] <= padding_idx < weight.shape[0]:
            raise ValueError(f"embedding: padding_idx {padding_idx} is out of range for {weight.shape[0]} "
                             f"embeddings")
        padding_idx %= weight.shape[0]
    flat = input.reshape(-1)
    rows = weight.index_select(0, flat)
    if padding_idx is not None:
        rows = wg.where((flat != padding_idx).unsqueeze(-1), rows, rows.detach())
    return rows.reshape(*input.shape, weight.shape[1])


__all__ = ["one_hot", "embedding"]
