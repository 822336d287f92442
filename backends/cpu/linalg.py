"""cpu linear-algebra kernels."""
import math

import numpy as np

from webgrad import kernel_names as K

from .registry import cpu_kernel


@cpu_kernel(K.MATMUL)
def matmul(a, b, *, transpose_a=False, transpose_b=False):
    """``a @ b`` (batch dims broadcast), the last two dims of each swapped first where asked.
    A product over one element (an outer product: a batch-of-one layer's weight gradient) is a
    broadcast multiply: exact, and 3-4x faster than numpy's matmul, which runs it without BLAS.
    A batch of matrices times one matrix (a Linear layer on [B, T, C]) is folded into one 2-d product:
    numpy runs a stacked matmul whose second operand broadcasts ~4x slower than the folded one."""
    a = a.swapaxes(-1, -2) if transpose_a else a   # (the methods: np.swapaxes is a Python wrapper)
    b = b.swapaxes(-1, -2) if transpose_b else b
    if a.ndim > 1 and b.ndim > 1 and a.shape[-1] == 1 == b.shape[-2]:
        return np.asarray(np.multiply(a, b), dtype=a.dtype)
    if a.ndim > 2 and b.ndim == 2:
        rows = a.reshape(math.prod(a.shape[:-1]), a.shape[-1])   # (not -1: a.shape[-1] may be 0)
        out = np.asarray(np.matmul(rows, b), dtype=a.dtype)
        out.shape = (*a.shape[:-1], b.shape[1])   # in place: the array keeps owning its memory (a compiled
        return out                                 # plan's bias Add may write into it)
    return np.asarray(np.matmul(a, b), dtype=a.dtype)

