"""Tests of values: ``isnan``, ``isinf``, ``isposinf``, ``isneginf``, ``isfinite``, ``isreal``,
``isclose``, ``allclose``, ``equal``, ``nan_to_num``, and the reductions that skip NaN (``nansum``,
``nanmean``), composed from the comparison kernels.

NaN is found as ``not (x == x)`` (a compiler assuming no NaN may fold ``x != x`` to false); integer
and bool tensors hold no NaN or infinity.
"""
from __future__ import annotations

import math

from .. import kernel_names as K
from ..dtype_info import finfo
from ..dtypes import bool_, get_default_dtype
from ..engine import run_kernel
from ..tensor import Tensor
from . import binary, reduce, unary
from .common import check_tensor, is_scalar, real_only, scalar_tensor
from .creation import full


def _constant(x: Tensor, value: bool) -> Tensor:
    return full(x.shape, value, dtype=bool_, device=x._backend)


def isnan(input) -> Tensor:
    """Where ``input`` is NaN (a bool tensor).

    >>> import webgrad as wg
    >>> wg.isnan(wg.tensor([1.0, float("nan")])).tolist()
    [False, True]
    """
    x = check_tensor("isnan", input)
    return unary.logical_not(binary.eq(x, x)) if x._dtype.differentiable else _constant(x, False)


def isinf(input) -> Tensor:
    """Where ``input`` is +inf or -inf.

    >>> import webgrad as wg
    >>> wg.isinf(wg.tensor([1.0, -float("inf")])).tolist()
    [False, True]
    """
    x = check_tensor("isinf", input)
    return binary.eq(unary.abs(x), math.inf) if x._dtype.differentiable else _constant(x, False)


@real_only(RuntimeError)
def isposinf(input) -> Tensor:
    """Where ``input`` is +inf.

    >>> import webgrad as wg
    >>> wg.isposinf(wg.tensor([float("inf"), -float("inf")])).tolist()
    [True, False]
    """
    x = check_tensor("isposinf", input)
    return binary.eq(x, math.inf) if x._dtype.is_floating else _constant(x, False)


@real_only(RuntimeError)
def isneginf(input) -> Tensor:
    """Where ``input`` is -inf.

    >>> import webgrad as wg
    >>> wg.isneginf(wg.tensor([float("inf"), -float("inf")])).tolist()
    [False, True]
    """
    x = check_tensor("isneginf", input)
    return binary.eq(x, -math.inf) if x._dtype.is_floating else _constant(x, False)


def isfinite(input) -> Tensor:
    """Where ``input`` is neither NaN nor infinite.

    >>> import webgrad as wg
    >>> wg.isfinite(wg.tensor([1.0, float("inf"), float("nan")])).tolist()
    [True, False, False]
    """
    x = check_tensor("isfinite", input)
    return binary.lt(unary.abs(x), math.inf) if x._dtype.differentiable else _constant(x, True)


