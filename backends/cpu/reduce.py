"""cpu reduction kernels."""
import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel


@cpu_kernel(K.SUM)
def sum_(x, *, axes, keepdim):
    return np.asarray(np.sum(x, axis=axes, keepdims=keepdim, dtype=x.dtype))
