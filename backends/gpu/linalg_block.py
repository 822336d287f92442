"""The WGSL pieces of the register-blocked MatMul (``kernels/matmul_block.wgsl``): each invocation
computes an RM x RN block of the output from its RM rows of A and RN columns of B.

An operand is read in one of three ways (its *mode*): ``"s"`` scalar loads through its strides;
``"k"`` vec4 loads along K (A not transposed, B transposed, K % 4 == 0); ``"m"``/``"n"`` vec4 loads
along the output's rows (A transposed, M % 4 == 0) or columns (B not transposed, N % 4 == 0). The
accumulators are vec4 over 4 output columns: ``acc{r}_{j}`` holds row r, columns 4j .. 4j + 3.
"""
from __future__ import annotations

_ELEMENT = {False: "{name}[i]", True: "{name}[i >> 2][i & 3]"}
_KK = range(4)


def element_access(name: str, vec: bool) -> str:
    """The WGSL expression of element ``i`` of storage array ``name`` (of vec4 when ``vec``).

    >>> element_access("in0", True)
    'in0[i >> 2][i & 3]'
    """
    return _ELEMENT[vec].format(name=name)


def setup(rm: int, rn: int, amode: str, bmode: str) -> str:
    """The element offsets of the invocation's rows of A (``ar*``) and columns of B (``bc*``),
    clamped to the last row / column (a vec4 mode's groups of 4 to the last group)."""
    if amode == "m":
        rows = [f"    let ar{q} = aoff + i32(min(m0 + {4 * q}u, M - 4u));" for q in range(rm // 4)]
    else:
        rows = [f"    let ar{r} = aoff + i32(min(m0 + {r}u, M - 1u)) * sam;" for r in range(rm)]
    if bmode == "n":
        cols = [f"    let bc{j} = boff + i32(min(n0 + {4 * j}u, N - 4u));" for j in range(rn // 4)]
    else:
        cols = [f"    let bc{c} = boff + i32(min(n0 + {c}u, N - 1u)) * sbn;" for c in range(rn)]
    accs = [f"    var acc{r}_{j} = V(0);" for r in range(rm) for j in range(rn // 4)]
    return "\n".join(rows + cols + accs)


def _k_vec(kind: str, var: str, base: str, stride: str, name: str, vec: bool) -> str:
    """One row (of A) or column (of B) over the K step's 4 elements, as a vec4 ``var``."""
    if vec:
        return f"        let {var} = {name}[({base} + ki) >> 2];"
    parts = ", ".join(f"{kind}_at({base} + (ki + {kk}) * {stride})" for kk in _KK)
    return f"        let {var} = V({parts});"


def loads(rm: int, rn: int, amode: str, bmode: str) -> str:
    """The K step's loads: ``a{r}``/``b{c}`` (vec4 over the 4 k) or ``am{q}_{kk}``/``bn{j}_{kk}``
    (vec4 over 4 rows / columns at one k)."""
    if amode == "m":
        lines = [f"        let am{q}_{kk} = in0[(ar{q} + (ki + {kk}) * sak) >> 2];" for kk in _KK for q in range(rm // 4)]
    else:
        lines = [_k_vec("a", f"a{r}", f"ar{r}", "sak", "in0", amode == "k") for r in range(rm)]
    if bmode == "n":
        lines += [f"        let bn{j}_{kk} = in1[(bc{j} + (ki + {kk}) * sbk) >> 2];" for kk in _KK for j in range(rn // 4)]
    else:
        lines += [_k_vec("b", f"b{c}", f"bc{c}", "sbk", "in1", bmode == "k") for c in range(rn)]
    return "\n".join(lines)


_LANE = "xyzw"


def _a_at(amode: str, r: int, kk: int) -> str:
    return f"am{r // 4}_{kk}.{_LANE[r % 4]}" if amode == "m" else f"a{r}.{_LANE[kk]}"


def _b_cols(bmode: str, j: int, kk: int) -> str:
    if bmode == "n":
        return f"bn{j}_{kk}"
    return "V(" + ", ".join(f"b{4 * j + c}.{_LANE[kk]}" for c in range(4)) + ")"


def fmas(rm: int, rn: int, amode: str, bmode: str) -> str:
    """The K step's multiply-adds into every accumulator."""
    lines = []
    for kk in _KK:
        cols = [_b_cols(bmode, j, kk) for j in range(rn // 4)]
        if bmode != "n":            # build each column vec4 once per k
            lines += [f"        let bv{j}_{kk} = {col};" for j, col in enumerate(cols)]
            cols = [f"bv{j}_{kk}" for j in range(rn // 4)]
        lines += [f"        acc{r}_{j} += {_a_at(amode, r, kk)} * {cols[j]};" for r in range(rm) for j in range(rn // 4)]
    return "\n".join(lines)


def tail(rm: int, rn: int, amode: str, bmode: str) -> str:
    """One k (the K % 4 left after the vec4 steps), read element by element."""
    def a_el(r):
        return f"ar{r // 4} + {r % 4}" if amode == "m" else f"ar{r}"

    def b_el(c):
        return f"bc{c // 4} + {c % 4}" if bmode == "n" else f"bc{c}"
    lines = [f"        let ta{r} = a_at({a_el(r)} + ki * sak);" for r in range(rm)]
    lines += [f"        let tb{c} = b_at({b_el(c)} + ki * sbk);" for c in range(rn)]
    lines += [f"        let tv{j} = V(tb{4 * j}, tb{4 * j + 1}, tb{4 * j + 2}, tb{4 * j + 3});" for j in range(rn // 4)]
    lines += [f"        acc{r}_{j} += ta{r} * tv{j};" for r in range(rm) for j in range(rn // 4)]
    return "\n".join(lines)


def store(rm: int, rn: int, vec_out: bool) -> str:
    """The block's store: vec4 where N % 4 == 0 (then every row offset is a multiple of 4), else
    element by element, through ``put``/``put_vec`` (``linalg_epilogue``)."""
    lines = []
    for r in range(rm):
        lines.append(f"    if (m0 + {r}u < M) {{")
        lines.append(f"        let row{r} = ooff + (m0 + {r}u) * N + n0;")
        for j in range(rn // 4):
            if vec_out:
                lines.append(f"        if (n0 + {4 * j}u < N) {{ put_vec(row{r} / 4u + {j}u, wid.z, m0 + {r}u, n0 + {4 * j}u, acc{r}_{j}, later); }}")
            else:
                lines += [f"        if (n0 + {4 * j + c}u < N) {{ put(row{r} + {4 * j + c}u, wid.z, m0 + {r}u, n0 + {4 * j + c}u, "
                          f"acc{r}_{j}.{_LANE[c]}, later); }}" for c in range(4)]
        lines.append("    }")
    return "\n".join(lines)


def block_subs(rm: int, rn: int, amode: str, bmode: str, vec_out: bool) -> dict:
    """The ``matmul_block.wgsl`` placeholders for an RM x RN block and the operands' modes."""
    return {"RM": str(rm), "RN": str(rn),
            "A_AT": element_access("in0", amode != "s"), "B_AT": element_access("in1", bmode != "s"),
            "SETUP": setup(rm, rn, amode, bmode), "LOADS": loads(rm, rn, amode, bmode),
            "FMAS": fmas(rm, rn, amode, bmode), "TAIL": tail(rm, rn, amode, bmode),
            "STORE": store(rm, rn, vec_out)}
