"""Fused elementwise chains for compiled plans on ``cpu``: the chain's numpy ufuncs run one after
another into as few arrays as its shape allows (an op writes into an operand that no later op of
the chain reads), as generated Python (``fused_source``). The values are the kernels'
own (each of these kernels is exactly its ufunc), with fewer allocations and no per-kernel wrapper.
A long chain written into a given array (a plan's form, ``into``) runs in blocks of rows
(``block_rows``), so that its scratch arrays stay in the cache between its ops: an SGD update
``p - g * lr`` of a 784x256 weight reads and writes memory once per array instead of once per op.

>>> import numpy as np
>>> from webgrad.dtypes import float32
>>> run = fused_kernel([("Mul", (("in", 0), ("in", 1))), ("Exp", (("op", 0),))], (2,), float32)
>>> run(np.ones(2, np.float32), np.zeros(2, np.float32)).tolist()
[1.0, 1.0]
"""
from __future__ import annotations

import re

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


BLOCK = 1 << 16   # elements per block of a chain written into a given array (256 KiB of float32)


def block_rows(shape: tuple) -> int | None:
    """Rows (along the first dim) per block of a chain written into an array of ``shape``: about
    ``BLOCK`` elements; None where that would make fewer than two blocks (the chain runs whole).

    >>> block_rows((256, 784)), block_rows((256,)), block_rows((1 << 20,))
    (83, None, 65536)
    """
    if not shape:
        return None
    row = 1
    for d in shape[1:]:
        row *= d
    rows = max(1, BLOCK // max(row, 1))
    return rows if shape[0] >= 2 * rows else None


def _blocked(lines: list, n_in: int, shape: tuple, in_shapes, rows: int) -> list:
    """``fused_source``'s into form (``lines``: its head and ops) run in blocks of ``rows`` rows: the
    inputs of the result's leading dim and ``out`` sliced per block, the scratch arrays (of one block)
    cut to the block's rows; an input that broadcasts along the first dim is passed whole."""
    head, body, tail = lines[:3], lines[3:-1], lines[-1]
    sliced = [k for k in range(n_in) if len(in_shapes[k]) == len(shape) and in_shapes[k][0] == shape[0]]
    out = head + [f"    for i in range(0, {shape[0]}, {rows}):", f"        j = i + {rows}", "        o = out[i:j]"]
    out += [f"        y{k} = x{k}[i:j]" for k in sliced]
    renames = {f"x{k}": f"y{k}" for k in sliced}
    renames["out=out"] = "out=o"
    for line in body:
        line = re.sub(r"\bx\d+\b|out=out", lambda m: renames.get(m.group(0), m.group(0)), line)
        line = re.sub(r"= scratch\[(\d+)\]$", r"= scratch[\1][:len(o)]", line)
        out.append("    " + line)
    return out + [tail]


def fused_source(ops, into: bool = False, in_shapes=None, shape=None) -> str:
    """The Python of a chain: one ufunc call per op, writing into the arrays ``_schedule`` chose.
    ``into``: the form a compiled plan may call instead (``into.py``), ``run(*inputs, out, scratch)``:
    the last op writes into ``out`` (a new array where None) and the others into the ``scratch``
    arrays, so ``out`` may be an input of the result's shape (every other op has read the inputs
    before the last one writes, and it reads and writes elementwise).

    >>> print(fused_source([("Mul", (("in", 0), ("in", 1))), ("Exp", (("op", 0),))]))
    def run(x0, x1):
        a0 = empty(shape, dtype)
        Mul(x0, x1, out=a0)
        Exp(a0, out=a0)
        return a0
    >>> print(fused_source([("Mul", (("in", 0), ("in", 1))), ("Sub", (("in", 2), ("op", 0)))], into=True))
    def run(x0, x1, x2, *, out, scratch):
        if out is None:
            out = empty(shape, dtype)
        a0 = scratch[0]
        Mul(x0, x1, out=a0)
        Sub(x2, a0, out=out)
        return out

    With the inputs' and result's shapes (``in_shapes``, ``shape``), a result of more than two
    ``block_rows`` blocks is computed a block at a time (its scratch arrays are one block's rows):

    >>> print(fused_source([("Mul", (("in", 0), ("in", 1))), ("Sub", (("in", 2), ("op", 0)))], into=True,
    ...                    in_shapes=[(300, 500), (), (300, 500)], shape=(300, 500)))
    def run(x0, x1, x2, *, out, scratch):
        if out is None:
            out = empty(shape, dtype)
        for i in range(0, 300, 131):
            j = i + 131
            o = out[i:j]
            y0 = x0[i:j]
            y2 = x2[i:j]
            a0 = scratch[0][:len(o)]
            Mul(y0, x1, out=a0)
            Sub(y2, a0, out=o)
        return out
    """
    into_op, owner = _schedule(ops)
    n_in = 1 + max(k for _, operands in ops for kind, k in operands if kind == "in")
    inputs = ", ".join(f"x{k}" for k in range(n_in))
    last = len(ops) - 1
    lines = [f"def run({inputs}, *, out, scratch):", "    if out is None:", "        out = empty(shape, dtype)"] \
        if into else [f"def run({inputs}):"]
    fresh = 0
    for j, (name, operands) in enumerate(ops):
        if into_op[j] is None and not (into and j == last):
            lines.append(f"    a{j} = scratch[{fresh}]" if into else f"    a{j} = empty(shape, dtype)")
            fresh += 1
        args = [f"a{owner[k]}" if kind == "op" else f"x{k}" for kind, k in operands]
        lines.append(f"    {name}({', '.join(args)}, out={'out' if into and j == last else f'a{owner[j]}'})")
    lines.append("    return out" if into else f"    return a{owner[last]}")
    rows = block_rows(shape) if into and shape is not None else None
    if rows is not None:
        lines = _blocked(lines, n_in, tuple(shape), in_shapes, rows)
    return "\n".join(lines)


def scratch_count(ops) -> int:
    """How many scratch arrays ``fused_source(ops, into=True)`` takes."""
    into_op, _ = _schedule(ops)
    return sum(1 for j in range(len(ops) - 1) if into_op[j] is None)


def fused_kernel(ops, out_shape: tuple, dtype, into: bool = False, in_shapes=None):
    """``fn(*inputs) -> output``: the chain ``ops`` (see ``backends/gpu/fused.py`` for their form); with
    ``into``, its ``fused_source`` form taking ``out`` and ``scratch`` (in row blocks where the inputs'
    ``in_shapes`` are given and the result is long: ``run.rows`` says how many rows a block has, else
    None). It runs inside a compiled plan's replay, which keeps numpy's warnings off (the backend's
    gradient_scope). The function keeps ``ops``, so that a plan can ask for its other form
    (``into.into_kernel``)."""
    namespace = {name: UFUNCS[name] for name, _ in ops}
    namespace.update(empty=np.empty, shape=tuple(out_shape), dtype=np_dtype(dtype))
    shape = tuple(out_shape) if into and in_shapes is not None else None
    exec(compile(fused_source(ops, into, in_shapes, shape), "<webgrad fused chain>", "exec"), namespace)
    run = namespace["run"]
    run.ops = ops
    run.rows = None if shape is None else block_rows(shape)
    return run


__all__ = ["fusible", "fused_kernel", "fused_source", "scratch_count", "block_rows", "UFUNCS"]
