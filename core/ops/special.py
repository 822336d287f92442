"""Special functions of ``torch`` and ``torch.Tensor``: the error-function family (``erfc``,
``erfinv``), the gamma family (``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma``), ``i0``, the
floating-point and integer elementwise functions (``copysign``, ``signbit``, ``nextafter``, ``ldexp``,
``frexp``, ``float_power``, ``gcd``, ``lcm``, ``heaviside``, ``sgn``), ``sinc``, the incomplete gamma functions
and their in-place forms. ``webgrad.special`` (``core/special.py``) gathers them with the rest of
``torch.special``'s names.

Integer and bool input works on a copy in the default float dtype, as in PyTorch.
"""
from __future__ import annotations

import math

from .. import kernel_names as K
from .. import return_types
from ..dtypes import bool_, complex128, float64
from ..engine import run_kernel
from ..tensor import Tensor
from . import binary, creation, reduce, unary
from .complex import complex_math
from .common import check_tensor, inplace_method
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


def signbit(input) -> Tensor:
    """Whether each element's sign bit is set: true for negative numbers, -0.0 and a negative NaN.

    >>> import webgrad as wg
    >>> wg.signbit(wg.tensor([-0.0, 0.0, -2.0])).tolist()
    [True, False, True]
    """
    check_tensor("signbit", input)
    if input._dtype.is_floating:
        return run_kernel(K.SIGNBIT, input)
    return binary.lt(input, 0) if input._dtype is not bool_ else binary.ne(input, input)


def sgn(input) -> Tensor:
    """The sign, ``input / |input|`` (0 at 0): for real tensors ``sign``.

    >>> import webgrad as wg
    >>> wg.sgn(wg.tensor([-2.0, 0.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    return unary.sign(input)


def copysign(input, other) -> Tensor:
    """``|input|`` with the sign (bit) of ``other`` (either may be a number); float for integers, as PyTorch.

    >>> import webgrad as wg
    >>> wg.copysign(wg.tensor([1.0, 2.0]), wg.tensor([-0.0, 1.0])).tolist()
    [-1.0, 2.0]
    """
    return run_kernel(K.COPYSIGN, *binary._operands("copysign", input, other, floating=True))


def nextafter(input, other) -> Tensor:
    """The next floating-point value after ``input`` toward ``other`` (float tensors of one dtype).

    >>> import webgrad as wg
    >>> wg.nextafter(wg.tensor([1.0]), wg.tensor([2.0])).tolist()
    [1.0000001192092896]
    """
    check_tensor("nextafter", input)
    check_tensor("nextafter", other, "other")
    if not input._dtype.is_floating or input._dtype is not other._dtype:
        raise RuntimeError(f"nextafter: expected two floating tensors of one dtype, got {input._dtype.name} and "
                           f"{other._dtype.name}")
    return run_kernel(K.NEXTAFTER, *binary._operands("nextafter", input, other))


def ldexp(input, other) -> Tensor:
    """``input * 2 ** other`` (float for integer input, as PyTorch).

    >>> import webgrad as wg
    >>> wg.ldexp(wg.tensor([1.0, 3.0]), wg.tensor([2, -1])).tolist()
    [4.0, 1.5]
    """
    check_tensor("ldexp", input)
    return binary.mul(input, binary.pow(2.0, other if isinstance(other, Tensor) else float(other)))


def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``, ``|mantissa|`` in [0.5, 1)
    (0, inf and NaN keep themselves, exponent 0); exponent is int32. A named tuple, as PyTorch's.

    >>> import webgrad as wg
    >>> m, e = wg.frexp(wg.tensor([8.0, -3.0]))
    >>> m.tolist(), e.tolist()
    ([0.5, -0.75], [4, 2])
    """
    check_tensor("frexp", input)
    if not input._dtype.is_floating:
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got {input._dtype.name}")
    return return_types.frexp(*run_kernel(K.FREXP, input))


