"""Dropout as a module: active in training mode, the identity in eval mode."""
from __future__ import annotations

from .. import functional as F
from ..module import Module


class Dropout(Module):
    """Zero elements with probability ``p`` while training, scaling the rest by 1/(1-p).

    >>> import webgrad as wg
    >>> Dropout(0.5).eval()(wg.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class AlphaDropout(Dropout):
    """Dropout for SELU networks (keeps mean 0 and variance 1) while training.

    >>> import webgrad as wg
    >>> AlphaDropout(0.2).eval()(wg.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """``AlphaDropout`` of whole channels of [N, C, ...] while training.

    >>> import webgrad as wg
    >>> FeatureAlphaDropout(0.2).eval()(wg.ones(1, 2, 3)).shape
    webgrad.Size([1, 2, 3])
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)


__all__ = ["Dropout", "AlphaDropout", "FeatureAlphaDropout"]
