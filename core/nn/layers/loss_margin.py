"""Loss modules for the margin, embedding and likelihood losses of ``functional/loss_margin.py``
(options in PyTorch's positional order; ``weight`` a buffer, as PyTorch's)."""
from __future__ import annotations

from .. import functional as F
from ..functional._utils import check_reduction
from ..module import Module
from .loss import _R, _RE, _SA, _Loss, _loss


class _RankingLoss(_Loss):
    """A loss of two inputs and a target of 1 / -1."""

    def forward(self, input1, input2, target):
        return getattr(F, self.fn)(input1, input2, target, **{n: getattr(self, n) for n in self._options()})


class _TripletLoss(_Loss):
    def forward(self, anchor, positive, negative):
        return getattr(F, self.fn)(anchor, positive, negative, **{n: getattr(self, n) for n in self._options()})


def _named(base, name, fn, options, doc):
    return type(name, (base,), {"fn": fn, "options": options, "__doc__": doc, "__module__": __name__})


MarginRankingLoss = _named(_RankingLoss, "MarginRankingLoss", "margin_ranking_loss", (("margin", 0.0), _SA, _RE, _R),
                           "max(0, -target * (input1 - input2) + margin).")
CosineEmbeddingLoss = _named(_RankingLoss, "CosineEmbeddingLoss", "cosine_embedding_loss",
                             (("margin", 0.0), _SA, _RE, _R),
                             "1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1.")
TripletMarginLoss = _named(_TripletLoss, "TripletMarginLoss", "triplet_margin_loss",
                           (("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False), _SA, _RE, _R),
                           "max(0, margin + d(anchor, positive) - d(anchor, negative)), d a p-norm distance.")
HingeEmbeddingLoss = _loss("HingeEmbeddingLoss", "hinge_embedding_loss", (("margin", 1.0), _SA, _RE, _R),
                           "input for target 1, max(0, margin - input) for target -1.")
SoftMarginLoss = _loss("SoftMarginLoss", "soft_margin_loss", (_SA, _RE, _R), "log(1 + exp(-target * input)).")
MultiLabelSoftMarginLoss = _loss("MultiLabelSoftMarginLoss", "multilabel_soft_margin_loss",
                                 (("weight", None), _SA, _RE, _R), "Per-class logistic loss, averaged over classes.")
MultiMarginLoss = _loss("MultiMarginLoss", "multi_margin_loss",
                        (("p", 1), ("margin", 1.0), ("weight", None), _SA, _RE, _R), "Multi-class hinge loss.")
MultiLabelMarginLoss = _loss("MultiLabelMarginLoss", "multilabel_margin_loss", (_SA, _RE, _R),
                             "Multi-label hinge loss (targets listed, ended by -1).")
PoissonNLLLoss = _loss("PoissonNLLLoss", "poisson_nll_loss",
                       (("log_input", True), ("full", False), _SA, ("eps", 1e-8), _RE, _R),
                       "Poisson negative log likelihood.")
for _cls in (MarginRankingLoss, CosineEmbeddingLoss, TripletMarginLoss, HingeEmbeddingLoss, SoftMarginLoss,
             MultiLabelSoftMarginLoss, MultiMarginLoss, MultiLabelMarginLoss, PoissonNLLLoss):
    _cls.__module__ = __name__


class GaussianNLLLoss(Module):
    """Gaussian negative log likelihood of ``input`` (the mean) and ``var`` (a tensor or a float).

    >>> import webgrad as wg
    >>> GaussianNLLLoss()(wg.tensor([1.0]), wg.tensor([3.0]), wg.tensor([1.0])).item()
    2.0
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__()
        self.full, self.eps, self.reduction = full, eps, reduction

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class TripletMarginWithDistanceLoss(Module):
    """``TripletMarginLoss`` with any ``distance_function(a, b)`` (default: pairwise_distance).

    >>> import webgrad as wg
    >>> a = wg.tensor([[0.0, 0.0]])
    >>> TripletMarginWithDistanceLoss()(a, wg.tensor([[1.0, 0.0]]), wg.tensor([[3.0, 0.0]])).item()
    0.0
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__()
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, got {margin}")
        check_reduction(reduction, "TripletMarginWithDistanceLoss")
        self.distance_function, self.margin, self.swap, self.reduction = distance_function, margin, swap, reduction

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


__all__ = ["MarginRankingLoss", "CosineEmbeddingLoss", "TripletMarginLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiLabelMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "TripletMarginWithDistanceLoss"]
