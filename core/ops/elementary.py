"""More elementary functions, composed from the unary and binary kernels: hyperbolic and inverse
trigonometric functions, ``exp2``, ``hypot``, ``logaddexp``, ``trunc``/``frac``, ``fmod``, ``lerp``,
``addcmul``/``addcdiv``. (``log2`` and ``log10`` are kernels of their own, in ``unary.py``: a
composition ``log(x) / log(2)`` misses exact powers, ``log2(8.0) == 3.0``.)

The compositions are chosen to keep PyTorch's accuracy where a naive formula loses it: ``sinh``
and ``asinh``/``atanh`` go through ``expm1``/``log1p`` (no cancellation near 0), ``asin``/``acos``
through ``atan2`` with ``sqrt((1 - x) * (1 + x))`` (accurate near +-1). What they cannot reach:
``sinh``/``cosh`` overflow to inf a little early (|x| > 88.72 in float32, where the true value
just fits below 3.4e38), ``asinh``/``acosh``/``hypot`` square their input (inf beyond ~1.8e19 in float32).
"""
from __future__ import annotations

import math

from .. import kernel_names as K
from ..engine import run_kernel
from ..tensor import Tensor
from . import binary, unary
from .complex import complex_math
from .common import check_tensor, inplace_method, is_scalar, scale_first


def _float(op: str, input) -> Tensor:
    """``input`` as a floating tensor (ints and bools become the default float, as in PyTorch)."""
    return unary._input(op, input, True)


def _odd(fn, x):
    """``fn`` (defined for x >= 0) extended as an odd function, differentiable at 0 (where the
    gradient comes from the positive side: no ``abs`` kink)."""
    negative = binary.lt(x, 0)
    y = fn(binary.where(negative, unary.neg(x), x))
    return binary.where(negative, unary.neg(y), y)


@complex_math
def sinh(input) -> Tensor:
    """Hyperbolic sine, ``(expm1(x) - expm1(-x)) / 2``.

    >>> import webgrad as wg
    >>> wg.sinh(wg.tensor([0.0, 1.0])).tolist()
    [0.0, 1.175201177597046]
    """
    x = _float("sinh", input)
    return binary.mul(binary.sub(unary.expm1(x), unary.expm1(unary.neg(x))), 0.5)


@complex_math
def cosh(input) -> Tensor:
    """Hyperbolic cosine, ``(exp(x) + exp(-x)) / 2``.

    >>> import webgrad as wg
    >>> wg.cosh(wg.tensor([0.0])).tolist()
    [1.0]
    """
    x = _float("cosh", input)
    return binary.mul(binary.add(unary.exp(x), unary.exp(unary.neg(x))), 0.5)


def _sqrt_one_minus_square(x):
    return unary.sqrt(binary.mul(binary.sub(1, x), binary.add(1, x)))


@complex_math
def asin(input) -> Tensor:
    """Inverse sine (NaN outside [-1, 1]).

    >>> import webgrad as wg
    >>> round(wg.asin(wg.tensor(1.0)).item(), 6)
    1.570796
    """
    x = _float("asin", input)
    return binary.atan2(x, _sqrt_one_minus_square(x))


@complex_math
def acos(input) -> Tensor:
    """Inverse cosine (NaN outside [-1, 1]).

    >>> import webgrad as wg
    >>> wg.acos(wg.tensor(1.0)).item()
    0.0
    """
    x = _float("acos", input)
    return binary.atan2(_sqrt_one_minus_square(x), x)


@complex_math
def atan(input) -> Tensor:
    """Inverse tangent.

    >>> import webgrad as wg
    >>> round(wg.atan(wg.tensor(1.0)).item(), 6)
    0.785398
    """
    return binary.atan2(_float("atan", input), 1.0)


def _asinh_nonnegative(a):
    # log1p(a + a^2 / (1 + sqrt(1 + a^2))) = log(a + sqrt(a^2 + 1)), without cancellation near 0
    square = binary.mul(a, a)
    return unary.log1p(binary.add(a, binary.div(square, binary.add(1, unary.sqrt(binary.add(square, 1))))))


@complex_math
def asinh(input) -> Tensor:
    """Inverse hyperbolic sine.

    >>> import webgrad as wg
    >>> round(wg.asinh(wg.tensor(1.0)).item(), 6)
    0.881374
    """
    return _odd(_asinh_nonnegative, _float("asinh", input))


@complex_math
def acosh(input) -> Tensor:
    """Inverse hyperbolic cosine (NaN below 1), ``log1p((x - 1) + sqrt((x - 1) * (x + 1)))``.

    >>> import webgrad as wg
    >>> wg.acosh(wg.tensor(1.0)).item()
    0.0
    """
    x = _float("acosh", input)
    below = binary.sub(x, 1)
    return unary.log1p(binary.add(below, unary.sqrt(binary.mul(below, binary.add(x, 1)))))


