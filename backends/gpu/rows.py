"""The row kernels' shared launch: a workgroup per row when rows are long, a thread per row when
they are short (``kernels/row_reduce.wgsl`` or ``kernels/row_single.wgsl``, put in front of the
kernel as ``${REDUCE}``).

A row kernel's thread walks its row a few times (LayerNormGrad's four at most), each walk at most
``ROW_STEPS`` steps: some implementations stop a shader's loops after 65535 iterations in all,
silently (Mesa's lavapipe), so rows longer than ``ROW_STEPS * WG`` (``fits`` says no) take their statistics
from the backend's multi-pass reductions and their values from one elementwise map instead (the
launchers in activations.py and normalization.py), and a column walk over many rows is split
over dispatches (``spans``)."""
from __future__ import annotations

from .program import kernel_source

WG = 256
LONG_ROW = 64        # rows at least this long get a workgroup each
ROW_STEPS = 4096     # the steps of one walk along a row (or a column) by one thread


def fits(n: int) -> bool:
    """Whether rows of ``n`` elements stay within a row kernel's loop budget."""
    return n <= ROW_STEPS * WG


def row_variant(n: int) -> dict:
    """The substitutions (and the workgroup count's per-row factor) for rows of ``n`` elements."""
    if n >= LONG_ROW:
        return {"REDUCE": kernel_source("row_reduce"), "ROW": "flat_group(wid, nwg)", "LANE": "lid", "LANES": "WG"}
    return {"REDUCE": kernel_source("row_single"), "ROW": "flat_group(wid, nwg) * WG + lid", "LANE": "0u",
            "LANES": "1u"}


def row_groups(rows: int, n: int) -> int:
    """Workgroups for ``rows`` rows of ``n`` elements (see ``row_variant``)."""
    return rows if n >= LONG_ROW else -(-rows // WG)


def spans(total: int) -> list:
    """[r0, r1) ranges covering ``total`` rows, each at most ``ROW_STEPS * WG`` (a workgroup's
    threads each taking one row in WG), at least one range.

    >>> spans(5)
    [(0, 5)]
    """
    step = ROW_STEPS * WG
    return [(r, min(total, r + step)) for r in range(0, max(total, 1), step)]
