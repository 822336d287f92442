"""Reduction ops: sums, products, extrema, arg-extrema, logic, moments, norms, cumulative sums.

Every reduction takes ``dim`` as None (all dims), an int or a tuple of ints (negative
allowed) and ``keepdim``; integer and bool sums and products give int64, as in PyTorch.
The kernels are Sum, Prod, Max, Min, All, Any, ArgMax, ArgMin and Cumsum; mean, var, std,
logsumexp, norm and amax/amin are compositions of them and elementwise kernels.
"""
from __future__ import annotations

import math
from functools import partial, wraps

from .. import kernel_names as K, return_types
from ..dtypes import bool_, default_int, get_default_dtype, to_dtype
from ..engine import no_grad, record_function, run_kernel
from ..shapes import normalize_axes, normalize_axis, numel, reduced_shape
from ..tensor import Tensor
from . import binary
from .movement import cat, narrow, pad
from .common import check_tensor, real_only, scalar_tensor
from ..node_names import labelled


# ---------------------------------------------------------------- helpers

def _axes(x, dim, op) -> tuple:
    """Normalised reduction axes; None or () means every dim; a 0-d tensor has none."""
    check_tensor(op, x)
    ndim = len(x._data.shape)
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(ndim))
    axes = normalize_axes(dim, ndim, op)   # on a 0-d tensor, dim 0 or -1 is allowed and names no axis
    return axes if ndim else ()


def _cast(x, dtype):
    return x if x._dtype is dtype else run_kernel(K.CAST, x, dtype=dtype)


def _accumulating(x, dtype):
    """The dtype sums and products run in: ``dtype`` if given, else int64 for ints and bools."""
    if dtype is not None:
        return _cast(x, to_dtype(dtype))
    return x if x._dtype.differentiable else _cast(x, default_int)


def _count(x, axes) -> int:
    return numel(x.shape[a] for a in axes)


def _nonempty(x, axes, op):
    if not x.numel() and not axes:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                           f"Specify the reduction dim with the 'dim' argument.")
    for a in axes:
        if x.shape[a] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {a} to have non-zero size "
                             f"(input shape {tuple(x.shape)})")


def _named_axes(dim, axes) -> tuple:
    """The axes ``dim`` names: none for None or () (every dim: an empty tensor's error then asks for a dim)."""
    return () if dim is None or (isinstance(dim, (tuple, list)) and not dim) else axes


def _float_only(x, op, what):
    if not x._dtype.differentiable:   # floating or complex (PyTorch's RuntimeError)
        raise RuntimeError(f"{op}(): {what}. Got: {x._dtype.name}")


def _scalar(value, like):
    return scalar_tensor(value, like._dtype, like._backend)


def _squeeze(x, axes, t, keepdim):
    """``t`` (reduced with keepdim) reshaped to the shape the reduction asked for."""
    return t if keepdim else run_kernel(K.RESHAPE, t, shape=reduced_shape(x.shape, axes, False))


# ---------------------------------------------------------------- sums and products

