"""Embedding: a lookup table of learned vectors."""
from __future__ import annotations

from .. import functional as F
from .. import init
from ...engine import no_grad
from ...ops.creation import empty
from ..module import Module
from ..parameter import Parameter


class Embedding(Module):
    """Rows of a learned [num_embeddings, embedding_dim] table, N(0, 1) init; row ``padding_idx``
    starts at zero and gets no gradient.

    >>> import webgrad as wg
    >>> Embedding(10, 3)(wg.tensor([[1, 2], [3, 4]])).shape
    (2, 2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, _weight=None, dtype=None,
                 device=None):
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} must be within num_embeddings "
                                 f"({num_embeddings})")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype, device=device))
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                import webgrad as wg
                keep = (wg.arange(self.num_embeddings, backend=self.weight._backend) != self.padding_idx)
                self.weight._assign(self.weight * keep.unsqueeze(-1).to(self.weight.dtype), "Embedding")

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx=None):
        """An Embedding holding ``embeddings`` (frozen unless ``freeze=False``)."""
        m = cls(embeddings.shape[0], embeddings.shape[1], padding_idx, _weight=embeddings.detach())
        m.weight.requires_grad_(not freeze)
        return m

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


__all__ = ["Embedding"]
