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
from ..ops.binary import where
from ..ops.joining import broadcast_tensors
from ..ops.movement import cat
from ..size import Size
from ..tensor import Tensor, tensor

lazy_property = cached_property      # computed on first use, then kept in the instance's __dict__

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits", "tril_matrix_to_vec",
           "vec_to_tril_matrix"]


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


def batch_shape_of(given, first) -> Size:
    """The batch shape of a distribution built from ``given`` parameters (broadcast to ``first``'s
    shape): empty when every parameter given was a number, as PyTorch's."""
    return Size() if all(isinstance(g, Number) for g in given) else Size(first.shape)


def sum_rightmost(value, dim: int):
    """``value`` summed over its ``dim`` rightmost dimensions (PyTorch's ``_sum_rightmost``).

    >>> import webgrad as wg
    >>> sum_rightmost(wg.ones(2, 3), 1).tolist()
    [3.0, 3.0]
    """
    return value.reshape(tuple(value.shape[:value.ndim - dim]) + (-1,)).sum(-1) if dim > 0 else value


def _tril_positions(n: int, diag: int) -> list:
    """Row-major positions (in an n x n matrix) of the entries on or below diagonal ``diag``."""
    return [i * n + j for i in range(n) for j in range(n) if j < i + diag + 1]


def tril_matrix_to_vec(mat, diag=0):
    """The entries of ``mat`` on or below diagonal ``diag``, row by row, as the last dimension.

    >>> import webgrad as wg
    >>> tril_matrix_to_vec(wg.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [1.0, 3.0, 4.0]
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"tril_matrix_to_vec: diag ({diag}) provided is outside [{-n}, {n - 1}].")
    index = tensor(_tril_positions(n, diag), backend=mat._backend)
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,)).index_select(-1, index)


def vec_to_tril_matrix(vec, diag=0):
    """The lower-triangular matrix (below diagonal ``diag``) holding ``vec``'s last dimension row by
    row, zeros elsewhere.

    >>> import webgrad as wg
    >>> vec_to_tril_matrix(wg.tensor([1.0, 3.0, 4.0])).tolist()
    [[1.0, 0.0], [3.0, 4.0]]
    """
    size = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * size + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed as the lower triangular "
                         "part of a square D x D matrix.")
    n = round(n)
    where = {p: k for k, p in enumerate(_tril_positions(n, diag))}
    index = tensor([where.get(p, size) for p in range(n * n)], backend=vec._backend)   # size: the zero appended
    padded = cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    return padded.index_select(-1, index).reshape(tuple(vec.shape[:-1]) + (n, n))


EULER_CONSTANT = 0.57721566490153286060      # Euler-Mascheroni


def xlogy(x, y):
    """``x * log(y)``, 0 where x is 0 and y <= 0, with PyTorch's gradients for ``torch.xlogy``:
    d/dx is log(y) (also where x is 0), d/dy is x / y. (webgrad's ``xlogy`` gives d/dx 0 where x
    is 0; the distributions' log-densities need PyTorch's.)

    >>> import webgrad as wg
    >>> x = wg.tensor([0.0, 2.0], requires_grad=True)
    >>> xlogy(x, wg.tensor([0.5, 1.0])).sum().backward()
    >>> [round(v, 4) for v in x.grad.tolist()]
    [-0.6931, 0.0]
    """
    zero = (x == 0) & (y <= 0)
    return where(zero, 0.0, x * where(zero, 1.0, y).log())


def _binary_logits(self):
    """Log-odds of the coin's ``probs`` (computed when first read)."""
    return probs_to_logits(self.probs, is_binary=True)


def _binary_probs(self):
    """The coin's probability of 1, from its ``logits`` (computed when first read)."""
    return logits_to_probs(self.logits, is_binary=True)


def _param_shape(self):
    """The shape of the parameter given (``probs`` or ``logits``)."""
    return Size(self._param.shape)


def binary_parameters():
    """(logits, probs, param_shape) for a class parameterised by a coin's ``probs`` or ``logits``:
    each computed from the other when first read, as PyTorch's lazy properties.

    >>> class Coin:
    ...     logits, probs, param_shape = binary_parameters()
    >>> import webgrad as wg
    >>> c = Coin(); c.logits = wg.tensor([0.0]); c.probs.tolist()
    [0.5]
    """
    return lazy_property(_binary_logits), lazy_property(_binary_probs), property(_param_shape)
