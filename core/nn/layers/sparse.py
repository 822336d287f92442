"""Embedding: a lookup table of learned vectors."""
from __future__ import annotations

from .. import functional as F
from .. import init
from ...engine import no_grad
from ...ops.binary import where
from ...ops.creation import arange, empty
from ..module import Module
from ..parameter import Parameter


def _table_options(owner, num_embeddings, padding_idx, sparse):
    """``padding_idx`` made non-negative (an AssertionError outside the table, as PyTorch); ``sparse``
    refused (sparse gradients are not supported: sparse=False gives the same values densely)."""
    if sparse:
        raise NotImplementedError(f"{owner}: sparse=True (a sparse gradient for weight) is not supported; "
                                  f"sparse=False gives the same values as a dense gradient")
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError(f"{owner}: Padding_idx must be within num_embeddings ({num_embeddings}), got "
                             f"{padding_idx}")
    return padding_idx % num_embeddings


class Embedding(Module):
    """Rows of a learned [num_embeddings, embedding_dim] table, N(0, 1) init; row ``padding_idx``
    starts at zero and gets no gradient. ``max_norm``/``norm_type`` renormalise the looked-up rows
    in place; ``scale_grad_by_freq`` divides gradients by the rows' frequency in the batch;
    ``_weight`` gives the table, ``_freeze`` keeps it from training. ``sparse=True`` (sparse
    gradients) raises NotImplementedError.

    >>> import webgrad as wg
    >>> Embedding(10, 3, padding_idx=0)(wg.tensor([[1, 2], [3, 0]])).shape
    webgrad.Size([2, 2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        padding_idx = _table_options("Embedding", num_embeddings, padding_idx, sparse)
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse = max_norm, norm_type, \
            scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype, device=device),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(f"Embedding: Shape of weight {tuple(_weight.shape)} does not match "
                                     f"num_embeddings and embedding_dim ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                rows = arange(self.num_embeddings, backend=self.weight._backend).unsqueeze(1)
                self.weight._assign(where(rows == self.padding_idx, 0.0, self.weight), "Embedding")

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding holding ``embeddings`` [rows, dim] (frozen unless ``freeze=False``; the
        ``padding_idx`` row is kept as given, as in PyTorch).

        >>> import webgrad as wg
        >>> e = Embedding.from_pretrained(wg.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> e(wg.tensor([1])).tolist(), e.weight.requires_grad
        ([[3.0, 4.0]], False)
        """
        if embeddings.ndim != 2:
            raise AssertionError(f"Embedding.from_pretrained: Embeddings parameter is expected to be 2-dimensional, "
                                 f"got shape {tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        extras = (("padding_idx", self.padding_idx, None), ("max_norm", self.max_norm, None),
                  ("norm_type", self.norm_type, 2), ("scale_grad_by_freq", self.scale_grad_by_freq, False))
        return s + "".join(f", {k}={v}" for k, v, default in extras if v != default)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of rows of a learned [num_embeddings, embedding_dim] table
    (N(0, 1) init, row ``padding_idx`` zero); ``forward(input, offsets=None, per_sample_weights=None)``
    as ``F.embedding_bag``. ``sparse=True`` raises NotImplementedError.

    >>> import webgrad as wg
    >>> EmbeddingBag(10, 3)(wg.tensor([[1, 2], [3, 0]])).shape
    webgrad.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None, include_last_offset=False,
                 padding_idx=None, device=None, dtype=None):
        super().__init__()
        padding_idx = _table_options("EmbeddingBag", num_embeddings, padding_idx, sparse)
        self.num_embeddings, self.embedding_dim, self.max_norm = num_embeddings, embedding_dim, max_norm
        self.norm_type, self.scale_grad_by_freq, self.mode, self.sparse = norm_type, scale_grad_by_freq, mode, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype, device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(f"EmbeddingBag: shape of weight {tuple(_weight.shape)} does not match "
                                     f"num_embeddings and embedding_dim ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight)

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag holding ``embeddings`` [rows, dim] (frozen unless ``freeze=False``).

        >>> import webgrad as wg
        >>> EmbeddingBag.from_pretrained(wg.tensor([[1.0], [3.0]]))(wg.tensor([[0, 1]])).tolist()
        [[2.0]]
        """
        if embeddings.ndim != 2:
            raise AssertionError(f"EmbeddingBag.from_pretrained: embeddings parameter is expected to be "
                                 f"2-dimensional, got shape {tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings, include_last_offset,
                  padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        extras = (("max_norm", self.max_norm, None), ("norm_type", self.norm_type, 2),
                  ("scale_grad_by_freq", self.scale_grad_by_freq, False), ("mode", self.mode, None),
                  ("padding_idx", self.padding_idx, None))
        return s + "".join(f", {k}={v!r}" if k == "mode" else f", {k}={v}" for k, v, d in extras if v != d)


__all__ = ["Embedding", "EmbeddingBag"]
