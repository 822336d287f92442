"""Binary elementwise ops: arithmetic, comparisons, logic and ``where``, with numpy
broadcasting, Python scalars on either side and PyTorch's type promotion.
Also the in-place arithmetic methods (``add_``, ``x += y``, ...)."""
from __future__ import annotations

from .. import kernel_names as K
from ..dtypes import bfloat16, bool_, float16, float32, get_default_dtype, promote_tensors
from ..engine import _mode, run_kernel
from ..shapes import broadcast_shapes
from ..tensor import Tensor
from .common import binary_operands, check_tensor, is_scalar, scalar_tensor, scale_first
from .indexing import nonzero


_NUMBERS = (int, float)
# the binary ops that take complex tensors; PyTorch's errors for the others are NotImplementedError, but
# RuntimeError for maximum and minimum
_COMPLEX_OPS = {"add", "sub", "mul", "div", "pow", "eq", "ne", "logical_and", "logical_or", "logical_xor"}
_COMPLEX_ERRORS = {"maximum": RuntimeError, "minimum": RuntimeError}


def _operands(op: str, a, b, floating: bool = False):
    """Promote ``a`` and ``b`` to one dtype (float32 at least when ``floating``) and check that they broadcast."""
    if type(b) in _NUMBERS and type(a) is Tensor and a._dtype.is_floating:   # float tensor op number: the
        return a, scalar_tensor(b, a._dtype, a._backend)                       # tensor's dtype, 0-d broadcasts
    if type(a) in _NUMBERS and type(b) is Tensor and b._dtype.is_floating:
        return scalar_tensor(a, b._dtype, b._backend), b
    if type(a) is not Tensor or type(b) is not Tensor or a._dtype is not b._dtype:
        a, b = binary_operands(op, a, b)
    if a._dtype.is_complex and op not in _COMPLEX_OPS:
        raise _COMPLEX_ERRORS.get(op, NotImplementedError)(
            f"{op}: not implemented for complex tensors (got {a._dtype.name}); the binary ops that take them: "
            f"{', '.join(sorted(_COMPLEX_OPS))}")
    if floating and not a._dtype.differentiable:
        a, b = run_kernel(K.CAST, a, dtype=get_default_dtype()), run_kernel(K.CAST, b, dtype=get_default_dtype())
    sa, sb = a._data.shape, b._data.shape
    if sa != sb:
        broadcast_shapes(sa, sb, op=op)
    return a, b


def _opmath_scalar(a, b) -> bool:
    """Whether PyTorch computes ``a * b``, ``a / b`` and ``a // b`` in float32 with ``b`` unrounded: ``a`` a
    float16/bfloat16 tensor and ``b`` a Python number or a 0-d tensor (its "cpu scalar", read at its own
    precision by the kernel's float32 "opmath"), the result staying half."""
    if type(a) is not Tensor or (a._dtype is not float16 and a._dtype is not bfloat16):
        return False
    if type(b) in _NUMBERS:
        return True
    return (type(b) is Tensor and not b._data.shape and b._dtype is not a._dtype
            and promote_tensors(a._dtype, a.ndim, b._dtype, 0) is a._dtype)


def _in_float32(fn, a: Tensor, b, **kwargs) -> Tensor:
    """``fn(a, b)`` computed in float32 (``b`` a number, or a 0-d tensor taken to float32) and rounded once
    to ``a``'s half dtype, as PyTorch's opmath (see ``_opmath_scalar``)."""
    if type(b) is Tensor and b._dtype is not float32:
        b = run_kernel(K.CAST, b, dtype=float32)
    return run_kernel(K.CAST, fn(run_kernel(K.CAST, a, dtype=float32), b, **kwargs), dtype=a._dtype)


