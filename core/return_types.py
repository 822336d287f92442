"""``webgrad.return_types``: the named tuples ops return (PyTorch's ``torch.return_types``).

``max``, ``min``, ``sort``, ``topk``, ``kthvalue``, ``median``, ``nanmedian`` (``values``,
``indices``) and ``aminmax`` (``min``, ``max``) are tuples whose fields also have names, and
print as PyTorch's do, one field per line:

>>> import webgrad as wg
>>> r = wg.tensor([3.0, 1.0, 2.0]).sort()
>>> r
webgrad.return_types.sort(
values=tensor([1., 2., 3.]),
indices=tensor([1, 2, 0]))
>>> values, indices = r; r.indices is indices, isinstance(r, tuple)
(True, True)
"""
from __future__ import annotations

from collections import namedtuple


def _repr(self) -> str:
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"{__name__}.{type(self).__name__}(\n{fields})"


def structseq(name: str, fields: tuple) -> type:
    """A named tuple type called ``name`` with ``fields``, printing as PyTorch's return types.

    >>> structseq("pair", ("first", "second"))(1, 2)
    webgrad.return_types.pair(
    first=1,
    second=2)
    """
    cls = namedtuple(name, fields, module=__name__)
    cls.__repr__ = _repr
    return cls


_PAIRS = ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian")
globals().update({name: structseq(name, ("values", "indices")) for name in _PAIRS})
aminmax = structseq("aminmax", ("min", "max"))
frexp = structseq("frexp", ("mantissa", "exponent"))

# linear algebra (webgrad.linalg and torch's older names)
_LINALG = {
    "linalg_slogdet": ("sign", "logabsdet"), "slogdet": ("sign", "logabsdet"),
    "linalg_inv_ex": ("inverse", "info"), "linalg_solve_ex": ("result", "info"),
    "linalg_lu_factor": ("LU", "pivots"), "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_lu": ("P", "L", "U"), "lu_unpack": ("P", "L", "U"),
    "triangular_solve": ("solution", "cloned_coefficient"), "linalg_cholesky_ex": ("L", "info"),
    "linalg_qr": ("Q", "R"), "qr": ("Q", "R"), "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_svd": ("U", "S", "Vh"), "svd": ("U", "S", "V"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"), "geqrf": ("a", "tau"),
}
globals().update({name: structseq(name, fields) for name, fields in _LINALG.items()})

__all__ = [*_PAIRS, "aminmax", "frexp", *_LINALG, "structseq"]
