"""cpu elementwise kernels: one numpy expression per kernel, registered from tables
(Gelu and its gradient are in gelu.py)."""
import numpy as np

from webgrad import kernel_names as K

from .backend_dtypes import NP_DTYPES, np_dtype
from webgrad.dtypes import bfloat16
from .erf import erf
from .registry import register_table


# PyTorch's CPU pow takes these float exponents by arithmetic (its pow_tensor_scalar_optimized_kernel);
# so do we, for its numbers, and because numpy's power loop takes ~100 ns an element for a negative base
# to an integral power (x ** 3 on 0.5 M elements: 60 ms, against 1 ms multiplied out).
_POW_BY_ARITHMETIC = {
    2.0: lambda x, out: np.multiply(x, x, out=out),
    3.0: lambda x, out: np.multiply(x * x, x, out=out),
    0.5: lambda x, out: np.sqrt(x, out=out),
    -0.5: lambda x, out: np.divide(1, np.sqrt(x), out=out),
    -1.0: lambda x, out: np.divide(1, x, out=out),
    -2.0: lambda x, out: np.divide(1, x * x, out=out),
}


_BFLOAT16 = NP_DTYPES.get(bfloat16)


def _integer_pow(x, y):
    """An integer (or bool) ``x ** y`` with negative exponents among ``y``: PyTorch's 0, or +-1 for a base
    of +-1, where numpy raises (the GPU's ``ipow_`` does the same)."""
    negative = y < 0
    out = np.power(x, np.where(negative, 0, y).astype(y.dtype))
    one = np.where(x == -1, 1 - 2 * (y & 1), (x == 1).astype(out.dtype))
    return np.where(negative, one, out).astype(out.dtype)


def _pow(x, y, out=None):
    """np.power, with a float base to one of PyTorch's special scalar exponents computed as PyTorch does,
    and an integer base to a negative power as PyTorch's (``_integer_pow``)."""
    if x.dtype.kind in "iub" and np.any(y < 0):
        return _integer_pow(x, y)
    by_arithmetic = _POW_BY_ARITHMETIC.get(float(y)) if y.ndim == 0 and x.dtype.kind == "f" else None
    if y.ndim == 0 and x.dtype == _BFLOAT16 and float(y) in (3.0, -2.0):   # PyTorch's bfloat16 rounds x * x first
        return _POW_BY_ARITHMETIC[float(y)](x, None)
    if by_arithmetic is None:
        return np.power(x, y, out=out)
    if x.dtype == np.float16:   # PyTorch's float16 takes these in float32, rounded once (its bfloat16 rounds each step)
        return by_arithmetic(x.astype(np.float32), None).astype(np.float16)
    return by_arithmetic(x, out)


def _softplus(x, *, beta, threshold):
    bx = beta * x
    return np.where(bx > threshold, x, np.logaddexp(0, bx) / beta)


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _clamp(x, *, min, max):
    if min is not None:
        x = np.maximum(x, np.asarray(min, dtype=x.dtype))
    if max is not None:
        x = np.minimum(x, np.asarray(max, dtype=x.dtype))
    return x


_ZERO = {t: np.zeros((), t) for t in NP_DTYPES.values()}   # 0-d, per dtype


def _sign(x):
    """torch.sign: -1, 0 or 1, and +0.0 for NaN and -0.0 (numpy's are NaN and -0.0), as the GPU's."""
    s = np.sign(x)
    return s if x.dtype.kind in "iu" else np.where((s != s) | (s == 0), _ZERO[s.dtype], s)


def _in_float64(fn, x):
    """``fn`` computed in float64 and rounded to ``x``'s dtype: numpy's float32 log10 is off by an ulp
    at exact powers (log10(1000) = 3.0000002), PyTorch's is not."""
    if x.dtype == np.float64 or x.dtype == np.complex128:
        return fn(x)
    return fn(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)).astype(x.dtype)


