"""cpu reduction kernels: one numpy call each, keeping the input's dtype
(ops cast ints and bools to int32 before Sum/Prod/Cumsum)."""
import math

import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel, register_table


_SLICED_MAX = 16     # a short axis with at least _SLICED_INNER elements after it: reduced slice by slice
_SLICED_INNER = 16
_SLICED_ROWS = 16    # a short last axis: sliced from 16 rows per element of it


def _keep(ufunc, any_order=False):
    """A reduction by ``ufunc`` over ``axes`` that keeps the input dtype (numpy widens small ints and
    bools). It calls ``ufunc.reduce`` (np.sum and friends are Python wrappers costing ~1 µs more a
    call), except over one short float axis that is not the last (a pooling window's): there numpy's
    reduce walks ~2 ns an element and a chain of ``ufunc`` calls on the slices, in the same order,
    ~0.5 ns. ``any_order`` (max, min: the result does not depend on the order) slices a short last
    axis of many rows too (logits' classes: numpy's max costs ~70 ns a row there)."""
    reduce = ufunc.reduce

    def run(x, *, axes, keepdim):
        if len(axes) == 1:
            a = axes[0]
            n = x.shape[a]
            if 2 <= n <= _SLICED_MAX and x.dtype.kind == "f" and (
                    math.prod(x.shape[a + 1:]) >= _SLICED_INNER if a < x.ndim - 1
                    else any_order and x.size >= _SLICED_ROWS * n * n):
                lead = (slice(None),) * a
                out = ufunc(x[lead + (0,)], x[lead + (1,)])
                for i in range(2, n):
                    ufunc(out, x[lead + (i,)], out=out)   # out was allocated just above
                return np.expand_dims(out, a) if keepdim else out
        return np.asarray(reduce(x, axis=axes, keepdims=keepdim), dtype=x.dtype)
    return run


def _arg(fn):
    return lambda x, *, axis, keepdim: np.asarray(fn(x, axis=axis, keepdims=keepdim), dtype=np.int32)


sum_kernel = _keep(np.add)
register_table({
    K.SUM: sum_kernel, K.PROD: _keep(np.multiply), K.MAX: _keep(np.maximum, True),
    K.MIN: _keep(np.minimum, True),
    K.ARGMAX: _arg(np.argmax), K.ARGMIN: _arg(np.argmin),
    K.ALL: lambda x, *, axes, keepdim: np.asarray(np.all(x, axis=axes, keepdims=keepdim)),
    K.ANY: lambda x, *, axes, keepdim: np.asarray(np.any(x, axis=axes, keepdims=keepdim)),
})


@cpu_kernel(K.CUMSUM)
def cumsum(x, *, axis):
    return np.cumsum(x, axis=axis, dtype=x.dtype)
