"""Fused elementwise chains for compiled plans on ``cpu``: the chain's numpy ufuncs run one after
another into as few arrays as its shape allows (an op writes into an operand that no later op of
the chain reads), with numpy's warnings off once for the whole chain. The values are the kernels'
own (each of these kernels is exactly its ufunc), with fewer allocations and no per-kernel wrapper.

>>> import numpy as np
>>> from webgrad.dtypes import float32
>>> run = fused_kernel([("Mul", (("in", 0), ("in", 1))), ("Exp", (("op", 0),))], (2,), float32)
>>> run(np.ones(2, np.float32), np.zeros(2, np.float32)).tolist()
[1.0, 1.0]
"""
from __future__ import annotations

import numpy as np

from .backend_dtypes import np_dtype
from .elementwise import BINARY, UNARY, quiet_scope

UFUNCS = {name: fn for name, fn in {**UNARY, **BINARY}.items() if isinstance(fn, np.ufunc)}


def fusible(name: str, attrs: dict, dtypes) -> bool:
    """Whether kernel ``name`` can join a fused chain: a ufunc kernel without attrs on one float dtype."""
    return name in UFUNCS and not attrs and len(set(dtypes)) == 1 and dtypes[0].is_floating


def _schedule(ops) -> tuple:
    """(per op, the op whose array it writes into -- an operand's, read by no later op -- or None for a
    fresh array; per op, the op owning the array its result is in)."""
    last = {}
    for j, (_, operands) in enumerate(ops):
        for kind, k in operands:
            if kind == "op":
                last[k] = j
    into, owner = [], {}
    for j, (_, operands) in enumerate(ops):
        free = [owner[k] for kind, k in operands if kind == "op" and last[k] == j]
        into.append(free[0] if free else None)
        owner[j] = free[0] if free else j
    return into, owner


def fused_kernel(ops, out_shape: tuple, dtype):
    """``fn(*inputs) -> output``: the chain ``ops`` (see ``backends/gpu/fused.py`` for their form)."""
    ufuncs = [UFUNCS[name] for name, _ in ops]
    into, owner = _schedule(ops)
    np_dt = np_dtype(dtype)
    plan = [(u, [(kind == "op", owner[k] if kind == "op" else k) for kind, k in operands], owner[j], into[j] is None)
            for j, (u, (_, operands)) in enumerate(zip(ufuncs, ops))]
    empty = np.empty

    def run(*inputs):
        arrays = {}
        with quiet_scope():
            for ufunc, operands, target, fresh in plan:
                args = [arrays[k] if is_op else inputs[k] for is_op, k in operands]
                out = arrays[target] = empty(out_shape, np_dt) if fresh else arrays[target]
                ufunc(*args, out=out)
        return out
    return run


__all__ = ["fusible", "fused_kernel", "UFUNCS"]
