"""cpu reduction kernels: one numpy call each, keeping the input's dtype
(ops cast ints and bools to int32 before Sum/Prod/Cumsum)."""
import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel, register_table


def _keep(fn):
    """A reduction over ``axes`` that keeps the input dtype (numpy widens small ints and bools).
    ``fn`` is a ufunc's ``reduce``: np.sum and friends are Python wrappers costing ~1 µs more a call."""
    return lambda x, *, axes, keepdim: np.asarray(fn(x, axis=axes, keepdims=keepdim), dtype=x.dtype)


def _arg(fn):
    return lambda x, *, axis, keepdim: np.asarray(fn(x, axis=axis, keepdims=keepdim), dtype=np.int32)


register_table({
    K.SUM: _keep(np.add.reduce), K.PROD: _keep(np.multiply.reduce), K.MAX: _keep(np.maximum.reduce),
    K.MIN: _keep(np.minimum.reduce),
    K.ARGMAX: _arg(np.argmax), K.ARGMIN: _arg(np.argmin),
    K.ALL: lambda x, *, axes, keepdim: np.asarray(np.all(x, axis=axes, keepdims=keepdim)),
    K.ANY: lambda x, *, axes, keepdim: np.asarray(np.any(x, axis=axes, keepdims=keepdim)),
})


@cpu_kernel(K.CUMSUM)
def cumsum(x, *, axis):
    return np.cumsum(x, axis=axis, dtype=x.dtype)
