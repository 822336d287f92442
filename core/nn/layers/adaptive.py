"""AdaptiveLogSoftmaxWithLoss (Grave et al.'s efficient softmax): a head over the frequent classes
plus one cluster token per tail cluster, each cluster a low-rank projection. Every cluster's tail is
evaluated on the whole batch and the rows are picked with masks (no data-dependent shapes, so it
runs the same on every backend); values and gradients are PyTorch's."""
from __future__ import annotations

from collections import namedtuple

from .. import functional as F
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of ``n_classes`` classes split at ``cutoffs``; ``forward(input, target)``
    returns ``(output, loss)``: each row's target log-probability and their negated mean.

    >>> import webgrad as wg
    >>> asm = AdaptiveLogSoftmaxWithLoss(8, 10, [4, 7])
    >>> out = asm(wg.randn(3, 8), wg.tensor([0, 5, 9]))
    >>> out.output.shape, out.loss.shape, asm.log_prob(wg.randn(2, 8)).shape
    (webgrad.Size([3]), webgrad.Size([]), webgrad.Size([2, 10]))
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError(f"AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, positive integers "
                             f"sorted in an increasing order, each between 1 and n_classes-1; got {cutoffs}")
        self.in_features, self.n_classes, self.cutoffs = in_features, n_classes, cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size, self.n_clusters = self.cutoffs[0], len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def _check(self, input, target):
        name = type(self).__name__
        if target.ndim == 1:
            if input.ndim != 2 or input.shape[0] != target.shape[0]:
                raise RuntimeError(f"{name}: a 1D target of shape {tuple(target.shape)} expects a 2D input with "
                                   f"the same batch size, got {tuple(input.shape)}")
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError(f"{name}: a 0D target expects a 1D input, got {tuple(input.shape)}")
        else:
            raise RuntimeError(f"{name}: 0D or 1D target tensor expected, multi-target not supported")
        if target.numel() and bool(((target < 0) | (target >= self.n_classes)).any().item()):
            raise RuntimeError(f"{name}: target values should be in [0, {self.n_classes - 1}], but values in "
                               f"range [{target.min().item()}, {target.max().item()}] were found")

    def forward(self, input, target):
        import webgrad as wg
        self._check(input, target)
        batched = target.ndim > 0
        x, t = (input, target) if batched else (input.unsqueeze(0), target.unsqueeze(0))
        column = wg.where(t < self.shortlist_size, t, 0)        # the head column each row reads
        output = wg.zeros(t.shape[0], dtype=x.dtype, device=x.device)
        for i, (low, high) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            inside = (t >= low) & (t < high)
            column = wg.where(inside, self.shortlist_size + i, column)
            logprob = F.log_softmax(self.tail[i](x), dim=1)
            picked = logprob.gather(1, (t - low).clamp(0, high - low - 1).unsqueeze(1)).squeeze(1)
            output = output + wg.where(inside, picked, 0.0)
        head_logprob = F.log_softmax(self.head(x), dim=1)
        output = output + head_logprob.gather(1, column.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        import webgrad as wg
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return wg.cat(parts, 1)

    def log_prob(self, input):
        """Log-probabilities of every class: [N, in_features] -> [N, n_classes]."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row (``log_prob(input).argmax(1)``)."""
        return self.log_prob(input).argmax(1)


__all__ = ["AdaptiveLogSoftmaxWithLoss"]
