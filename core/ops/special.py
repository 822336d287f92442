"""Special functions of ``torch`` and ``torch.Tensor``: the error-function family (``erfc``,
``erfinv``), the gamma family (``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma``) and their
in-place forms. ``webgrad.special`` (``core/special.py``) gathers them with the rest of
``torch.special``'s names.

Integer and bool input works on a copy in the default float dtype, as in PyTorch.
"""
from __future__ import annotations

import math

from .. import kernel_names as K
from ..engine import run_kernel
from ..tensor import Tensor
from . import binary, creation, reduce
from .common import inplace_method
from .unary import _input, _unary

# name: (kernel, summary, example input, example output)
_TABLE = {
    "erfc": (K.ERFC, "The complementary error function ``1 - erf(input)``, accurate where erf nears 1.",
             "[0.0, -3.0]", "[1.0, 1.999977946281433]"),
    "erfinv": (K.ERFINV, "The inverse error function: ``erf(erfinv(y)) == y`` on [-1, 1] (+-inf at +-1, NaN "
                         "beyond).", "[0.0, 1.0]", "[0.0, inf]"),
    "lgamma": (K.LGAMMA, "``log(|Gamma(input)|)`` (inf at 0, -1, -2, ...).", "[1.0, 0.5]", "[0.0, 0.5723649263381958]"),
    "digamma": (K.DIGAMMA, "The digamma function ``Gamma'(x) / Gamma(x)`` (-inf at 0, NaN at -1, -2, ...).",
                "[1.0]", "[-0.5772156715393066]"),
}

for _name, (_kernel, _summary, _example, _result) in _TABLE.items():
    globals()[_name] = _unary(_name, _kernel, True, _summary, _example, _result)


def polygamma(n, input) -> Tensor:
    """The ``n``-th derivative of ``digamma`` (``n = 0``: digamma itself).

    >>> import webgrad as wg
    >>> print(f"{wg.polygamma(1, wg.tensor(1.0)).item():.6f}")   # pi ** 2 / 6
    1.644934
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"polygamma: n must be a non-negative integer, got {n!r}")
    return run_kernel(K.POLYGAMMA, _input("polygamma", input, True), n=n)


def _polygamma_method(self, n):
    """``polygamma(n, self)``.

    >>> import webgrad as wg
    >>> wg.tensor([1.0]).polygamma(0).tolist() == wg.digamma(wg.tensor([1.0])).tolist()
    True
    """
    return polygamma(n, self)


def i0(input) -> Tensor:
    """The modified Bessel function of the first kind, order 0: ``exp(|x|) * i0e(x)`` (its gradient
    is ``i1``, as PyTorch's).

    >>> import webgrad as wg
    >>> print(f"{wg.i0(wg.tensor(1.0)).item():.6f}")
    1.266066
    """
    x = _input("i0", input, True)
    return binary.mul(run_kernel(K.BESSEL_I0E, x), run_kernel(K.EXP, run_kernel(K.ABS, x)))


def mvlgamma(input, p) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``: ``sum_i lgamma(x - i / 2)`` over
    i < p, plus ``p (p - 1) / 4 log(pi)``; every element must exceed ``(p - 1) / 2``.

    >>> import webgrad as wg
    >>> print(f"{wg.mvlgamma(wg.tensor(2.5), 2).item():.5f}")
    0.85705
    """
    x = _input("mvlgamma", input, True)
    if not isinstance(p, int) or isinstance(p, bool) or p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p!r}")
    if x.numel() and not bool(reduce.all(binary.gt(x, (p - 1) / 2))):
        raise RuntimeError(f"mvlgamma: all elements must be greater than (p-1)/2 = {(p - 1) / 2} (p = {p})")
    steps = creation.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=x.dtype, device=x.device)   # PyTorch's order
    terms = run_kernel(K.LGAMMA, binary.add(steps, x.unsqueeze(-1)))
    return binary.add(reduce.sum(terms, -1), p * (p - 1) * math.log(math.pi) / 4)


METHODS = {name: globals()[name] for name in _TABLE}
METHODS.update({f"{name}_": inplace_method(f"{name}_", globals()[name]) for name in _TABLE})
METHODS.update({"polygamma": _polygamma_method, "mvlgamma": mvlgamma, "i0": i0, "i0_": inplace_method("i0_", i0)})
METHODS.update({"polygamma_": inplace_method("polygamma_", _polygamma_method),
                "mvlgamma_": inplace_method("mvlgamma_", mvlgamma)})

__all__ = list(_TABLE) + ["polygamma", "mvlgamma", "i0"]   # torch.erfc_ and the other torch.* in-place aliases: the shapes
                                                     # session's