def _named(error: ValueError, op: str, a: Tensor, b: Tensor) -> ValueError:
    """The error to raise for ``error``, raised by a kernel of ``op`` on ``a`` and ``b``: ``op``'s own
    when their shapes do not broadcast (each backend's binary kernels raise ValueError then, so
    the fast paths of add, sub and mul leave the check to them), else ``error``."""
    try:
        broadcast_shapes(a.shape, b.shape, op=op)
    except ValueError as named:
        return named
    return error


def _binary(kernel: str, op: str, floating: bool = False):
    def fn(input, other):
        return run_kernel(kernel, *_operands(op, input, other, floating))
    return fn


def _scaled(op: str, other, alpha):
    if alpha == 1:
        return other
    if is_scalar(other):
        return other * alpha
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}: expected tensors or Python numbers, got {type(other).__name__}")
    return mul(other, alpha)


_ADD_FORM, _ADD_NOW = "Number alpha, Tensor other", "Tensor other, *, Number alpha = 1"


def add(input, other, *deprecated, alpha=1):
    """``input + alpha * other``, broadcasting; either side may be a Python number.

    >>> import webgrad as wg
    >>> wg.add(wg.tensor([1.0, 2.0]), 1, alpha=2).tolist()
    [3.0, 4.0]
    """
    if deprecated:
        (other,), alpha = scale_first("add", (other, *deprecated), _ADD_FORM, _ADD_NOW)
    if type(input) is Tensor and type(other) is Tensor and input._dtype is other._dtype and alpha == 1:  # fast path
        try:
            return run_kernel(K.ADD, input, other)
        except ValueError as error:
            raise _named(error, "add", input, other) from None
    return run_kernel(K.ADD, *_operands("add", input, other if alpha == 1 else _scaled("add", other, alpha)))


def _no_bool(op: str, operation: str, *operands):
    """PyTorch refuses ``-`` with a bool tensor or a Python bool (a mask is inverted with ``~``)."""
    if any(type(x) is bool or (type(x) is Tensor and x._dtype is bool_) for x in operands):
        raise RuntimeError(f"{op}: {operation} with a bool tensor is not supported; to invert a mask use "
                           f"`~` or logical_not(), for two masks `^` or logical_xor()")


def sub(input, other, *deprecated, alpha=1):
    """``input - alpha * other``, broadcasting; a bool operand is refused (RuntimeError), as in PyTorch.

    >>> import webgrad as wg
    >>> wg.sub(wg.tensor([3, 4]), 1).tolist()
    [2, 3]
    """
    if deprecated:
        (other,), alpha = scale_first("sub", (other, *deprecated), _ADD_FORM, _ADD_NOW)
    _no_bool("sub", "subtraction, the `-` operator,", input, other)
    if type(input) is Tensor and type(other) is Tensor and input._dtype is other._dtype and alpha == 1:  # fast path
        try:
            return run_kernel(K.SUB, input, other)
        except ValueError as error:
            raise _named(error, "sub", input, other) from None
    return run_kernel(K.SUB, *_operands("sub", input, other if alpha == 1 else _scaled("sub", other, alpha)))


def mul(input, other):
    """Elementwise product, broadcasting.

    >>> import webgrad as wg
    >>> (wg.tensor([[1.0], [2.0]]) * wg.tensor([1.0, 10.0])).tolist()
    [[1.0, 10.0], [2.0, 20.0]]
    """
    if type(input) is Tensor and type(other) is Tensor and input._dtype is other._dtype:   # the fast path
        try:
            return run_kernel(K.MUL, input, other)
        except ValueError as error:
            raise _named(error, "mul", input, other) from None
    if _opmath_scalar(input, other):
        return _in_float32(mul, input, other)
    if type(input) in _NUMBERS and _opmath_scalar(other, input):   # number * tensor: the number is operand 2
        return _in_float32(mul, other, input)
    return run_kernel(K.MUL, *_operands("mul", input, other))


