"""cpu movement kernels (views where numpy allows; webgrad never mutates arrays in place)."""
import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel


@cpu_kernel(K.RESHAPE)
def reshape(x, *, shape):
    return np.reshape(x, shape)


@cpu_kernel(K.EXPAND)
def expand(x, *, shape):
    return np.broadcast_to(x, shape)
