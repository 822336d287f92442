"""PyTorch's "opmath" on cpu: its kernels compute float16/bfloat16 elementwise math in float32 and
round once to the half dtype at the end. numpy (and ml_dtypes) do the same for one ufunc, but a
kernel written as several numpy steps (``sigmoid``'s ``exp``, ``+``, ``/``) rounds after each. The
kernels named in ``OPMATH`` are such kernels: registered through ``registry.py``, they are wrapped
(``in_float32``) to run on float32 copies of half inputs and round their results once.

Kernels that are one ufunc, or whose half inputs are already widened inside (softmax, layer norm,
erf, gelu), are not listed; nor is one PyTorch itself computes step by step in the half dtype.
"""
import functools

import numpy as np

from webgrad import kernel_names as K

from .backend_dtypes import NP_DTYPES
from webgrad.dtypes import bfloat16, float16

HALF = frozenset(NP_DTYPES[d] for d in (float16, bfloat16) if d in NP_DTYPES)
_FLOAT32 = np.dtype(np.float32)

# the kernels of several numpy steps that PyTorch computes in float32 for half inputs (and MatMul: numpy's
# float16 matmul sums in float16 without BLAS; PyTorch's, as BLAS on float32 copies, in float32), with
# the half dtypes where it does (its float16 sigmoid backward rounds each step, its bfloat16 one once)
OPMATH = {K.SIGMOID: HALF, K.SILU: HALF, K.RSQRT: HALF, K.LEAKY_RELU: HALF, K.ELU: HALF, K.MATMUL: HALF,
          K.TANH_GRAD: HALF, K.SIGMOID_GRAD: frozenset({NP_DTYPES.get(bfloat16)}) - {None}}


def _widen(a):
    return a.astype(_FLOAT32) if type(a) is np.ndarray and a.dtype in HALF else a


def _narrow(y, dtype):
    if type(y) is tuple:
        return tuple(_narrow(v, dtype) for v in y)
    return y.astype(dtype) if getattr(y, "dtype", None) == _FLOAT32 else y


def in_float32(fn, dtypes=HALF):
    """``fn``, a kernel, run on float32 copies of its float16/bfloat16 (``dtypes``) array inputs, its float32
    results rounded once to the first such input's dtype (other dtypes run ``fn`` itself).

    >>> import ml_dtypes
    >>> cube_plus_one = in_float32(lambda x: x * x * x + 1)
    >>> cube_plus_one(np.array([1.2], ml_dtypes.bfloat16)).tolist()   # bfloat16 steps give 2.75
    [2.734375]
    """
    @functools.wraps(fn)   # (its signature read through __wrapped__: a backward kernel's named extras)
    def run(*args, **attrs):
        half = next((a.dtype for a in args if type(a) is np.ndarray and a.dtype in dtypes), None)
        if half is None:
            return fn(*args, **attrs)
        out = fn(*(_widen(a) for a in args), **attrs)
        with np.errstate(over="ignore"):   # beyond the half range: inf, as PyTorch's
            return _narrow(out, half)
    return run