def div(input, other, *, rounding_mode=None):
    """True division (ints give float32); ``rounding_mode`` 'floor' or 'trunc' rounds the quotient,
    keeping integer dtypes.

    >>> import webgrad as wg
    >>> wg.div(wg.tensor([1, 7]), 2).tolist()
    [0.5, 3.5]
    >>> wg.div(wg.tensor([-7, 7]), 2, rounding_mode="floor").tolist()
    [-4, 3]
    """
    if rounding_mode not in _ROUNDING:
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    if _opmath_scalar(input, other):
        return _in_float32(div, input, other, rounding_mode=rounding_mode)
    a, b = _operands("div" if rounding_mode is None else f"div (rounding_mode={rounding_mode!r})", input, other)
    if rounding_mode == "floor":
        return run_kernel(K.FLOOR_DIVIDE, a, b)
    if rounding_mode == "trunc" and a._dtype.kind == "i":   # exact (no float quotient), 0 raising as //
        return run_kernel(K.FLOOR_DIVIDE, run_kernel(K.SUB, a, run_kernel(K.FMOD, a, b)), b)
    q = run_kernel(K.DIV, *_operands("div", a, b, floating=True))
    if rounding_mode is None:
        return q
    q = _ROUNDING[rounding_mode](q)
    return q if a._dtype.is_floating else run_kernel(K.CAST, q, dtype=a._dtype)


def _trunc(q):
    from .unary import ceil, floor
    return where(q < 0, ceil(q), floor(q))


_ROUNDING = {None: None, "trunc": _trunc, "floor": None}


def floor_divide(input, other):
    """``input // other``: division rounded down (integer dtypes stay integer).

    >>> import webgrad as wg
    >>> (wg.tensor([7, -7]) // 2).tolist()
    [3, -4]
    """
    return div(input, other, rounding_mode="floor")


def remainder(input, other):
    """``input % other`` with the sign of ``other`` (Python's and PyTorch's ``%``).

    >>> import webgrad as wg
    >>> (wg.tensor([7, -7]) % 3).tolist()
    [1, 2]
    """
    return run_kernel(K.REMAINDER, *_operands("remainder", input, other))


def pow(input, exponent):
    """``input ** exponent``, broadcasting (int ** int stays int).

    >>> import webgrad as wg
    >>> (wg.tensor([1.0, 2.0, 3.0]) ** 2).tolist()
    [1.0, 4.0, 9.0]
    >>> (2 ** wg.tensor([1.0, 3.0])).tolist()
    [2.0, 8.0]
    """
    a, b = _operands("pow", input, exponent)
    if a._dtype.kind in "ib" and is_scalar(exponent) and exponent < 0:   # PyTorch's RuntimeError
        raise RuntimeError(f"pow: integers to negative integer powers are not allowed (got {a._dtype.name} ** "
                           f"{exponent}); use a float base")
    return run_kernel(K.POW, a, b)


maximum = _binary(K.MAXIMUM, "maximum")
maximum.__name__ = "maximum"
maximum.__doc__ = """Elementwise maximum, broadcasting (ties share the gradient half and half).

    >>> import webgrad as wg
    >>> wg.maximum(wg.tensor([1.0, 5.0]), 3).tolist()
    [3.0, 5.0]
    """

minimum = _binary(K.MINIMUM, "minimum")
minimum.__name__ = "minimum"
minimum.__doc__ = """Elementwise minimum, broadcasting.

    >>> import webgrad as wg
    >>> wg.minimum(wg.tensor([1.0, 5.0]), 3).tolist()
    [1.0, 3.0]
    """

atan2 = _binary(K.ATAN2, "atan2", floating=True)
atan2.__name__ = "atan2"
atan2.__doc__ = """The angle of the point (``other``, ``input``): ``atan(input / other)`` in the right quadrant.

    >>> import webgrad as wg
    >>> round(wg.atan2(wg.tensor(1.0), wg.tensor(-1.0)).item(), 4)
    2.3562
    """


