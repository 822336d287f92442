"""Ops: the functions users call. Each module holds a family of ops (each a small
function calling ``run_kernel`` or other ops) and a ``METHODS`` table naming the
Tensor methods and operators it provides; they are attached to Tensor here."""
from ..tensor import Tensor
from . import binary, creation, indexing, linalg, masking, movement, random, reduce, sorting, unary
from . import aliases, bitwise, comparison, complex, counting, elementary, grids, joining, queries, scans, scatter
from . import special, uniques, fft_stft, random_samplers
from . import restriding, scatter_reduce, scatters, arranging, statistics, ranges, windows, legacy

MODULES = (creation, unary, binary, reduce, linalg, movement, indexing, masking, random, sorting, elementary,
           comparison, grids, queries, aliases, joining, uniques, scatter, special, restriding, scatter_reduce,
           scatters, arranging, statistics, ranges, windows, legacy, complex, bitwise, counting, scans, fft_stft,
           random_samplers)

for _m in MODULES:
    for _name, _fn in _m.METHODS.items():
        setattr(Tensor, _name, _fn)

from . import aten  # noqa: E402  (its torch.abs_-style names are made from the methods attached above)

for _name, _fn in aten.METHODS.items():
    setattr(Tensor, _name, _fn)
