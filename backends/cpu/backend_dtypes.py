"""The mapping between webgrad dtypes and numpy dtypes."""
import numpy as np

from webgrad.dtypes import DTYPES, DType

NP_DTYPES = {d: np.dtype(d.name) for d in DTYPES.values()}
DTYPE_OF = {np.dtype(d.name): d for d in DTYPES.values()}


def np_dtype(dtype: DType):
    """The numpy dtype of a webgrad dtype."""
    return NP_DTYPES[dtype]