def isreal(input) -> Tensor:
    """Whether each element is real: all True for a real tensor, ``imag == 0`` for a complex one.

    >>> import webgrad as wg
    >>> wg.isreal(wg.tensor([1.0 + 0j, 1j])).tolist()
    [True, False]
    """
    x = check_tensor("isreal", input)
    return binary.eq(x.imag, 0) if x._dtype.is_complex else _constant(x, True)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """Where ``|input - other| <= atol + rtol * |other|`` or the two are equal (infinities of one
    sign; NaNs too when ``equal_nan``), as PyTorch's: both tensors of one dtype, broadcasting.

    >>> import webgrad as wg
    >>> wg.isclose(wg.tensor([1.0, 2.0]), wg.tensor([1.0 + 1e-6, 2.1])).tolist()
    [True, False]
    """
    check_tensor("isclose", input)
    check_tensor("isclose", other, "other")
    if input._dtype is not other._dtype:
        raise TypeError(f"isclose: {input._dtype.name} input does not have the same dtype as other "
                        f"({other._dtype.name})")
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol and atol must be non-negative, got rtol={rtol}, atol={atol}")
    close = binary.eq(input, other)
    if equal_nan:
        close = binary.logical_or(close, binary.logical_and(isnan(input), isnan(other)))
    a, b = (input, other) if input._dtype.is_floating else (input.to(get_default_dtype()),
                                                              other.to(get_default_dtype()))
    error = unary.abs(binary.sub(a, b))
    allowed = binary.add(binary.mul(unary.abs(b), rtol), atol)
    return binary.logical_or(close, binary.logical_and(isfinite(error), binary.le(error, allowed)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether ``isclose`` holds everywhere (a Python bool).

    >>> import webgrad as wg
    >>> wg.allclose(wg.tensor([1.0, 2.0]), wg.tensor([1.0, 2.0 + 1e-6]))
    True
    """
    return bool(reduce.all(isclose(input, other, rtol, atol, equal_nan)).item())


def equal(input, other) -> bool:
    """Whether the two tensors have one shape and equal elements (a Python bool; NaN is unequal).

    >>> import webgrad as wg
    >>> wg.equal(wg.tensor([1, 2]), wg.tensor([1, 2])), wg.equal(wg.tensor([1]), wg.tensor([1, 1]))
    (True, False)
    """
    check_tensor("equal", input)
    check_tensor("equal", other, "other")
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(reduce.all(binary.eq(input, other)).item())


def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """``input`` with NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default
    0 and the dtype's largest and lowest finite values).

    >>> import webgrad as wg
    >>> wg.nan_to_num(wg.tensor([float("nan"), float("inf"), 1.0]), posinf=9.0).tolist()
    [0.0, 9.0, 1.0]
    """
    x = check_tensor("nan_to_num", input)
    if not x._dtype.is_floating:
        return run_kernel(K.IDENTITY, x)
    info = finfo(x._dtype)
    for value, found in ((nan, isnan), (info.max if posinf is None else posinf, isposinf),
                         (info.min if neginf is None else neginf, isneginf)):
        if not is_scalar(value):
            raise TypeError(f"nan_to_num: replacement values must be numbers, got {type(value).__name__}")
        x = binary.where(found(x), scalar_tensor(float(value), x._dtype, x._backend), x)
    return x


@real_only(RuntimeError)
def nansum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """``sum`` treating NaN as 0.

    >>> import webgrad as wg
    >>> wg.nansum(wg.tensor([1.0, float("nan"), 2.0])).item()
    3.0
    """
    x = check_tensor("nansum", input)
    if x._dtype.is_floating:
        x = binary.where(isnan(x), scalar_tensor(0.0, x._dtype, x._backend), x)
    return reduce.sum(x, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """``mean`` of the elements that are not NaN (NaN where all are).

    >>> import webgrad as wg
    >>> wg.nanmean(wg.tensor([[1.0, float("nan")], [2.0, 4.0]]), dim=1).tolist()
    [1.0, 3.0]
    """
    x = check_tensor("nanmean", input)
    if not x._dtype.is_floating:
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got {x.dtype.name}")
    kept = unary.logical_not(isnan(x))
    return binary.div(nansum(x, dim, keepdim, dtype=dtype), reduce.sum(kept, dim, keepdim, dtype=dtype or x.dtype))


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None) -> Tensor:
    return binary.inplace(self, "nan_to_num_", nan_to_num, nan, posinf, neginf)


METHODS = {"isnan": isnan, "isinf": isinf, "isposinf": isposinf, "isneginf": isneginf, "isfinite": isfinite,
           "isreal": isreal, "isclose": isclose, "allclose": allclose, "equal": equal, "nan_to_num": nan_to_num,
           "nan_to_num_": _nan_to_num_, "nansum": nansum, "nanmean": nanmean}

__all__ = ["isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "isclose", "allclose", "equal",
           "nan_to_num", "nansum", "nanmean"]
