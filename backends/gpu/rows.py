"""The row kernels' shared launch: a workgroup per row when rows are long, a thread per row when
they are short (``kernels/row_reduce.wgsl`` or ``kernels/row_single.wgsl``, put in front of the
kernel as ``${REDUCE}``)."""
from __future__ import annotations

from .program import kernel_source

WG = 256
LONG_ROW = 64        # rows at least this long get a workgroup each


def row_variant(n: int) -> dict:
    """The substitutions (and the workgroup count's per-row factor) for rows of ``n`` elements."""
    if n >= LONG_ROW:
        return {"REDUCE": kernel_source("row_reduce"), "ROW": "flat_group(wid, nwg)", "LANE": "lid", "LANES": "WG"}
    return {"REDUCE": kernel_source("row_single"), "ROW": "flat_group(wid, nwg) * WG + lid", "LANE": "0u",
            "LANES": "1u"}


def row_groups(rows: int, n: int) -> int:
    """Workgroups for ``rows`` rows of ``n`` elements (see ``row_variant``)."""
    return rows if n >= LONG_ROW else -(-rows // WG)
