"""PyTorch's "opmath" for ops composed of several kernels: given float16/bfloat16 tensors, PyTorch's
kernels compute in float32 and round once to the half dtype at the end; a composition of webgrad's
kernels would round after each of them (``sinh`` as ``(expm1(x) - expm1(-x)) / 2`` rounds four
times). ``opmath`` makes such a composition compute on float32 copies of its half operands and
round its result once, through differentiable casts (gradients flow, in-place forms still write into
the half tensor). It serves every backend: the GPU's float16 kernels also compute in float32, but
store each intermediate result in float16.

Only where PyTorch's own op is one kernel: where PyTorch composes too (``softsign``, ``tanhshrink``),
it rounds per step, and so does webgrad.
"""
from __future__ import annotations

import functools

from .. import kernel_names as K
from ..dtypes import bfloat16, float16, float32, promote_tensors
from ..engine import run_kernel
from ..tensor import Tensor

HALF = (float16, bfloat16)


def _half_result(tensors, dtypes) -> object:
    """The half dtype (one of ``dtypes``) the op's result has (PyTorch's promotion of ``tensors``), or None."""
    dtype, ndim = tensors[0]._dtype, tensors[0].ndim
    for t in tensors[1:]:
        dtype, ndim = promote_tensors(dtype, ndim, t._dtype, t.ndim), max(ndim, t.ndim)
    return dtype if dtype in dtypes else None


def _widen(x):
    return run_kernel(K.CAST, x, dtype=float32) if isinstance(x, Tensor) and x._dtype in HALF else x


def _narrow(y, dtype):
    if isinstance(y, Tensor):
        return run_kernel(K.CAST, y, dtype=dtype) if y._dtype is float32 else y
    return type(y)(_narrow(v, dtype) for v in y) if isinstance(y, tuple) else y


def opmath(fn=None, *, dtypes=HALF):
    """Decorator: ``fn``, an op composed of several kernels, computed in float32 for float16/bfloat16
    tensors and rounded once to the half dtype (other dtypes run ``fn`` as it is). ``@opmath(dtypes=
    (bfloat16,))``: for those only (where PyTorch's float16 kernel rounds each step, its bfloat16 once).

    >>> import webgrad as wg
    >>> @opmath
    ... def cube_plus_one(x):
    ...     return x * x * x + 1
    >>> y = cube_plus_one(wg.tensor([1.2], dtype=wg.bfloat16))
    >>> y.dtype, y.tolist()   # bfloat16 steps would give 2.75
    (webgrad.bfloat16, [2.734375])
    """
    if fn is None:
        return functools.partial(opmath, dtypes=dtypes)
    halves = frozenset(dtypes)

    @functools.wraps(fn)
    def op(*args, **kwargs):
        for a in args:   # the common case, no half tensor, first (a loop: cheaper than any() on a generator)
            if isinstance(a, Tensor) and a._dtype in halves:   # (a Parameter too)
                break
        else:
            if not kwargs or not any([isinstance(v, Tensor) and v._dtype in halves for v in kwargs.values()]):
                return fn(*args, **kwargs)
        dtype = _half_result([a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)], halves)
        if dtype is None:
            return fn(*args, **kwargs)
        wide = fn(*(_widen(a) for a in args), **{k: _widen(v) for k, v in kwargs.items()})
        return _narrow(wide, dtype)
    return op
