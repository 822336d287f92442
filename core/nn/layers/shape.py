"""Shape layers: Flatten and Unflatten."""
from __future__ import annotations

from ..module import Module


class Flatten(Module):
    """Flatten dimensions ``start_dim`` to ``end_dim`` into one (by default all but the batch).

    >>> import webgrad as wg
    >>> Flatten()(wg.ones(2, 3, 4)).shape
    webgrad.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size``.

    >>> import webgrad as wg
    >>> Unflatten(1, (3, 4))(wg.ones(2, 12)).shape
    webgrad.Size([2, 3, 4])
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


__all__ = ["Flatten", "Unflatten"]
