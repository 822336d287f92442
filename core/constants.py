"""PyTorch's constants and its name for the dtype class: ``pi``, ``e``, ``inf``, ``nan``,
``newaxis`` (None, for indexing) and ``dtype`` (webgrad's ``DType``, so ``isinstance(x, wg.dtype)``).

>>> import webgrad as wg
>>> round(wg.pi, 5), wg.zeros(2)[:, wg.newaxis].shape, isinstance(wg.float32, wg.dtype)
(3.14159, webgrad.Size([2, 1]), True)
"""
import math

from .dtypes import DType as dtype

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
newaxis = None

__all__ = ["pi", "e", "inf", "nan", "newaxis", "dtype"]
