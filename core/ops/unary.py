"""Unary elementwise ops: math, activations, rounding, ``clamp``, ``logical_not`` and dtype casts,
plus the in-place ``clamp_``, ``zero_``, ``fill_`` and ``copy_``.

Float math on integer or bool input works on a float32 copy, as in PyTorch
(``wg.exp(wg.tensor([1]))`` is float32); ops such as ``abs``, ``relu`` or ``floor`` keep the dtype.
"""
from __future__ import annotations


from .. import kernel_names as K
from ..dtypes import (bfloat16, bool_, complex64, complex128, float16, float32, float64, get_default_dtype, int8,
                      int16, int32, int64, promote, promote_scalar, uint8)
from ..host import int_fill
from ..engine import run_kernel
from ..tensor import Tensor
from .common import check_tensor, inplace_method, is_scalar, scalar_tensor


def _input(op: str, x, floating: bool) -> Tensor:
    check_tensor(op, x)
    if floating and not x._dtype.is_floating:
        return run_kernel(K.CAST, _real(op, x), dtype=get_default_dtype())
    return x


def _real(op: str, x: Tensor) -> Tensor:
    """``x``, refused when complex: an op that reaches here has no complex formula (a cast would drop the
    imaginary parts)."""
    if x._dtype.is_complex:
        raise NotImplementedError(f"{op}: not implemented for complex tensors (got {x._dtype.name})")
    return x


_BOOL_ERRORS = {"neg": RuntimeError, "relu": RuntimeError}   # PyTorch's, where not a dtype's TypeError
_BOOL_AS = {"sign": (K.IDENTITY, bool_), "square": (K.SQUARE, int64)}   # bool input: (kernel, as dtype), PyTorch's


def _numeric(op: str, x) -> Tensor:
    check_tensor(op, x)
    _real(op, x)
    if x._dtype is bool_:
        raise _BOOL_ERRORS.get(op, TypeError)(f"{op}: not supported for bool tensors (use logical_not, or cast "
                                              f"with .int() first)")
    return x


# the elementwise ops that take complex tensors (numpy's complex math on cpu; holomorphic but abs, whose
# rules give PyTorch's conjugate convention); the others refuse them with PyTorch's NotImplementedError
# (and sigmoid, silu: _COMPLEX_FORMS)
_COMPLEX = {"neg", "abs", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "square", "reciprocal",
            "sin", "cos", "tan", "tanh"}


def _complex_input(op: str, x) -> Tensor:
    return x if op in _COMPLEX else _real(op, x)


# complex forms composed of the complex kernels, where the real kernel's formula is real-only
_COMPLEX_FORMS = {
    "sigmoid": lambda z: run_kernel(K.RECIPROCAL, run_kernel(K.ADD, run_kernel(K.EXP, run_kernel(K.NEG, z)),
                                                             scalar_tensor(1, z._dtype, z._backend))),
    "silu": lambda z: run_kernel(K.MUL, z, _COMPLEX_FORMS["sigmoid"](z)),
}


