"""The mapping between webgrad dtypes and numpy dtypes.

numpy has every webgrad dtype but bfloat16, which comes from the ``ml_dtypes`` package (JAX's
numpy dtype extensions) when it is installed; without it, bfloat16 is refused with the install line."""
import numpy as np

from webgrad.dtypes import DTYPES, DType

try:
    from ml_dtypes import bfloat16 as _bfloat16
except ImportError:   # pragma: no cover - ml_dtypes is a dependency off emscripten
    _bfloat16 = None

_NUMPY_NAMES = {name: (_bfloat16 if name == "bfloat16" else name) for name in DTYPES}
NP_DTYPES = {DTYPES[name]: np.dtype(t) for name, t in _NUMPY_NAMES.items() if t is not None}
DTYPE_OF = {t: d for d, t in NP_DTYPES.items()}


def np_dtype(dtype: DType):
    """The numpy dtype of a webgrad dtype.

    >>> import webgrad as wg
    >>> np_dtype(wg.int64)
    dtype('int64')
    """
    t = NP_DTYPES.get(dtype)
    if t is None:
        raise TypeError(f"cpu: dtype {dtype.name} needs the ml_dtypes package (pip install ml_dtypes)")
    return t