UNARY = {
    K.NEG: np.negative, K.ABS: np.abs, K.EXP: np.exp, K.LOG: np.log, K.LOG1P: np.log1p, K.EXPM1: np.expm1,
    K.LOG2: np.log2, K.LOG10: lambda x: _in_float64(np.log10, x),
    K.SQRT: np.sqrt, K.RSQRT: lambda x: 1 / np.sqrt(x), K.SQUARE: np.square, K.RECIPROCAL: lambda x: 1 / x,
    K.SIN: np.sin, K.COS: np.cos, K.TAN: np.tan, K.TANH: np.tanh, K.SIGMOID: _sigmoid,
    K.RELU: lambda x: np.maximum(x, _ZERO[x.dtype]),
    K.LEAKY_RELU: lambda x, *, negative_slope: np.where(x > 0, x, x * negative_slope),
    K.ELU: lambda x, *, alpha: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))),
    K.SILU: lambda x: x * _sigmoid(x), K.SOFTPLUS: _softplus, K.SIGN: _sign,
    K.FLOOR: np.floor, K.CEIL: np.ceil, K.ROUND: np.round, K.ERF: erf,
    K.CLAMP: _clamp, K.IDENTITY: np.copy, K.BITWISE_NOT: np.invert,
}

UNARY_WITH_ATTRS = {K.LEAKY_RELU, K.ELU, K.SOFTPLUS, K.CLAMP}

def _no_integer_zero(name, a, b):
    """PyTorch's CPU raises for an integer divided by zero (an empty result divides nothing)."""
    if b.dtype.kind in "iu" and not np.all(b) and a.size and 0 not in np.broadcast_shapes(a.shape, b.shape):
        raise RuntimeError(f"{name}: ZeroDivisionError (an integer divided by zero)")


def _floor_divide(a, b):
    """PyTorch's ``a // b``: numpy's for integers; for floats from fmod, so that it is exact near
    integers (``1.0 // 0.1`` is 9.0, as Python's), ``a / b`` when b is 0."""
    _no_integer_zero(K.FLOOR_DIVIDE, a, b)
    if a.dtype.kind in "iub":   # (bfloat16's kind is "V")
        return np.floor_divide(a, b)
    mod = np.fmod(a, b)
    div = (a - mod) / b
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    down = np.floor(div)
    down = np.where(div - down > 0.5, down + 1, down)
    out = np.where(div != 0, down, np.copysign(np.zeros((), a.dtype), a / b))
    return np.where(b == 0, a / b, out)


def _remainder(a, b):
    """PyTorch's ``a % b`` (the sign of b): numpy's for integers, from fmod for floats."""
    _no_integer_zero(K.REMAINDER, a, b)
    if a.dtype.kind in "iub":   # (bfloat16's kind is "V")
        return np.remainder(a, b)
    mod = np.fmod(a, b)
    return np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _fmod(a, b):
    """C's ``fmod`` (the sign of a), as ``torch.fmod``."""
    _no_integer_zero(K.FMOD, a, b)
    return np.fmod(a, b)


def _left_shift(a, b):
    """PyTorch's ``a << b``: 0 where ``b`` is negative or not below the bit width (numpy's is undefined there)."""
    inside = (b >= 0) & (b < 8 * a.dtype.itemsize)
    return np.where(inside, np.left_shift(a, np.where(inside, b, 0)), _ZERO[a.dtype])


def _right_shift(a, b):
    """PyTorch's arithmetic ``a >> b``: a shift outside [0, bit width) fills with a's sign."""
    width = 8 * a.dtype.itemsize
    return np.right_shift(a, np.where((b < 0) | (b >= width), width - 1, b))


BINARY = {
    K.ADD: np.add, K.SUB: np.subtract, K.MUL: np.multiply, K.DIV: np.true_divide, K.POW: _pow,
    K.MAXIMUM: np.maximum, K.MINIMUM: np.minimum, K.ATAN2: np.arctan2, K.FLOOR_DIVIDE: _floor_divide,
    K.REMAINDER: _remainder, K.FMOD: _fmod, K.BITWISE_AND: np.bitwise_and, K.BITWISE_OR: np.bitwise_or,
    K.BITWISE_XOR: np.bitwise_xor, K.LEFT_SHIFT: _left_shift, K.RIGHT_SHIFT: _right_shift,
}