@complex_math
def atanh(input) -> Tensor:
    """Inverse hyperbolic tangent (+-inf at +-1, NaN beyond), ``log1p(2x / (1 - x)) / 2``.

    >>> import webgrad as wg
    >>> round(wg.atanh(wg.tensor(0.5)).item(), 6)
    0.549306
    """
    x = _float("atanh", input)
    return binary.mul(unary.log1p(binary.div(binary.mul(x, 2), binary.sub(1, x))), 0.5)


@complex_math
def exp2(input) -> Tensor:
    """``2 ** input`` (float for integer input, as in PyTorch).

    >>> import webgrad as wg
    >>> wg.exp2(wg.tensor([3, -1])).tolist()
    [8.0, 0.5]
    """
    return binary.pow(2.0, _float("exp2", input))


def hypot(input, other) -> Tensor:
    """``sqrt(input ** 2 + other ** 2)`` elementwise, broadcasting (floating tensors, as in PyTorch).

    >>> import webgrad as wg
    >>> wg.hypot(wg.tensor([3.0]), wg.tensor([4.0])).tolist()
    [5.0]
    """
    a, b = binary._operands("hypot", input, other)
    if not a._dtype.is_floating:
        raise TypeError(f"hypot: expected floating tensors, got {a._dtype.name}")
    return unary.sqrt(binary.add(binary.mul(a, a), binary.mul(b, b)))


def logaddexp(input, other) -> Tensor:
    """``log(exp(input) + exp(other))``, computed stably: ``max + log1p(exp(-|input - other|))``.

    >>> import webgrad as wg
    >>> round(wg.logaddexp(wg.tensor([1000.0]), wg.tensor([1000.0])).item(), 3)
    1000.693
    """
    a, b = binary._operands("logaddexp", input, other, floating=True)
    top = binary.maximum(a, b)
    rest = unary.log1p(unary.exp(unary.neg(unary.abs(binary.sub(a, b)))))
    both_inf = binary.logical_and(binary.eq(a, b), binary.eq(unary.abs(a), math.inf))   # inf - inf: keep a
    return binary.where(both_inf, a, binary.add(top, rest))


def logaddexp2(input, other) -> Tensor:
    """``log2(2 ** input + 2 ** other)``, computed stably.

    >>> import webgrad as wg
    >>> wg.logaddexp2(wg.tensor([3.0]), wg.tensor([3.0])).tolist()
    [4.0]
    """
    a, b = binary._operands("logaddexp2", input, other, floating=True)
    scaled = logaddexp(binary.mul(a, math.log(2)), binary.mul(b, math.log(2)))
    return binary.div(scaled, math.log(2))


def trunc(input) -> Tensor:
    """Round toward zero (integer dtypes unchanged).

    >>> import webgrad as wg
    >>> wg.trunc(wg.tensor([-1.5, 1.5])).tolist()
    [-1.0, 1.0]
    """
    x = unary._numeric("trunc", input)
    return binary._trunc(x) if x._dtype.is_floating else run_kernel(K.IDENTITY, x)


def frac(input) -> Tensor:
    """The fractional part, ``input - trunc(input)`` (the sign of ``input``).

    >>> import webgrad as wg
    >>> wg.frac(wg.tensor([-1.5, 2.25])).tolist()
    [-0.5, 0.25]
    """
    x = unary._numeric("frac", input)
    return binary.sub(x, trunc(x))


def fmod(input, other) -> Tensor:
    """The C remainder ``input - trunc(input / other) * other``: the sign of ``input`` (``remainder``
    takes the sign of ``other``).

    >>> import webgrad as wg
    >>> wg.fmod(wg.tensor([-7, 7]), 3).tolist()
    [-1, 1]
    """
    return run_kernel(K.FMOD, *binary._operands("fmod", input, other))


def deg2rad(input) -> Tensor:
    """Degrees to radians.

    >>> import webgrad as wg
    >>> round(wg.deg2rad(wg.tensor(180.0)).item(), 5)
    3.14159
    """
    return binary.mul(_float("deg2rad", input), math.pi / 180)


def rad2deg(input) -> Tensor:
    """Radians to degrees.

    >>> import webgrad as wg
    >>> round(wg.rad2deg(wg.tensor(3.141592653589793)).item(), 3)
    180.0
    """
    return binary.mul(_float("rad2deg", input), 180 / math.pi)