def float_power(input, exponent) -> Tensor:
    """``input ** exponent`` computed in float64 (PyTorch's double precision); the GPU backends have no
    float64, so there it raises TypeError: use ``pow`` in float32, or the cpu backend.

    >>> import webgrad as wg
    >>> wg.float_power(wg.tensor([2, 3], backend="cpu"), 2).dtype
    webgrad.float64
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power: expected a tensor for input or exponent")
    backend = (input if isinstance(input, Tensor) else exponent)._backend
    if float64 not in backend.dtypes:
        raise TypeError(f"float_power: computes in float64, which backend {backend.name!r} does not hold; use "
                        f"pow (in float32) there, or move the tensors to 'cpu'")
    as64 = [t.to(complex128 if t._dtype.is_complex else float64) if isinstance(t, Tensor)
            else complex(t) if isinstance(t, complex) else float(t) for t in (input, exponent)]
    return binary.pow(*as64)


def float_power_(self, exponent) -> Tensor:
    """In-place ``float_power``: the tensor must be float64, as PyTorch requires.

    >>> import webgrad as wg
    >>> wg.tensor([3.0], dtype=wg.float64, backend="cpu").float_power_(2).tolist()
    [9.0]
    """
    if self._dtype is not float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {self._dtype.name} but the operation's result "
                           f"requires dtype float64")
    return inplace_method("float_power_", float_power)(self, exponent)


def _integers(op, input, other):
    a, b = binary._operands(op, input, other)
    if a._dtype.is_floating or a._dtype is bool_:
        raise NotImplementedError(f"{op}: expected integer tensors, got {a._dtype.name}")
    return a, b


def gcd(input, other) -> Tensor:
    """The elementwise greatest common divisor of integer tensors (non-negative; ``gcd(0, 0) == 0``).

    >>> import webgrad as wg
    >>> wg.gcd(wg.tensor([0, -12, 7]), wg.tensor([0, 18, -21])).tolist()
    [0, 6, 7]
    """
    return run_kernel(K.GCD, *_integers("gcd", input, other))


def lcm(input, other) -> Tensor:
    """The elementwise least common multiple of integer tensors (non-negative; 0 where either is 0).

    >>> import webgrad as wg
    >>> wg.lcm(wg.tensor([0, -4, 6]), wg.tensor([5, 6, -4])).tolist()
    [0, 12, 12]
    """
    return run_kernel(K.LCM, *_integers("lcm", input, other))


def heaviside(input, values) -> Tensor:
    """The step function: 0 where ``input < 0``, ``values`` where it is 0, 1 above (one dtype for both, as
    PyTorch requires). It has no derivative: backward through it raises, as PyTorch's.

    >>> import webgrad as wg
    >>> wg.heaviside(wg.tensor([-1.0, 0.0, 2.0]), wg.tensor(0.5)).tolist()
    [0.0, 0.5, 1.0]
    """
    check_tensor("heaviside", input)
    check_tensor("heaviside", values, "values")
    if input._dtype is not values._dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes (got "
                           f"{input._dtype.name} and {values._dtype.name})")
    step = binary.where(binary.eq(input, 0), values, binary.gt(input, 0).to(input._dtype))
    if not (input.requires_grad or values.requires_grad):
        return step
    return _no_derivative("heaviside", step.detach(), input, values)


def _no_derivative(op, value, *inputs):
    """``value`` as the result of ``inputs`` in the graph, with a backward that raises as PyTorch's does."""
    from ..autograd import custom_grad   # autograd imports the ops: here, at call time

    def refuse(dy):
        raise RuntimeError(f"derivative for {op} is not implemented")
    return custom_grad(lambda *args: (value, refuse))(*inputs)


def igamma(input, other) -> Tensor:
    """The regularized lower incomplete gamma function ``P(input, other)`` (``special.gammainc``); its
    gradient exists in ``other`` only, as PyTorch's.

    >>> import webgrad as wg
    >>> print(f"{wg.igamma(wg.tensor(1.0), wg.tensor(1.0)).item():.6f}")   # 1 - 1/e
    0.632121
    """
    return run_kernel(K.IGAMMA, *binary._operands("igamma", input, other, floating=True))