PREDICATES = {
    K.EQUAL: np.equal, K.NOT_EQUAL: np.not_equal, K.LESS: np.less, K.LESS_EQUAL: np.less_equal,
    K.GREATER: np.greater, K.GREATER_EQUAL: np.greater_equal, K.LOGICAL_AND: np.logical_and,
    K.LOGICAL_OR: np.logical_or, K.LOGICAL_XOR: np.logical_xor,
}


try:  # numpy >= 2 keeps its error state in a context variable: setting it directly is ~1 µs cheaper per call
    from numpy._core._ufunc_config import _extobj_contextvar
    with np.errstate(all="ignore"):
        _IGNORE = _extobj_contextvar.get()
except ImportError:  # numpy 1.x
    _extobj_contextvar = None


class _Quiet:
    """``quiet_scope``'s context on numpy >= 2."""
    __slots__ = ("token",)

    def __enter__(self):
        self.token = _extobj_contextvar.set(_IGNORE)
        return self

    def __exit__(self, *exc):
        _extobj_contextvar.reset(self.token)
        return False


def quiet_scope():
    """A context with numpy's floating-point warnings off, as ``np.errstate(all="ignore")`` gives
    (on numpy >= 2 it sets numpy's error state directly, a tenth of np.errstate's cost).

    >>> with quiet_scope():
    ...     float(np.float32(1) / np.float32(0))
    inf
    """
    return _Quiet() if _extobj_contextvar is not None else np.errstate(all="ignore")


def _quiet(fn):
    """Run ``fn`` with numpy's floating-point warnings off: inf and nan are results here, as in PyTorch."""
    if _extobj_contextvar is None:
        def run(*args, **attrs):
            with np.errstate(all="ignore"):
                return fn(*args, **attrs)
        return run
    set_state, reset_state = _extobj_contextvar.set, _extobj_contextvar.reset

    def run(*args, **attrs):
        token = set_state(_IGNORE)
        try:
            return fn(*args, **attrs)
        finally:
            reset_state(token)
    return run


def _typed(fn, dtype=None, arrays=None):
    """``fn`` run quietly, with its result made an array of ``dtype`` (the first input's when None:
    numpy widens scalars and ints, and returns numpy scalars for 0-d results). ``arrays`` (1 or 2):
    ``fn`` takes exactly that many arrays and no attrs, and the wrapper is the leaner for it (it runs
    once per elementwise kernel call, which on tiny tensors is mostly this overhead)."""
    ndarray, asarray = np.ndarray, np.asarray
    if _extobj_contextvar is None:
        quiet = _quiet(fn)

        def run(x, *rest, **attrs):
            out = quiet(x, *rest, **attrs)
            dt = x.dtype if dtype is None else dtype
            return out if type(out) is ndarray and out.dtype is dt else asarray(out, dtype=dt)
        return run
    set_state, reset_state = _extobj_contextvar.set, _extobj_contextvar.reset   # _quiet, inlined

    if arrays == 1:
        def run(x):
            token = set_state(_IGNORE)
            try:
                out = fn(x)
            finally:
                reset_state(token)
            dt = x.dtype if dtype is None else dtype
            return out if type(out) is ndarray and out.dtype is dt else asarray(out, dtype=dt)
        return run
    if arrays == 2 and dtype is None:
        def run(x, y):   # an arithmetic kernel: it may write into a donated first input
            into = x if x is _donated[0] and _can_hold(x, y) else None
            token = set_state(_IGNORE)
            try:
                out = fn(x, y) if into is None else fn(x, y, out=into)
            finally:
                reset_state(token)
            return out if type(out) is ndarray and out.dtype is x.dtype else asarray(out, dtype=x.dtype)
        return run
    if arrays == 2:
        def run(x, y):   # a predicate
            token = set_state(_IGNORE)
            try:
                out = fn(x, y)
            finally:
                reset_state(token)
            return out if type(out) is ndarray and out.dtype is dtype else asarray(out, dtype=dtype)
        return run

    def run(x, *rest, **attrs):
        token = set_state(_IGNORE)
        try:
            out = fn(x, *rest, **attrs)
        finally:
            reset_state(token)
        dt = x.dtype if dtype is None else dtype
        return out if type(out) is ndarray and out.dtype is dt else asarray(out, dtype=dt)
    return run