def _unary(name: str, kernel: str, floating: bool, summary: str, example: str, result: str):
    """Make the op ``name`` running ``kernel`` (on a float32 copy of non-float input when ``floating``)."""
    def op(input):
        if type(input) is Tensor and input._dtype.is_floating:   # the common case, first
            return run_kernel(kernel, input)
        if isinstance(input, Tensor) and input._dtype.is_complex:   # (a Parameter too)
            form = _COMPLEX_FORMS.get(name)
            return form(input) if form else run_kernel(kernel, _complex_input(name, input))
        if name in _BOOL_AS and type(input) is Tensor and input._dtype is bool_:
            as_kernel, dtype = _BOOL_AS[name]
            return run_kernel(as_kernel, run_kernel(K.CAST, input, dtype=dtype) if dtype is not bool_ else input)
        return run_kernel(kernel, _input(name, input, floating) if floating else _numeric(name, input))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{summary}

    >>> import webgrad as wg
    >>> wg.{name}(wg.tensor({example})).tolist()
    {result}
    """
    return op


# name: (kernel, float math?, summary, example input, example output)
_TABLE = {
    "neg": (K.NEG, False, "``-input`` elementwise.", "[1, -2]", "[-1, 2]"),
    "abs": (K.ABS, False, "Absolute value.", "[-1.5, 2.0]", "[1.5, 2.0]"),
    "exp": (K.EXP, True, "``e ** input``.", "[0.0]", "[1.0]"),
    "log": (K.LOG, True, "Natural logarithm.", "[1.0]", "[0.0]"),
    "log2": (K.LOG2, True, "Base-2 logarithm (exact at powers of 2).", "[8.0, 0.5]", "[3.0, -1.0]"),
    "log10": (K.LOG10, True, "Base-10 logarithm.", "[100.0]", "[2.0]"),
    "log1p": (K.LOG1P, True, "``log(1 + input)``, accurate near 0.", "[0.0]", "[0.0]"),
    "expm1": (K.EXPM1, True, "``exp(input) - 1``, accurate near 0.", "[0.0]", "[0.0]"),
    "sqrt": (K.SQRT, True, "Square root.", "[4.0, 9]", "[2.0, 3.0]"),
    "rsqrt": (K.RSQRT, True, "``1 / sqrt(input)``.", "[4.0]", "[0.5]"),
    "square": (K.SQUARE, False, "``input * input``.", "[3, -2]", "[9, 4]"),
    "reciprocal": (K.RECIPROCAL, True, "``1 / input`` (float32 for integer input).", "[2, 4]", "[0.5, 0.25]"),
    "sin": (K.SIN, True, "Sine (radians).", "[0.0]", "[0.0]"),
    "cos": (K.COS, True, "Cosine (radians).", "[0.0]", "[1.0]"),
    "tan": (K.TAN, True, "Tangent (radians).", "[0.0]", "[0.0]"),
    "tanh": (K.TANH, True, "Hyperbolic tangent.", "[0.0]", "[0.0]"),
    "sigmoid": (K.SIGMOID, True, "The logistic function ``1 / (1 + exp(-input))``, computed stably.",
                "[0.0]", "[0.5]"),
    "relu": (K.RELU, False, "``max(input, 0)`` (keeps the dtype).", "[-1, 2]", "[0, 2]"),
    "silu": (K.SILU, True, "``input * sigmoid(input)`` (a.k.a. swish).", "[0.0]", "[0.0]"),
    "sign": (K.SIGN, False, "-1, 0 or 1 by the sign of each element.", "[-2.0, 0.0, 3.0]", "[-1.0, 0.0, 1.0]"),
    "floor": (K.FLOOR, False, "Round down.", "[1.5, -1.5]", "[1.0, -2.0]"),
    "ceil": (K.CEIL, False, "Round up.", "[1.5, -1.5]", "[2.0, -1.0]"),
    "erf": (K.ERF, True, "The error function.", "[0.0]", "[0.0]"),
}

for _name, _row in _TABLE.items():
    globals()[_name] = _unary(_name, *_row)


def round(input, *, decimals=0):
    """Round half to even (as numpy and PyTorch), optionally to ``decimals`` decimal places.

    >>> import webgrad as wg
    >>> wg.round(wg.tensor([0.5, 1.5, 2.5])).tolist()
    [0.0, 2.0, 2.0]
    >>> wg.round(wg.tensor([1.2345]), decimals=2).tolist()
    [1.2300000190734863]
    """
    x = _numeric("round", input)
    if decimals == 0:
        return run_kernel(K.ROUND, x)
    scale = 10.0 ** decimals
    return run_kernel(K.ROUND, x * scale) / scale


def leaky_relu(input, negative_slope=0.01):
    """``input`` where positive, else ``negative_slope * input``.

    >>> import webgrad as wg
    >>> wg.leaky_relu(wg.tensor([-1.0, 2.0]), 0.5).tolist()
    [-0.5, 2.0]
    """
    return run_kernel(K.LEAKY_RELU, _input("leaky_relu", input, True), negative_slope=float(negative_slope))


def elu(input, alpha=1.0):
    """``input`` where positive, else ``alpha * (exp(input) - 1)``.

    >>> import webgrad as wg
    >>> wg.elu(wg.tensor([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return run_kernel(K.ELU, _input("elu", input, True), alpha=float(alpha))


def gelu(input, approximate="none"):
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate='tanh'`` uses the tanh formula.

    >>> import webgrad as wg
    >>> wg.gelu(wg.tensor([0.0])).tolist()
    [0.0]
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return run_kernel(K.GELU, _input("gelu", input, True), approximate=approximate)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta``, and ``input`` itself where ``beta * input > threshold``.

    >>> import webgrad as wg
    >>> wg.softplus(wg.tensor([0.0, 30.0])).tolist()
    [0.6931471824645996, 30.0]
    """
    return run_kernel(K.SOFTPLUS, _input("softplus", input, True), beta=float(beta), threshold=float(threshold))


def clamp(input, min=None, max=None):
    """Limit values to [``min``, ``max``] (either may be None, a number, or a tensor that broadcasts
    with ``input``). With tensor bounds the gradient goes, as in PyTorch, to ``input`` where it lies
    within the bounds (inclusive), else to the bound that was taken (``max`` when ``min > max``).

    >>> import webgrad as wg
    >>> wg.clamp(wg.tensor([-2.0, 0.5, 3.0]), -1, 1).tolist()
    [-1.0, 0.5, 1.0]
    >>> wg.clamp(wg.tensor([1.0, 5.0]), max=wg.tensor([3.0, 4.0])).tolist()
    [1.0, 4.0]
    """
    x = _numeric("clamp", input)
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensors(x, min, max)
    dt = x._dtype
    for bound in (min, max):
        if bound is not None:
            if not is_scalar(bound):
                raise TypeError(f"clamp: min and max must be numbers, tensors or None, got {type(bound).__name__}")
            dt = promote(dt, promote_scalar(x._dtype, bound))
    if dt is not x._dtype:
        x = run_kernel(K.CAST, x, dtype=dt)
    kind = float if dt.is_floating else lambda v: int_fill(int(v), dt, "clamp")   # uint8's -5 is 251, as PyTorch's
    return run_kernel(K.CLAMP, x, min=None if min is None else kind(min), max=None if max is None else kind(max))


def _clamp_tensors(x, min, max):
    """``clamp`` with a tensor bound: where(x < min, min, x), then where(that > max, max, that),
    a NaN bound giving NaN, as PyTorch's."""
    from .binary import gt, logical_or, lt, ne, where
    for bound, beyond in ((min, lt), (max, gt)):
        if bound is None:
            continue
        taken = beyond(x, bound)
        if isinstance(bound, Tensor) and bound._dtype.is_floating:
            taken = logical_or(taken, ne(bound, bound))
        x = where(taken, bound, x)
    return x


def clamp_min(input, min):
    """``clamp(input, min=min)``.

    >>> import webgrad as wg
    >>> wg.clamp_min(wg.tensor([-1.0, 2.0]), 0).tolist()
    [0.0, 2.0]
    """
    return clamp(input, min=min)


def clamp_max(input, max):
    """``clamp(input, max=max)``.

    >>> import webgrad as wg
    >>> wg.clamp_max(wg.tensor([-1.0, 2.0]), 0).tolist()
    [-1.0, 0.0]
    """
    return clamp(input, max=max)


clip = clamp


def logical_not(input):
    """Elementwise NOT (nonzero is true), as a bool tensor.

    >>> import webgrad as wg
    >>> wg.logical_not(wg.tensor([0, 2])).tolist()
    [True, False]
    """
    return run_kernel(K.LOGICAL_NOT, check_tensor("logical_not", input))


def _cast_method(dtype):
    def method(self):
        return self.to(dtype)
    method.__doc__ = f"This tensor as {dtype.name} (itself when it already is)."
    return method


# ---------------------------------------------------------------- in-place


def clamp_(self, min=None, max=None):
    """In-place ``clamp``.

    >>> import webgrad as wg
    >>> wg.tensor([-2.0, 2.0]).clamp_(-1, 1).tolist()
    [-1.0, 1.0]
    """
    from .binary import inplace
    return inplace(self, "clamp_", clamp, min, max)


def fill_(self, value):
    """Set every element to ``value`` (a number or a one-element tensor, on any backend as PyTorch
    allows a CPU scalar for a CUDA tensor, which stays differentiable).

    >>> import webgrad as wg
    >>> wg.zeros(2).fill_(3).tolist()
    [3.0, 3.0]
    """
    return _fill(self, value, "fill_")


def _fill(self, value, op):
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"{op}: value must be a number or a one-element tensor, got shape {tuple(value.shape)}")
        new = run_kernel(K.RESHAPE, value.to(self._backend.name, self._dtype), shape=())   # a scalar: moved
    elif is_scalar(value):
        new = run_kernel(K.FILL, backend=self._backend, shape=tuple(self.shape), value=int_fill(value, self._dtype, op),
                         dtype=self._dtype)
    else:
        raise TypeError(f"{op}: value must be a number or a tensor, got {type(value).__name__}")
    return self._assign(new, op)


def zero_(self):
    """Set every element to zero (e.g. ``x.grad.zero_()``).

    >>> import webgrad as wg
    >>> wg.ones(2).zero_().tolist()
    [0.0, 0.0]
    """
    return _fill(self, 0, "zero_")


def copy_(self, other, non_blocking=False):
    """Copy ``other``'s values into this tensor (broadcasting; cast to this tensor's dtype and backend);
    PyTorch's documentation calls it ``src``, its argument parser ``other``.
    ``non_blocking`` is accepted without effect (copies are ordered anyway).

    >>> import webgrad as wg
    >>> wg.zeros(2, 2).copy_(wg.tensor([1, 2])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    check_tensor("copy_", other, "other")
    return self._assign(other.to(self._backend.name).to(self._dtype), "copy_")


_INPLACE = [name for name in _TABLE if name not in ("silu", "abs")] + ["round", "clamp_min", "clamp_max"]  # Tensor's

_abs_in_place = inplace_method("abs_", globals()["abs"])


def abs_(self) -> Tensor:
    """In-place ``abs`` (refused for a complex tensor, as PyTorch: the magnitudes are real).

    >>> import webgrad as wg
    >>> wg.tensor([-1.5, 2.0]).abs_().tolist()
    [1.5, 2.0]
    """
    if isinstance(self, Tensor) and self._dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return _abs_in_place(self)

METHODS = {name: globals()[name] for name in _TABLE}
METHODS.update({name + "_": inplace_method(name + "_", globals()[name]) for name in _INPLACE})
METHODS.update({
    "round": round, "leaky_relu": leaky_relu, "elu": elu, "gelu": gelu, "softplus": softplus, "clamp": clamp,
    "clip": clamp, "logical_not": logical_not, "negative": METHODS["neg"], "absolute": METHODS["abs"],
    "__neg__": METHODS["neg"], "__abs__": METHODS["abs"],
    "float": _cast_method(float32), "double": _cast_method(float64), "half": _cast_method(float16),
    "bfloat16": _cast_method(bfloat16), "int": _cast_method(int32), "long": _cast_method(int64),
    "byte": _cast_method(uint8), "char": _cast_method(int8), "short": _cast_method(int16), "bool": _cast_method(bool_), "cfloat": _cast_method(complex64), "cdouble": _cast_method(complex128),
    "clamp_": clamp_, "clip_": clamp_, "fill_": fill_, "zero_": zero_, "copy_": copy_, "clamp_min": clamp_min,
    "clamp_max": clamp_max, "negative_": METHODS["neg_"], "abs_": abs_, "absolute_": abs_,
})

negative, absolute = neg, abs  # noqa: F821  (made from _TABLE above)

__all__ = list(_TABLE) + ["round", "leaky_relu", "elu", "gelu", "softplus", "clamp", "clip", "clamp_min", "clamp_max",
                          "logical_not", "negative", "absolute"]