def _predicate(kernel: str, op: str, doc: str):
    fn = _binary(kernel, op)
    fn.__name__, fn.__doc__ = op, doc
    return fn


eq = _predicate(K.EQUAL, "eq", """``input == other`` elementwise, as a bool tensor.

    >>> import webgrad as wg
    >>> (wg.tensor([1, 2]) == 2).tolist()
    [False, True]
    """)
ne = _predicate(K.NOT_EQUAL, "ne", """``input != other`` elementwise, as a bool tensor.

    >>> import webgrad as wg
    >>> (wg.tensor([1, 2]) != 2).tolist()
    [True, False]
    """)
lt = _predicate(K.LESS, "lt", """``input < other`` elementwise, as a bool tensor.

    >>> import webgrad as wg
    >>> (wg.tensor([1, 2]) < 2).tolist()
    [True, False]
    """)
le = _predicate(K.LESS_EQUAL, "le", """``input <= other`` elementwise, as a bool tensor.

    >>> import webgrad as wg
    >>> (wg.tensor([1, 2]) <= 2).tolist()
    [True, True]
    """)
gt = _predicate(K.GREATER, "gt", """``input > other`` elementwise, as a bool tensor.

    >>> import webgrad as wg
    >>> (wg.tensor([1, 2]) > 1.5).tolist()
    [False, True]
    """)
ge = _predicate(K.GREATER_EQUAL, "ge", """``input >= other`` elementwise, as a bool tensor.

    >>> import webgrad as wg
    >>> (wg.tensor([1, 2]) >= 2).tolist()
    [False, True]
    """)
logical_and = _predicate(K.LOGICAL_AND, "logical_and", """Elementwise logical AND (nonzero is true), as bool.

    >>> import webgrad as wg
    >>> wg.logical_and(wg.tensor([True, True]), wg.tensor([True, False])).tolist()
    [True, False]
    """)
logical_or = _predicate(K.LOGICAL_OR, "logical_or", """Elementwise logical OR (nonzero is true), as bool.

    >>> import webgrad as wg
    >>> wg.logical_or(wg.tensor([0, 0]), wg.tensor([0, 3])).tolist()
    [False, True]
    """)
logical_xor = _predicate(K.LOGICAL_XOR, "logical_xor", """Elementwise logical XOR (nonzero is true), as bool.

    >>> import webgrad as wg
    >>> wg.logical_xor(wg.tensor([True, True]), wg.tensor([True, False])).tolist()
    [False, True]
    """)


def where(condition, input=None, other=None):
    """Pick ``input`` where ``condition`` is true, else ``other`` (either may be a Python number), broadcasting.
    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``, as in PyTorch.

    >>> import webgrad as wg
    >>> x = wg.tensor([-1.0, 2.0])
    >>> wg.where(x > 0, x, 0.0).tolist()
    [0.0, 2.0]
    >>> [t.tolist() for t in wg.where(x > 0)]
    [[1]]
    """
    if input is None and other is None:
        return nonzero(check_tensor("where", condition, "condition"), as_tuple=True)
    if input is None or other is None:
        raise TypeError("where: expected both input and other, or neither (where(condition) is "
                        "nonzero(condition, as_tuple=True))")
    check_tensor("where", condition, "condition")
    if condition._dtype is not bool_:
        raise TypeError(f"where: condition must be a bool tensor, got {condition._dtype.name}")
    if is_scalar(input) and is_scalar(other):
        input = scalar_tensor(input, _scalar_pair_dtype(input, other), condition._backend)
    a, b = binary_operands("where", input, other)
    broadcast_shapes(condition.shape, a.shape, b.shape, op="where")
    return run_kernel(K.WHERE, condition, a, b)


def _scalar_pair_dtype(a, b):
    from ..dtypes import promote, scalar_dtype
    return promote(scalar_dtype(a), scalar_dtype(b))


# ---------------------------------------------------------------- in-place