def xlogy(input, other) -> Tensor:
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN), as ``torch.xlogy``.

    >>> import webgrad as wg
    >>> wg.xlogy(wg.tensor([0.0, 2.0]), wg.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    a, b = binary._operands("xlogy", input, other, floating=True)
    product = binary.where(binary.eq(a, 0), 0.0, binary.mul(a, unary.log(b)))
    return binary.where(binary.eq(b, b), product, b)   # NaN in other propagates


def logit(input, eps=None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given.

    >>> import webgrad as wg
    >>> wg.logit(wg.tensor([0.5])).tolist()
    [0.0]
    """
    p = _float("logit", input)
    if eps is not None:
        p = unary.clamp(p, eps, 1 - eps)
    return unary.log(binary.div(p, binary.sub(1, p)))


def _nan_ignoring(op, pick):
    def fn(input, other) -> Tensor:
        a, b = binary._operands(op, input, other)
        if not a._dtype.is_floating:
            return pick(a, b)
        return binary.where(binary.ne(a, a), b, binary.where(binary.ne(b, b), a, pick(a, b)))
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"""The elementwise {op[1:]}imum, ignoring NaN (NaN only where both are), as ``torch.{op}``.

    >>> import webgrad as wg
    >>> wg.{op}(wg.tensor([1.0, float("nan")]), wg.tensor([2.0, 3.0])).tolist()
    [{"2.0" if op == "fmax" else "1.0"}, 3.0]
    """
    return fn


fmax = _nan_ignoring("fmax", binary.maximum)
fmin = _nan_ignoring("fmin", binary.minimum)


# ---------------------------------------------------------------- of three operands


def lerp(input, end, weight) -> Tensor:
    """``input + weight * (end - input)``, computed as PyTorch does (from ``end`` once ``weight``
    reaches 0.5, so results match bit for bit); ``weight`` is a number or a tensor.

    >>> import webgrad as wg
    >>> wg.lerp(wg.tensor([0.0, 10.0]), wg.tensor([10.0, 20.0]), 0.25).tolist()
    [2.5, 12.5]
    """
    check_tensor("lerp", input)
    check_tensor("lerp", end, "end")
    if not (is_scalar(weight) or isinstance(weight, Tensor)):
        raise TypeError(f"lerp: weight must be a number or a tensor, got {type(weight).__name__}")
    if not input._dtype.is_floating or input._dtype is not end._dtype:
        raise TypeError(f"lerp: expected input and end of one floating dtype, got {input._dtype.name} and "
                        f"{end._dtype.name}")
    d = binary.sub(end, input)
    if not isinstance(weight, Tensor):
        return binary.add(input, binary.mul(d, weight)) if abs(weight) < 0.5 else \
            binary.sub(end, binary.mul(d, 1 - weight))
    low = binary.add(input, binary.mul(weight, d))
    high = binary.sub(end, binary.mul(d, binary.sub(1, weight)))
    return binary.where(binary.lt(unary.abs(weight), 0.5), low, high)


def _scaled(product, value):
    return product if value == 1 else binary.mul(product, value)


_ADDC_FORM, _ADDC_NOW = "Number value, Tensor tensor1, Tensor tensor2", "Tensor tensor1, Tensor tensor2, *, Number value = 1"


def addcmul(input, tensor1, tensor2, *deprecated, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2``, broadcasting.

    >>> import webgrad as wg
    >>> wg.addcmul(wg.ones(2), wg.tensor([1.0, 2.0]), wg.tensor([3.0, 4.0]), value=0.5).tolist()
    [2.5, 5.0]
    """
    if deprecated:
        (tensor1, tensor2), value = scale_first("addcmul", (tensor1, tensor2, *deprecated), _ADDC_FORM, _ADDC_NOW)
    check_tensor("addcmul", input)
    return binary.add(input, _scaled(binary.mul(tensor1, tensor2), value))


def addcdiv(input, tensor1, tensor2, *deprecated, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2``, broadcasting (integer division refused, as in PyTorch).

    >>> import webgrad as wg
    >>> wg.addcdiv(wg.ones(2), wg.tensor([1.0, 2.0]), wg.tensor([4.0, 4.0]), value=2).tolist()
    [1.5, 2.0]
    """
    if deprecated:
        (tensor1, tensor2), value = scale_first("addcdiv", (tensor1, tensor2, *deprecated), _ADDC_FORM, _ADDC_NOW)
    check_tensor("addcdiv", input)
    for t in (tensor1, tensor2):
        if isinstance(t, Tensor) and not t._dtype.is_floating:
            raise RuntimeError(f"addcdiv: integer division of tensors using addcdiv is no longer supported "
                               f"(got {t._dtype.name}); use addcmul(input, tensor1, 1 / tensor2) or cast to float")
    return binary.add(input, _scaled(binary.div(tensor1, tensor2), value))


_UNARY_NAMES = ["sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp2", "trunc", "frac",
                "deg2rad", "rad2deg"]
_OTHER_NAMES = ["hypot", "logaddexp", "logaddexp2", "fmod", "lerp", "addcmul", "addcdiv", "xlogy", "logit", "fmax",
                "fmin"]
_ALIASES = {"arcsin": asin, "arccos": acos, "arctan": atan, "arcsinh": asinh, "arccosh": acosh, "arctanh": atanh,
            "fix": trunc}

METHODS = {name: globals()[name] for name in _UNARY_NAMES + _OTHER_NAMES}
METHODS.update(_ALIASES)
METHODS.update({f"{name}_": inplace_method(f"{name}_", fn) for name, fn in list(METHODS.items())
                if name not in ("logaddexp", "logaddexp2", "fmax", "fmin")})
globals().update(_ALIASES)

__all__ = _UNARY_NAMES + _OTHER_NAMES + list(_ALIASES)
