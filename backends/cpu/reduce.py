"""cpu reduction kernels: one numpy call each, keeping the input's dtype
(ops cast ints and bools to int64 before Sum/Prod/Cumsum)."""
import math

import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel, register_table


_SLICED_MAX = 16     # a short axis with at least _SLICED_INNER elements after it: reduced slice by slice
_SLICED_INNER = 16
_SHORT_ROW = 32      # max/min over a last axis this short, of at least _MANY_ROWS rows: on a transposed copy
_MANY_ROWS = 16


def _keep(ufunc, any_order=False):
    """A reduction by ``ufunc`` over ``axes`` that keeps the input dtype (numpy widens small ints and
    bools). It calls ``ufunc.reduce`` (np.sum and friends are Python wrappers costing ~1 µs more a
    call), except over one short float axis: numpy's reduce walks a short axis ~2 ns an element when
    it is not the last (a pooling window's) and ~80 ns a row when it is (logits' classes). Not last:
    a chain of ``ufunc`` calls on the slices, in the same order (~0.5 ns an element). Last, when
    ``any_order`` (max, min: the result does not depend on the order): the reduction runs over the
    first axis of a transposed copy, where numpy vectorises across rows (~8x faster). Over several
    axes but not all, the first among them: numpy's reduce over e.g. (0, 2) walks the array in an
    order ~2.5x slower than summing the first axis's slabs and then reducing the rest (a conv bias's
    gradient). A reduction over every axis stays numpy's own, which sums pairwise (more exactly)."""
    reduce = ufunc.reduce

    def run(x, *, axes, keepdim):
        shape, dtype = x.shape, x.dtype
        floating = dtype.kind == "f"
        if floating and 1 < len(axes) < len(shape) and axes[0] == 0:   # first axis first, then the rest
            rest = reduce(x, axis=0, keepdims=keepdim)
            return run(rest, axes=tuple(a - (not keepdim) for a in axes[1:]), keepdim=keepdim)
        if floating and len(axes) == 1:
            a = axes[0]
            n = shape[a]
            if a < len(shape) - 1 and 2 <= n <= _SLICED_MAX and math.prod(shape[a + 1:]) >= _SLICED_INNER:
                lead = (slice(None),) * a
                out = ufunc(x[lead + (0,)], x[lead + (1,)])
                for i in range(2, n):
                    ufunc(out, x[lead + (i,)], out=out)   # out was allocated just above
                return _kept(out, x, a) if keepdim else out
            if any_order and a == len(shape) - 1 and 2 <= n <= _SHORT_ROW and x.size >= _MANY_ROWS * n:
                out = reduce(np.ascontiguousarray(x.transpose((a,) + tuple(range(a)))), axis=0)
                return _kept(out, x, a) if keepdim else out
        out = reduce(x, axis=axes, keepdims=keepdim)
        return out if type(out) is np.ndarray and out.dtype is dtype else np.asarray(out, dtype=dtype)
    return run


def _kept(out, x, a):
    """``out``, ``x`` reduced over axis ``a``, with that axis kept as 1 (np.expand_dims and
    np.moveaxis are Python functions costing ~2-4 µs a call; a reshape and a transpose are not)."""
    return out.reshape(x.shape[:a] + (1,) + x.shape[a + 1:])


def _arg(fn):
    return lambda x, *, axis, keepdim: np.asarray(fn(x, axis=axis, keepdims=keepdim), dtype=np.int64)


def _accumulating_in_float32(kernel):
    """``kernel`` on float16/bfloat16 input accumulating in float32 and rounding the result once, as
    PyTorch's sum, prod and cumsum do (numpy would accumulate in float16: 1500 values drift by 0.3)."""
    def run(x, **attrs):
        if x.dtype.itemsize == 2 and x.dtype.kind in "fV":   # bfloat16 (ml_dtypes) is of kind "V"
            out = kernel(x.astype(np.float32), **attrs)
            with np.errstate(over="ignore"):   # beyond the half range: inf, as PyTorch's
                return out.astype(x.dtype)
        return kernel(x, **attrs)
    run.__name__ = kernel.__name__
    return run


def _leading_by_blas(kernel):
    """Sum over the leading axes of a contiguous float32/float64 array (a bias's gradient) as one BLAS
    product with a vector of ones (~2x numpy's reduce over those axes); ``kernel`` otherwise."""
    def run(x, *, axes, keepdim):
        k = len(axes)
        if 0 < k < x.ndim and x.dtype.kind == "f" and x.dtype.itemsize >= 4 and x.flags.c_contiguous \
                and axes == tuple(range(k)):
            rows = math.prod(x.shape[:k])
            out = np.matmul(np.ones(rows, x.dtype), x.reshape(rows, math.prod(x.shape[k:])))
            out = out.reshape(x.shape[k:])
            return out.reshape((1,) * k + x.shape[k:]) if keepdim else out
        return kernel(x, axes=axes, keepdim=keepdim)
    return run


sum_kernel, max_kernel = _accumulating_in_float32(_leading_by_blas(_keep(np.add))), _keep(np.maximum, True)
register_table({
    K.SUM: sum_kernel, K.PROD: _accumulating_in_float32(_keep(np.multiply)), K.MAX: max_kernel,
    K.MIN: _keep(np.minimum, True),
    K.ARGMAX: _arg(np.argmax), K.ARGMIN: _arg(np.argmin),
    K.ALL: lambda x, *, axes, keepdim: np.asarray(np.all(x, axis=axes, keepdims=keepdim)),
    K.ANY: lambda x, *, axes, keepdim: np.asarray(np.any(x, axis=axes, keepdims=keepdim)),
})


@cpu_kernel(K.CUMSUM)
@_accumulating_in_float32
def cumsum(x, *, axis):
    return np.cumsum(x, axis=axis, dtype=x.dtype)
