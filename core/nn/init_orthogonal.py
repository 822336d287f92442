"""``nn.init.orthogonal_``, PyTorch's algorithm step by step (normal draws from the generator, QR, the
sign fix), so that after ``manual_seed(s)`` it gives PyTorch's numbers."""
from __future__ import annotations

from ..engine import no_grad
from ..linalg.qr_ops import qr
from ..ops import random


def orthogonal_(tensor, gain: float = 1, generator=None):
    """Fill ``tensor`` (2 or more dims; the trailing ones flattened) with a (semi-)orthogonal matrix times
    ``gain``: the Q of the QR factorization of a standard normal matrix, its columns' signs those of R's
    diagonal (so that Q is uniformly distributed).

    >>> import webgrad as wg
    >>> w = orthogonal_(wg.empty(3, 5), generator=wg.Generator().manual_seed(0))
    >>> [[round(v, 4) + 0.0 for v in row] for row in (w @ w.T).tolist()]
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    if tensor.ndim < 2:
        raise ValueError(f"Only tensors with 2 or more dimensions are supported (orthogonal_ got shape "
                         f"{tuple(tensor.shape)})")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flattened = random.normal_(tensor.new_empty((rows, cols)), 0, 1, generator=generator)
        if rows < cols:
            flattened = flattened.T
        q, r = qr(flattened)
        q = q * r.diagonal().sign()
        if rows < cols:
            q = q.T
        return tensor._assign((q * gain).reshape(tuple(tensor.shape)), "orthogonal_")