_donated = [None]   # the array its caller gave up (CpuBackend.donate), while its donation is active


class Donation:
    """While active, the next arithmetic kernel whose first input is ``data`` may write its result
    there (see ``_can_hold``). Its maker declares ``data`` dead after that one kernel."""

    def __init__(self, data):
        self.data = data

    def __enter__(self):
        _donated[0] = self.data

    def __exit__(self, *exc):
        _donated[0] = None


def _can_hold(x, y) -> bool:
    """Whether the donated ``x`` can take the result of an arithmetic kernel on (x, y): its own
    writable float memory, of the result's shape and dtype. The donation is used up either way."""
    _donated[0] = None   # one kernel only
    flags = x.flags if type(x) is np.ndarray else None
    return (flags is not None and flags.owndata and flags.writeable and x.dtype.kind == "f"
            and y.dtype == x.dtype and (y.shape == x.shape or np.broadcast_shapes(x.shape, y.shape) == x.shape))


_BOOL = np.dtype(np.bool_)
_SAME_WIDTH_INT = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
_BITWISE_MIN = 1024   # below this np.where's per-call overhead is the cost; above, its branches are


def _where(c, a, b):
    """``np.where(c, a, b)`` as a's dtype. On large float inputs the choice is made on the bits
    (``a & m | b & ~m`` with ``m`` all ones where ``c``; a product with ``c`` when ``b`` is a 0-d
    zero): np.where branches per element and costs ~5 ns an element on a random mask (a ReLU's),
    the bitwise select ~1. Bit-exact either way, NaN and inf included."""
    it = _SAME_WIDTH_INT.get(a.dtype.itemsize) if a.dtype.kind == "f" else None
    if it is None or max(a.size, b.size, c.size) < _BITWISE_MIN:
        return np.asarray(np.where(c, a, b), dtype=a.dtype)
    ai, bi = a.view(it), b.view(it)
    if b.ndim == 0 and not bi:
        return np.multiply(ai, c, dtype=it).view(a.dtype)
    if a.ndim == 0 and not ai:
        return np.multiply(bi, np.logical_not(c), dtype=it).view(a.dtype)
    m = np.negative(c, dtype=it)
    return np.bitwise_or(np.bitwise_and(ai, m), np.bitwise_and(bi, np.invert(m))).view(a.dtype)


def _cast(x, *, dtype):
    """``x`` as ``dtype``; complex to real keeps the real part (the op warns, as PyTorch's; numpy's
    own ComplexWarning would name numpy)."""
    x = np.asarray(x)
    target = np_dtype(dtype)
    return (x.real if x.dtype.kind == "c" and target.kind != "c" else x).astype(target)


def _abs(typed):
    """``abs``: the float magnitude of complex input (numpy's hypot), else ``typed`` (the dtype kept)."""
    return lambda x: np.asarray(np.abs(x)) if x.dtype.kind == "c" else typed(x)


register_table({name: _typed(fn, arrays=None if name in UNARY_WITH_ATTRS else 1) for name, fn in UNARY.items()
                if name != K.ABS})
register_table({K.ABS: _abs(_typed(np.abs, arrays=1))})
register_table({name: _typed(fn, arrays=2) for name, fn in BINARY.items()})
register_table({name: _typed(fn, _BOOL, arrays=2) for name, fn in PREDICATES.items()})
register_table({
    K.LOGICAL_NOT: _typed(np.logical_not, _BOOL),
    K.CAST: _quiet(_cast),
    K.WHERE: _where,
})