def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001  (torch.sum)
    """Sum over ``dim`` (all dims by default). Ints and bools sum to int64.

    >>> import webgrad as wg
    >>> wg.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(0).tolist()
    [4.0, 6.0]
    >>> wg.tensor([True, True, False]).sum().item()
    2
    """
    axes = _axes(input, dim, "sum")
    return run_kernel(K.SUM, _accumulating(input, dtype), axes=axes, keepdim=bool(keepdim))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim`` (all dims by default); floating tensors only, as in PyTorch.

    >>> import webgrad as wg
    >>> wg.tensor([[1.0, 2.0], [3.0, 4.0]]).mean(1).tolist()
    [1.5, 3.5]
    """
    check_tensor("mean", input)
    input = _cast(input, to_dtype(dtype)) if dtype is not None else input
    _float_only(input, "mean", "could not infer output dtype. Input dtype must be either a floating point or "
                               "complex dtype")
    axes = _axes(input, dim, "mean")
    return labelled(_mean(input, axes, bool(keepdim)), "MeanBackward0" if dim is None else "MeanBackward1")


def _mean(x, axes, keepdim):
    s = run_kernel(K.SUM, x, axes=axes, keepdim=keepdim)
    return run_kernel(K.DIV, s, _scalar(float(_count(x, axes)), s))


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over ``dim`` (all dims by default). Ints and bools multiply in int64.

    >>> import webgrad as wg
    >>> wg.tensor([[1.0, 2.0], [3.0, 4.0]]).prod(1).tolist()
    [2.0, 12.0]
    """
    axes = _axes(input, dim, "prod")
    x = _accumulating(input, dtype)
    if dim is not None and not keepdim and x.ndim == 1:   # kept apart from the whole product: their gradients
        return run_kernel(K.RESHAPE, run_kernel(K.PROD, x, axes=axes, keepdim=True), shape=())   # differ
    return run_kernel(K.PROD, x, axes=axes, keepdim=bool(keepdim))


