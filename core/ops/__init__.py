"""Ops: the functions users call. Each module holds a family of ops (each a small
function calling ``run_kernel`` or other ops) and a ``METHODS`` table naming the
Tensor methods and operators it provides; they are attached to Tensor here."""
from ..tensor import Tensor
from . import binary, creation, indexing, linalg, masking, movement, random, reduce, sorting, unary
from . import aliases, bitwise, comparison, counting, scans, elementary, grids, joining, queries, scatter, uniques

MODULES = (creation, unary, binary, reduce, linalg, movement, indexing, masking, random, sorting, elementary,
           comparison, grids, queries, aliases, joining, uniques, scatter, bitwise, counting, scans)

for _m in MODULES:
    for _name, _fn in _m.METHODS.items():
        setattr(Tensor, _name, _fn)
