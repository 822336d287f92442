"""Helpers the distributions share (PyTorch's ``torch.distributions.utils``).

>>> import webgrad as wg
>>> loc, scale = broadcast_all(wg.zeros(2), 1.0)
>>> scale.tolist()
[1.0, 1.0]
"""
from __future__ import annotations

import math
from functools import cached_property
from numbers import Number

from ..dtype_info import finfo
from ..dtypes import get_default_dtype
from ..ops.aliases import softmax
from ..ops.joining import broadcast_tensors
from ..tensor import Tensor, tensor

lazy_property = cached_property      # computed on first use, then kept in the instance's __dict__

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]


def broadcast_all(*values) -> tuple:
    """Tensors and numbers broadcast to one shape; numbers take the first tensor's dtype and
    backend (the default dtype when all are numbers).

    >>> import webgrad as wg
    >>> [t.shape for t in broadcast_all(wg.zeros(2, 1), wg.zeros(3), 0.5)]
    [webgrad.Size([2, 3]), webgrad.Size([2, 3]), webgrad.Size([2, 3])]
    """
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         f"__torch_function__; got {[type(v).__name__ for v in values]}")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    options = {"dtype": get_default_dtype()} if first is None else {"dtype": first.dtype, "backend": first._backend}
    return tuple(broadcast_tensors(*(v if isinstance(v, Tensor) else tensor(v, **options) for v in values)))


def clamp_probs(probs):
    """``probs`` clamped to [eps, 1 - eps] (eps of its dtype), so their logs stay finite.

    >>> import webgrad as wg
    >>> clamp_probs(wg.tensor([0.0, 1.0])).tolist()[0] > 0
    True
    """
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits of probabilities: log-odds when ``is_binary``, else log-probabilities.

    >>> import webgrad as wg
    >>> round(probs_to_logits(wg.tensor([0.5]), is_binary=True).item(), 6)
    0.0
    """
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


def logits_to_probs(logits, is_binary=False):
    """Probabilities of logits: the sigmoid when ``is_binary``, else a softmax over the last dimension.

    >>> import webgrad as wg
    >>> logits_to_probs(wg.tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    return logits.sigmoid() if is_binary else softmax(logits, -1)


SQRT_2 = math.sqrt(2.0)
HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