def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim``. Ints and bools accumulate in int64.

    >>> import webgrad as wg
    >>> wg.tensor([1, 2, 3]).cumsum(0).tolist()
    [1, 3, 6]
    """
    check_tensor("cumsum", input)
    axis = normalize_axis(dim, input.ndim, "cumsum")
    input = _accumulating(input, dtype)
    if input.ndim:
        return run_kernel(K.CUMSUM, input, axis=axis)
    return run_kernel(K.RESHAPE, run_kernel(K.CUMSUM, run_kernel(K.RESHAPE, input, shape=(1,)), axis=0), shape=())


def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim`` (ints and bools in int64), as ``log2(n)`` rounds of products
    of shifted copies (Hillis-Steele): exact with zeros, and differentiable through them.

    >>> import webgrad as wg
    >>> wg.tensor([1, 2, 3, 0, 5]).cumprod(0).tolist()
    [1, 2, 6, 0, 0]
    """
    check_tensor("cumprod", input)
    axis = normalize_axis(dim, input.ndim, "cumprod")
    x = _accumulating(input, dtype)
    if not x.ndim:
        return run_kernel(K.IDENTITY, x)
    n, step = x.shape[axis], 1
    while step < n:   # x[i] *= x[i - step], 1 before the start
        lead = (0, 0) * (x.ndim - 1 - axis) + (step, 0)
        x = run_kernel(K.MUL, x, pad(narrow(x, axis, 0, n - step), lead, value=1))
        step *= 2
    return x


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i + 1] - x[i]``, XOR for bools),
    after joining ``prepend`` and ``append`` to ``input`` along ``dim``.

    >>> import webgrad as wg
    >>> wg.diff(wg.tensor([1, 4, 9, 16])).tolist(), wg.diff(wg.tensor([1, 4, 9, 16]), n=2).tolist()
    ([3, 5, 7], [2, 2])
    """
    check_tensor("diff", input)
    if not input.ndim:
        raise RuntimeError("diff: expects input to be at least one-dimensional")
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"diff: order n must be a non-negative int, got {n!r}")
    axis = normalize_axis(dim, input.ndim, "diff")
    x = cat([t for t in (prepend, input, append) if t is not None], axis)
    subtract = binary.ne if x._dtype.kind == "b" else binary.sub
    for _ in range(n):
        length = x.shape[axis] - 1
        if length <= 0:
            return narrow(x, axis, 0, 0)
        x = subtract(narrow(x, axis, 1, length), narrow(x, axis, 0, length))
    return x


# ---------------------------------------------------------------- extrema

def amax(input, dim=(), keepdim=False):
    """Largest value over ``dim`` (an int or tuple; all dims by default). Its gradient is split
    evenly among tied maxima.

    >>> import webgrad as wg
    >>> wg.tensor([[1.0, 5.0], [3.0, 4.0]]).amax(1).tolist()
    [5.0, 4.0]
    """
    axes = _axes(input, dim, "amax")
    _nonempty(input, _named_axes(dim, axes), "amax")
    return run_kernel(K.MAX, input, axes=axes, keepdim=bool(keepdim))


def amin(input, dim=(), keepdim=False):
    """Smallest value over ``dim`` (an int or tuple; all dims by default).

    >>> import webgrad as wg
    >>> wg.tensor([[1.0, 5.0], [3.0, 4.0]]).amin(0).tolist()
    [1.0, 4.0]
    """
    axes = _axes(input, dim, "amin")
    _nonempty(input, _named_axes(dim, axes), "amin")
    return run_kernel(K.MIN, input, axes=axes, keepdim=bool(keepdim))


def _no_bool(x, op):
    if check_tensor(op, x)._dtype is bool_:   # PyTorch refuses; max(dim) and min(dim) take bools
        raise RuntimeError(f"{op}(): does not support bool input (cast it with .int() first)")
    return x


def _arg_extreme(kernel, op, x, dim, keepdim):
    check_tensor(op, x)
    axis = None if dim is None else normalize_axis(dim, x.ndim, op)
    if axis is not None and x.ndim:
        _nonempty(x, (axis,), op)
        return run_kernel(kernel, x, axis=axis, keepdim=bool(keepdim))
    flat = run_kernel(K.RESHAPE, x, shape=(x.numel(),))     # dim=None: the flattened tensor
    _nonempty(flat, (0,), op)
    i = run_kernel(kernel, flat, axis=0, keepdim=False)
    return run_kernel(K.RESHAPE, i, shape=(1,) * x.ndim) if keepdim else i


def argmax(input, dim=None, keepdim=False):
    """Index of the largest value along ``dim`` (of the flattened tensor when ``dim`` is None);
    the first one among ties. int64.

    >>> import webgrad as wg
    >>> wg.tensor([[1.0, 5.0], [7.0, 4.0]]).argmax().item()
    2
    """
    return _arg_extreme(K.ARGMAX, "argmax", _no_bool(input, "argmax"), dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    """Index of the smallest value along ``dim`` (of the flattened tensor when ``dim`` is None);
    the first one among ties. int64.

    >>> import webgrad as wg
    >>> wg.tensor([[1.0, 5.0], [7.0, 0.0]]).argmin(1).tolist()
    [0, 1]
    """
    return _arg_extreme(K.ARGMIN, "argmin", _no_bool(input, "argmin"), dim, keepdim)


def _extreme(op, x, dim, keepdim, reduce_fn, arg_fn, result, pairwise):
    if isinstance(dim, Tensor):
        return getattr(binary, pairwise)(x, dim)
    if dim is None:
        check_tensor(op, x)
        _nonempty(x, (), op)
        return _extreme_of_all(x, K.MAX if op == "max" else K.MIN, op)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{op}(): dim must be an int (use a{op} for several dims), got {dim!r}")
    index = arg_fn(x, dim, True)
    if not x._dtype.is_floating:
        return result(reduce_fn(x, dim, keepdim), index if keepdim else index.squeeze(dim))
    values = x.gather(dim if x.ndim else 0, index)   # the gradient goes to the returned index, as PyTorch's
    return result(values if keepdim else values.squeeze(dim), index if keepdim else index.squeeze(dim))


def _extreme_of_all(x, kernel, op):
    """``max()``/``min()`` of every element, with PyTorch's gradient: shared evenly among the elements
    equal to the result, or among the NaNs when the result is NaN (amax's gradient is NaN there)."""
    with no_grad():
        y = run_kernel(kernel, x, axes=tuple(range(x.ndim)), keepdim=False)
    record_function(op, _extreme_of_all_gradient, [x], (y,), saved=(x, y))
    return labelled(y, f"{op.capitalize()}Backward1")


def _extreme_of_all_gradient(dy, saved, attrs):
    x, y = saved
    hit = run_kernel(K.LOGICAL_OR, run_kernel(K.EQUAL, x, y),
                     run_kernel(K.LOGICAL_AND, run_kernel(K.NOT_EQUAL, x, x), run_kernel(K.NOT_EQUAL, y, y)))
    hit = run_kernel(K.CAST, hit, dtype=x._dtype)
    return (run_kernel(K.MUL, hit, run_kernel(K.DIV, dy, run_kernel(K.SUM, hit, axes=tuple(range(x.ndim)),
                                                                    keepdim=False))),)


def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001  (torch.max)
    """The largest value; with an int ``dim``, a ``(values, indices)`` named tuple along it;
    with a tensor (positional, or ``other=``), the elementwise maximum.

    >>> import webgrad as wg
    >>> x = wg.tensor([[1.0, 5.0], [7.0, 4.0]])
    >>> x.max().item(), x.max(1).values.tolist(), x.max(1).indices.tolist()
    (7.0, [5.0, 7.0], [1, 0])
    """
    if other is not None:
        if dim is not None:
            raise TypeError("max() takes dim or other, not both")
        dim = check_tensor("max", other, "other")
    return _extreme("max", input, dim, keepdim, amax, partial(_arg_extreme, K.ARGMAX, "max"), return_types.max, "maximum")


def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001  (torch.min)
    """The smallest value; with an int ``dim``, a ``(values, indices)`` named tuple along it;
    with a tensor (positional, or ``other=``), the elementwise minimum.

    >>> import webgrad as wg
    >>> wg.tensor([[1.0, 5.0], [7.0, 4.0]]).min(0).values.tolist()
    [1.0, 4.0]
    """
    if other is not None:
        if dim is not None:
            raise TypeError("min() takes dim or other, not both")
        dim = check_tensor("min", other, "other")
    return _extreme("min", input, dim, keepdim, amin, partial(_arg_extreme, K.ARGMIN, "min"), return_types.min, "minimum")


# ---------------------------------------------------------------- logic

def all(input, dim=None, keepdim=False):  # noqa: A001  (torch.all)
    """Whether every element over ``dim`` is nonzero (bool).

    >>> import webgrad as wg
    >>> wg.tensor([[1, 0], [1, 1]]).all(1).tolist()
    [False, True]
    """
    return run_kernel(K.ALL, input, axes=_logical_axes(input, dim, "all"), keepdim=bool(keepdim))


def any(input, dim=None, keepdim=False):  # noqa: A001  (torch.any)
    """Whether some element over ``dim`` is nonzero (bool).

    >>> import webgrad as wg
    >>> wg.tensor([[1, 0], [0, 0]]).any(1).tolist()
    [True, False]
    """
    return run_kernel(K.ANY, input, axes=_logical_axes(input, dim, "any"), keepdim=bool(keepdim))


def _logical_axes(x, dim, op) -> tuple:
    """all/any over ``dim=()`` reduce nothing (PyTorch's: the result is ``x != 0``), unlike sum's ``()``."""
    if isinstance(dim, (tuple, list)) and not dim:
        return ()
    return _axes(x, dim, op)


# ---------------------------------------------------------------- moments, logsumexp, norms

def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` with Bessel's ``correction`` (1 by default; ``unbiased=False`` means 0).

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 2.0, 3.0, 4.0]).var().item()
    1.6666666269302368
    >>> wg.tensor([1.0, 2.0, 3.0, 4.0]).var(correction=0).item()
    1.25
    """
    return _var(input, dim, unbiased, keepdim, correction, "var")


def _var(x, dim, unbiased, keepdim, correction, op):
    if isinstance(x, Tensor) and x._dtype.is_complex:   # PyTorch's: the mean of |x - mean|^2, the parts' sum
        return binary.add(*(_var(run_kernel(part, x), dim, unbiased, keepdim, correction, op)
                            for part in (K.REAL, K.IMAG)))
    return _real_var(x, dim, unbiased, keepdim, correction, op)


def _real_var(x, dim, unbiased, keepdim, correction, op):
    if isinstance(dim, bool):             # torch's var(input, unbiased)
        dim, unbiased = None, dim
    _float_only(check_tensor(op, x), op, "std and var only support floating point dtypes")
    axes = _axes(x, dim, op)
    if correction is None:
        correction = 0 if unbiased is False else 1
    elif unbiased is not None:
        raise ValueError(f"{op}(): pass either correction= or unbiased=, not both")
    dof = _count(x, axes) - correction
    with no_grad():
        centered = run_kernel(K.SUB, x, _mean(x, axes, True))
        sq = run_kernel(K.SUM, run_kernel(K.MUL, centered, centered), axes=axes, keepdim=bool(keepdim))
        v = run_kernel(K.DIV, sq, _scalar(float(dof if dof > 0 else 0), sq))
    every = not x.ndim or dim is None or (isinstance(dim, (tuple, list)) and not dim)
    record_function("Var", _var_gradient, [x], (v,), saved=(x,), attrs={"axes": axes, "dof": dof, "every": every})
    return v


def _var_gradient(dy, saved, attrs):
    """PyTorch's rule, ``2 / dof * dy * (x - mean)`` (no term through the mean: it is 0, but NaN once an
    element is inf); over every dim with no degrees of freedom left, inf, or NaN where x is its mean."""
    (x,) = saved
    axes, dof = attrs["axes"], attrs["dof"]
    dy = run_kernel(K.RESHAPE, dy, shape=reduced_shape(x.shape, axes, True))
    mean = _mean(x, axes, True)
    if attrs["every"] and dof <= 0:
        return (dy * binary.where(run_kernel(K.EQUAL, x, mean), math.nan, math.inf),)
    return (dy * (x - mean) * (2.0 / dof if dof else math.inf),)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation over ``dim``: ``sqrt(var(...))``, same arguments as ``var``.

    >>> import webgrad as wg
    >>> wg.tensor([1.0, 3.0]).std(correction=0).item()
    1.0
    """
    return _root(_var(input, dim, unbiased, keepdim, correction, "std"), 2)


def _root(s, p):
    """``s ** (1 / p)``, the last step of ``std`` and the p-norms, with PyTorch's gradient there: 0 where
    the result is 0 (the chain rule alone gives 0 * inf = NaN for a constant input or a zero vector)."""
    with no_grad():
        y = run_kernel(K.SQRT, s) if p == 2 else run_kernel(K.POW, s, _scalar(1.0 / p, s))
    record_function("Root", _root_gradient, [s], (y,), saved=(s, y), attrs={"p": p})
    return y


def _root_gradient(dy, saved, attrs):
    s, y = saved
    zero = _scalar(0, y)
    p = attrs["p"]
    return (binary.where(run_kernel(K.EQUAL, y, zero), zero, dy / (p * (y if p == 2 else y ** (p - 1)))),)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(...), mean(...))`` over ``dim``, with ``var``'s arguments.

    >>> import webgrad as wg
    >>> [t.item() for t in wg.var_mean(wg.tensor([1.0, 3.0]))]
    [2.0, 2.0]
    """
    return _var(input, dim, unbiased, keepdim, correction, "var_mean"), _moment_mean(input, dim, unbiased, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(...), mean(...))`` over ``dim``, with ``std``'s arguments.

    >>> import webgrad as wg
    >>> [t.item() for t in wg.std_mean(wg.tensor([1.0, 3.0]), correction=0)]
    [1.0, 2.0]
    """
    std_ = _root(_var(input, dim, unbiased, keepdim, correction, "std_mean"), 2)
    return std_, _moment_mean(input, dim, unbiased, keepdim)


def _moment_mean(input, dim, unbiased, keepdim):
    if isinstance(dim, bool):             # torch's std_mean(input, unbiased)
        dim = None
    return _mean(input, _axes(input, dim, "mean"), bool(keepdim))




def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (all elements by default), as a named tuple.

    >>> import webgrad as wg
    >>> wg.aminmax(wg.tensor([3, 1, 2]))
    webgrad.return_types.aminmax(
    min=tensor(1),
    max=tensor(3))
    """
    dims = () if dim is None else dim
    return return_types.aminmax(amin(input, dims, keepdim), amax(input, dims, keepdim))


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed stably (the max is subtracted first). Ints become float32.

    >>> import webgrad as wg
    >>> round(wg.tensor([1000.0, 1000.0]).logsumexp(0).item(), 2)
    1000.69
    """
    axes = _axes(input, dim, "logsumexp")
    input = input if input._dtype.is_floating else _cast(input, get_default_dtype())
    if not _count(input, axes):     # log(0) = -inf over an empty reduction
        return run_kernel(K.FILL, backend=input._backend, shape=reduced_shape(input.shape, axes, keepdim),
                          value=-math.inf, dtype=input._dtype)
    m = run_kernel(K.MAX, input.detach(), axes=axes, keepdim=True)
    finite = run_kernel(K.LESS, run_kernel(K.ABS, m), _scalar(math.inf, m))
    m = run_kernel(K.WHERE, finite, m, _scalar(0.0, m))
    s = run_kernel(K.SUM, run_kernel(K.EXP, run_kernel(K.SUB, input, m)), axes=axes, keepdim=True)
    return _squeeze(input, axes, run_kernel(K.ADD, run_kernel(K.LOG, s), m), keepdim)



def _abs_power_sum(x, p, axes, keepdim):
    a = run_kernel(K.ABS, x)
    return _root(run_kernel(K.SUM, run_kernel(K.POW, a, _scalar(float(p), a)), axes=axes, keepdim=keepdim), p)


def _p_norm(x, p, axes, keepdim):
    """The p-norm (p not 0, 1 or +-inf) with PyTorch's gradient, ``x |x|^(p-2) dy / y^(p-1)``: 0 where the
    norm is 0, and NaN only where x is inf or NaN (the chain rule through the root gives inf / inf = NaN
    for every element once one is inf). Of one element it is |x|, as PyTorch's (no square to underflow)."""
    with no_grad():
        if _count(x, axes) == 1:
            y = _NORMS[1](x, axes, keepdim)
        else:
            y = _NORMS[2](x, axes, keepdim) if p == 2 else _abs_power_sum(x, p, axes, keepdim)
    record_function("Norm", _p_norm_gradient, [x], (y,), saved=(x, y), attrs={"p": p, "axes": axes})
    return y


def _p_norm_gradient(dy, saved, attrs):
    x, y = saved
    p, shape = attrs["p"], reduced_shape(x.shape, attrs["axes"], True)
    y, dy = run_kernel(K.RESHAPE, y, shape=shape), run_kernel(K.RESHAPE, dy, shape=shape)
    zero = _scalar(0, y)
    scale = binary.where(run_kernel(K.EQUAL, y, zero), zero, dy / (y if p == 2 else y ** (p - 1)))
    if p == 2:
        return (x * scale,)
    a = run_kernel(K.ABS, x)
    if p < 1:   # |x|^(p-1) is inf at 0: PyTorch's rule takes 0 there
        scaled = binary.where(run_kernel(K.EQUAL, x, _scalar(0, x)), _scalar(0, x), x.sign() * a ** (p - 1))
        return (scaled * dy * y ** (1 - p),)
    return ((x.sign() * a ** (p - 1) if p < 2 else x * a ** (p - 2)) * scale,)


def _inf_norm(x, kernel, axes, keepdim):
    """max (or min) of |x|, with PyTorch's gradient: shared among the elements whose |x| is the norm or
    NaN, times sign(x) (0 at NaN)."""
    with no_grad():
        y = run_kernel(kernel, run_kernel(K.ABS, x), axes=axes, keepdim=keepdim)
    record_function("InfNorm", _inf_norm_gradient, [x], (y,), saved=(x, y), attrs={"axes": axes})
    return y


def _inf_norm_gradient(dy, saved, attrs):
    x, y = saved
    shape = reduced_shape(x.shape, attrs["axes"], True)
    a = run_kernel(K.ABS, x)
    hit = run_kernel(K.LOGICAL_OR, run_kernel(K.EQUAL, a, run_kernel(K.RESHAPE, y, shape=shape)),
                     run_kernel(K.NOT_EQUAL, a, a))
    hit = run_kernel(K.CAST, hit, dtype=x._dtype)
    share = run_kernel(K.RESHAPE, dy, shape=shape) / run_kernel(K.SUM, hit, axes=attrs["axes"], keepdim=True)
    return (x.sign() * share * hit,)


_NORMS = {
    2: lambda x, axes, keepdim: _root(run_kernel(K.SUM, run_kernel(K.MUL, x, x), axes=axes, keepdim=keepdim), 2),
    1: lambda x, axes, keepdim: run_kernel(K.SUM, run_kernel(K.ABS, x), axes=axes, keepdim=keepdim),
    math.inf: lambda x, axes, keepdim: _inf_norm(x, K.MAX, axes, keepdim),
    -math.inf: lambda x, axes, keepdim: _inf_norm(x, K.MIN, axes, keepdim),
    0: lambda x, axes, keepdim: run_kernel(K.SUM, run_kernel(K.CAST, run_kernel(K.NOT_EQUAL, x, _scalar(0, x)),
                                                             dtype=x._dtype), axes=axes, keepdim=keepdim),
}


def norm(input, p=2, dim=None, keepdim=False, *, dtype=None):
    """Vector norm over ``dim`` (all elements by default): ``p`` = 2 (default), 1, inf, -inf, 0,
    any other number, or 'fro' (the 2-norm of the elements). Ints become float32.

    >>> import webgrad as wg
    >>> wg.tensor([3.0, 4.0]).norm().item()
    5.0
    >>> wg.tensor([[3.0, -4.0]]).norm(1, dim=1).tolist()
    [7.0]
    """
    axes = _axes(input, dim, "norm")
    input = _cast(input, to_dtype(dtype)) if dtype is not None else input
    if input._dtype.is_complex:            # the norm of the magnitudes (real), as PyTorch's
        input = run_kernel(K.ABS, input)
    input = input if input._dtype.is_floating else _cast(input, get_default_dtype())
    if p == "fro":
        p = 2
    if isinstance(p, str) or isinstance(p, bool) or not isinstance(p, (int, float)):
        raise ValueError(f"norm: p must be a number or 'fro', got {p!r} ('nuc' and matrix norms are not "
                         f"supported)")
    named = _named_axes(dim, axes)
    if p in (math.inf, -math.inf) and 0 in ([input.shape[a] for a in named] if named else [input.numel()]):
        raise RuntimeError(f"norm: cannot compute the {p} norm over an empty dim of shape {tuple(input.shape)} "
                           f"(dims {axes}): max and min have no identity")
    rule = _NORMS.get(p) if p != 2 else None
    return rule(input, axes, bool(keepdim)) if rule else _p_norm(input, p, axes, bool(keepdim))


# (PyTorch has these for complex input; webgrad not yet)
_real = real_only(why="; the reductions that take them: sum, mean, cumsum, var, std, var_mean, std_mean, norm")
prod, cumprod, logsumexp = [_real(f) for f in (prod, cumprod, logsumexp)]
amax, amin, max, min, aminmax = [real_only(why="; complex numbers have no order")(f)  # noqa: A001
                                 for f in (amax, amin, max, min, aminmax)]
argmax, argmin = [real_only(RuntimeError, "; complex numbers have no order")(f)
                  for f in (argmax, argmin)]

METHODS = {
    "sum": sum, "mean": mean, "prod": prod, "cumsum": cumsum, "amax": amax, "amin": amin, "argmax": argmax,
    "argmin": argmin, "max": max, "min": min, "all": all, "any": any, "var": var, "std": std,
    "logsumexp": logsumexp, "norm": norm, "cumprod": cumprod, "diff": diff,
    "aminmax": aminmax,
}

__all__ = list(METHODS) + ["var_mean", "std_mean"]
