"""cpu linear-algebra kernels."""
import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel


@cpu_kernel(K.MATMUL)
def matmul(a, b, *, transpose_a=False, transpose_b=False):
    a = a.swapaxes(-1, -2) if transpose_a else a   # (the methods: np.swapaxes is a Python wrapper)
    b = b.swapaxes(-1, -2) if transpose_b else b
    return np.asarray(np.matmul(a, b), dtype=a.dtype)
