"""Fused elementwise chains for compiled plans on ``cpu``: the chain's numpy ufuncs run one after
another into as few arrays as its shape allows (an op writes into an operand that no later op of
the chain reads), as generated Python (``fused_source``). The values are the kernels'
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
from .elementwise import BINARY, UNARY

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


def fused_source(ops) -> str:
    """The Python of a chain: one ufunc call per op, writing into the arrays ``_schedule`` chose.

    >>> print(fused_source([("Mul", (("in", 0), ("in", 1))), ("Exp", (("op", 0),))]))
    def run(x0, x1):
        a0 = empty(shape, dtype)
        Mul(x0, x1, out=a0)
        Exp(a0, out=a0)
        return a0
    """
    into, owner = _schedule(ops)
    n_in = 1 + max(k for _, operands in ops for kind, k in operands if kind == "in")
    lines = [f"def run({', '.join(f'x{k}' for k in range(n_in))}):"]
    for j, (name, operands) in enumerate(ops):
        if into[j] is None:
            lines.append(f"    a{j} = empty(shape, dtype)")
        args = [f"a{owner[k]}" if kind == "op" else f"x{k}" for kind, k in operands]
        lines.append(f"    {name}({', '.join(args)}, out=a{owner[j]})")
    lines.append(f"    return a{owner[len(ops) - 1]}")
    return "\n".join(lines)


def fused_kernel(ops, out_shape: tuple, dtype):
    """``fn(*inputs) -> output``: the chain ``ops`` (see ``backends/gpu/fused.py`` for their form). It
    runs inside a compiled plan's replay, which keeps numpy's warnings off (the backend's gradient_scope)."""
    namespace = {name: UFUNCS[name] for name, _ in ops}
    namespace.update(empty=np.empty, shape=tuple(out_shape), dtype=np_dtype(dtype))
    exec(compile(fused_source(ops), "<webgrad fused chain>", "exec"), namespace)
    return namespace["run"]


__all__ = ["fusible", "fused_kernel", "UFUNCS"]