def igammac(input, other) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P`` (``special.gammaincc``).

    >>> import webgrad as wg
    >>> print(f"{wg.igammac(wg.tensor(1.0), wg.tensor(1.0)).item():.6f}")   # 1/e
    0.367879
    """
    return run_kernel(K.IGAMMAC, *binary._operands("igammac", input, other, floating=True))


@complex_math
def sinc(input) -> Tensor:
    """The normalised sinc, ``sin(pi x) / (pi x)``, 1 at 0.

    >>> import webgrad as wg
    >>> wg.sinc(wg.tensor([0.0, 1.0])).tolist()[0]
    1.0
    """
    x = _input("sinc", input, True)
    zero = binary.eq(x, 0.0)
    scaled = binary.mul(binary.where(zero, 1.0, x), math.pi)   # no 0/0 in the value or the gradient
    return binary.where(zero, 1.0, binary.div(unary.sin(scaled), scaled))


def erfc_(input) -> Tensor:
    """``torch.erfc_``: ``input.erfc_()``.

    >>> import webgrad as wg
    >>> wg.erfc_(wg.tensor([0.0])).tolist()
    [1.0]
    """
    return input.erfc_()


def sinc_(input) -> Tensor:
    """``torch.sinc_``: ``input.sinc_()``.

    >>> import webgrad as wg
    >>> wg.sinc_(wg.tensor([0.0])).tolist()
    [1.0]
    """
    return input.sinc_()


def i0_(input) -> Tensor:
    """``torch.i0_``: ``input.i0_()``.

    >>> import webgrad as wg
    >>> wg.i0_(wg.tensor([0.0])).tolist()
    [1.0]
    """
    return input.i0_()


def xlogy_(input, other) -> Tensor:
    """``torch.xlogy_``: ``input.xlogy_(other)``.

    >>> import webgrad as wg
    >>> wg.xlogy_(wg.tensor([0.0, 2.0]), wg.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
    """
    return input.xlogy_(other)


def logit_(input, eps=None) -> Tensor:
    """``torch.logit_``: ``input.logit_(eps)``.

    >>> import webgrad as wg
    >>> wg.logit_(wg.tensor([0.5])).tolist()
    [0.0]
    """
    return input.logit_(eps)


METHODS = {name: globals()[name] for name in _TABLE}
METHODS.update({f"{name}_": inplace_method(f"{name}_", globals()[name]) for name in _TABLE})
_TENSOR_FIRST = ["signbit", "sgn", "copysign", "nextafter", "ldexp", "frexp", "float_power", "gcd", "lcm", "heaviside",
                 "igamma", "igammac"]
METHODS.update({name: globals()[name] for name in _TENSOR_FIRST})
METHODS.update({f"{name}_": inplace_method(f"{name}_", globals()[name])
                for name in ("sgn", "copysign", "nextafter", "ldexp", "gcd", "lcm", "heaviside", "igamma", "igammac")})
METHODS["float_power_"] = float_power_
METHODS.update({"polygamma": _polygamma_method, "mvlgamma": mvlgamma, "i0": i0, "i0_": inplace_method("i0_", i0),
                "sinc": sinc, "sinc_": inplace_method("sinc_", sinc)})
METHODS.update({"polygamma_": inplace_method("polygamma_", _polygamma_method),
                "mvlgamma_": inplace_method("mvlgamma_", mvlgamma)})

# torch.erfc_, xlogy_ and logit_ (the other torch.* in-place aliases are the shapes session's)
__all__ = (list(_TABLE) + ["polygamma", "mvlgamma", "i0", "sinc", "erfc_", "sinc_", "i0_", "xlogy_", "logit_"]
           + _TENSOR_FIRST)
