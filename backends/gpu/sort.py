"""Sort along one axis: values and int64 indices, stable, NaN above every number.

Every element becomes a (u32 key, u32 index) pair whose order is the sort's (``sort_keys.wgsl``);
the indices make all pairs distinct, so the result is the stable order whatever the algorithm.
Lines of at most ``RANK_MAX`` elements: one dispatch placing each element at its rank (counting).
Longer lines: a bitonic sort over lines padded to a power of two ``p``. Blocks of ``BLOCK`` pairs
sort in workgroup memory; each stage beyond ``BLOCK`` takes one dispatch per step whose partners
lie in different blocks, then one block dispatch for the steps within blocks. No shader loop runs
more than a few hundred times whatever the length (lavapipe stops loops at 65,535 trips), so a long
line costs more dispatches, ~log2(p / BLOCK)^2 / 2 of them, not longer loops.
"""
from __future__ import annotations

from string import Template

from webgrad import kernel_names as K
from webgrad.dtypes import int32, int64

from .program import WGSL_TYPES, Program, kernel_source

WG = 256
BLOCK = 2 * WG          # pairs a workgroup sorts in shared memory (sort_block.wgsl's B)
RANK_MAX = 64           # lines up to this long are sorted by counting (each element's loop runs n times)
_FLIP = {False: 0, True: 0xFFFFFFFF}
_COMMON = [("n", "u32", 1), ("inner", "u32", 1), ("flip", "u32", 1)]


def _keys(t: str) -> str:
    return Template(kernel_source("sort_keys")).substitute(T=t)


def _program(body, t, inputs, outputs, uniforms):
    return lambda: Program(K.SORT, body, inputs=inputs, outputs=outputs, wg=WG, subs={"KEYS": _keys(t)},
                           uniforms=_COMMON + uniforms)


def _rank(be, x, values, indices, t, common, total):
    build = _program("sort_rank", t, [("x", t)], [("values", t), ("indices", "i32")], [("total", "u32", 1)])
    be.run(("sort_rank", t), build, [x], [values, indices], [*common, total], -(-total // WG))


def _block(be, x, scratch, values, indices, t, common, lines, p, stages, first, last):
    """One block dispatch: stages ``(k_lo, k_hi, j_lo)`` within blocks of BLOCK pairs."""
    blocks = -(-lines * p // BLOCK)
    build = _program("sort_block", t, [("x", t)],
                     [("keys", "u32"), ("idx", "u32"), ("values", t), ("indices", "i32")],
                     [("lines", "u32", 1), ("p", "u32", 1), ("k_lo", "u32", 1), ("k_hi", "u32", 1),
                      ("j_lo", "u32", 1), ("first", "u32", 1), ("last", "u32", 1), ("blocks", "u32", 1)])
    be.run(("sort_block", t), build, [x], [*scratch, values, indices],
           [*common, lines, p, *stages, int(first), int(last), blocks], blocks)


def _merge(be, scratch, common, lines, p, k, j):
    """One step across blocks: stage ``k``, partners ``j`` apart."""
    pairs = lines * p // 2
    build = _program("sort_merge", "u32", [], [("keys", "u32"), ("idx", "u32")],
                     [("p", "u32", 1), ("k", "u32", 1), ("j", "u32", 1), ("pairs", "u32", 1)])
    be.run(("sort_merge",), build, [], scratch, [*common, p, k, j, pairs], -(-pairs // WG))


def _bitonic(be, x, values, indices, t, common, lines, n):
    p = 1 << (n - 1).bit_length()
    if p <= BLOCK:    # every line fits a block: one dispatch, scratch unused (two small stand-ins)
        scratch = (be.alloc((1,), int32), be.alloc((1,), int32))
        return _block(be, x, scratch, values, indices, t, common, lines, p, (2, p, 1), True, True)
    scratch = (be.alloc((lines * p,), int32), be.alloc((lines * p,), int32))
    _block(be, x, scratch, values, indices, t, common, lines, p, (2, BLOCK, 1), True, False)
    k = 2 * BLOCK
    while k <= p:
        j = k // 2
        while j >= BLOCK:
            _merge(be, scratch, common, lines, p, k, j)
            j //= 2
        _block(be, x, scratch, values, indices, t, common, lines, p, (k, k, BLOCK // 2), False, k == p)
        k *= 2


def sort(be, x, *, axis, descending):
    values, indices = be.alloc(x.shape, x.dtype), be.alloc(x.shape, int64)
    if values.size == 0:
        return values, indices
    axis %= len(x.shape)
    n, inner = x.shape[axis], 1
    for d in x.shape[axis + 1:]:
        inner *= d
    lines, t = values.size // n, WGSL_TYPES[x.dtype.name]
    common = [n, inner, _FLIP[bool(descending)]]
    if n <= RANK_MAX:
        _rank(be, x, values, indices, t, common, values.size)
    else:
        _bitonic(be, x, values, indices, t, common, lines, n)
    return values, indices


KERNELS = {K.SORT: sort}