def inplace(self: Tensor, name: str, fn, *args, **kwargs) -> Tensor:
    """Compute ``fn(self, *args, **kwargs)`` out of place and write it into ``self`` (op ``name``).

    When the op is recorded, the computation reads an alias of ``self``, so the value it saves for
    backward is the old one and this very op does not trip the version check."""
    if not (_mode.enabled and (self.requires_grad or any(type(a) is Tensor and a.requires_grad for a in args))):
        return self._assign(fn(self, *args, **kwargs), name)
    src = self._alias()   # stands in for self among the arguments too
    return self._assign(fn(src, *[src if a is self else a for a in args], **kwargs), name)


def add_(self, other, *deprecated, alpha=1):
    """In-place ``self += alpha * other``.

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 2.0]).add_(1).tolist()
    [2.0, 3.0]
    """
    return inplace(self, "add_", add, other, *deprecated, alpha=alpha)


def sub_(self, other, *deprecated, alpha=1):
    """In-place ``self -= alpha * other``.

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 2.0]).sub_(1).tolist()
    [0.0, 1.0]
    """
    return inplace(self, "sub_", sub, other, *deprecated, alpha=alpha)


def mul_(self, other):
    """In-place ``self *= other``.

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 2.0]).mul_(3).tolist()
    [3.0, 6.0]
    """
    return inplace(self, "mul_", mul, other)


def div_(self, other, *, rounding_mode=None):
    """In-place ``self /= other`` (an int tensor refuses a float result, as in PyTorch).

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 2.0]).div_(2).tolist()
    [0.5, 1.0]
    """
    return inplace(self, "div_", div, other, rounding_mode=rounding_mode)


def pow_(self, exponent):
    """In-place ``self **= exponent``.

    >>> import webgrad as wg
    >>> wg.tensor([2.0, 3.0]).pow_(2).tolist()
    [4.0, 9.0]
    """
    return inplace(self, "pow_", pow, exponent)


def _reflected(fn):
    return lambda self, other: fn(other, self)


def _rtruediv(self, other):
    """``other / self``: for a float16/bfloat16 ``self`` and a Python number, PyTorch's
    ``reciprocal(self) * other`` (the number unrounded, see ``_opmath_scalar``)."""
    if type(other) in _NUMBERS and _opmath_scalar(self, other):
        return mul(run_kernel(K.RECIPROCAL, self), other)
    return div(other, self)


def _equality(fn):
    """``==``/``!=`` give NotImplemented for non-numbers, so Python falls back to identity (``t == None``)."""
    return lambda self, other: fn(self, other) if isinstance(other, Tensor) or is_scalar(other) else NotImplemented


METHODS = {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div, "divide": div,
    "true_divide": div, "floor_divide": floor_divide, "remainder": remainder, "pow": pow,
    "maximum": maximum, "minimum": minimum, "atan2": atan2, "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt,
    "ge": ge, "logical_and": logical_and, "logical_or": logical_or, "logical_xor": logical_xor,
    "where": lambda self, condition, other: where(condition, self, other),
    "__add__": add, "__radd__": _reflected(add), "__sub__": sub, "__rsub__": _reflected(sub),
    "__mul__": mul, "__rmul__": _reflected(mul), "__truediv__": div, "__rtruediv__": _rtruediv,
    "__floordiv__": floor_divide, "__rfloordiv__": _reflected(floor_divide),
    "__mod__": remainder, "__rmod__": _reflected(remainder),
    "__pow__": pow, "__rpow__": _reflected(pow),
    "__eq__": _equality(eq), "__ne__": _equality(ne), "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
    "add_": add_, "sub_": sub_, "mul_": mul_, "div_": div_, "pow_": pow_,
    "__iadd__": add_, "__isub__": sub_, "__imul__": mul_, "__itruediv__": div_, "__ipow__": pow_,
}

__all__ = ["add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "maximum", "minimum", "atan2",
           "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "where"]
