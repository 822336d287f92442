"""Program objects: a WGSL kernel body plus everything needed to bind and dispatch it.

A program's source is its ``.wgsl`` body (package data in ``kernels/``, with ``${NAME}``
placeholders) behind a generated prelude: the storage bindings, the uniform block and its
accessors, the workgroup size and the split-dispatch index helper. Uniforms are a flat
list of 32-bit words (u32, i32 or f32) laid out in ``array<vec4<u32>, 16>`` -- the one
layout whose WGSL alignment is trivially right -- and read with ``ui``/``ii``/``uf``
at the ``U_<name>`` offsets the prelude declares.
"""
from __future__ import annotations

import re
import struct
from functools import lru_cache
from importlib import resources
from string import Template

from .device import GpuError, GpuLimitError

SLOT_WORDS = 64                     # 256 bytes: one dynamic-offset slot (WebGPU's offset alignment)
UNIFORM_SLOT = SLOT_WORDS * 4
UNIFORM_WORDS = SLOT_WORDS - 1      # the words a program may use
ZERO_WORD = SLOT_WORDS - 1          # the slot's last word: no program writes it, so it stays 0 (see _prelude)
_FMT = {"u32": "I", "i32": "i", "f32": "f"}
_RANGES = {"u32": (0, 2**32 - 1), "i32": (-2**31, 2**31 - 1)}

# webgrad dtype name -> WGSL storage element type (bool is stored as u32 0/1; int64 as i32, its values
# checked to fit when uploaded: WebGPU has no 64-bit integers)
# float16 is WGSL's f16 (WebGPU's shader-f16 feature): a program that names it gets ``enable f16;``
WGSL_TYPES = {"float32": "f32", "float16": "f16", "int32": "i32", "int64": "i32", "bool": "u32"}   # int64 in 32 bits
_F16 = re.compile(r"\bf16\b")


def storage_bytes(dtype) -> int:
    """Bytes per element of ``dtype`` in a GPU buffer: 2 for float16, 4 for the rest (int64 is held in 32 bits).

    >>> import webgrad as wg
    >>> storage_bytes(wg.float16), storage_bytes(wg.int64)
    (2, 4)
    """
    return 2 if dtype.name == "float16" else 4


def with_enables(code: str) -> str:
    r"""``code`` behind the ``enable f16;`` directive when it uses WGSL's f16 type (which needs it first).

    >>> with_enables("var<private> h: f16;")
    'enable f16;\nvar<private> h: f16;'
    """
    return "enable f16;\n" + code if _F16.search(code) else code


@lru_cache(maxsize=None)
def kernel_source(name: str) -> str:
    """The text of ``kernels/<name>.wgsl`` (package data)."""
    return resources.files(__package__).joinpath("kernels", f"{name}.wgsl").read_text()


class Program:
    """A compute program: WGSL source, entry point, workgroup size, bindings and uniform layout.

    ``inputs``/``outputs`` are (variable, WGSL element type) pairs, bound in that order as
    read-only then read-write storage; ``uniforms`` are (name, type, count) fields.
    ``checks_indices`` adds, after the outputs, the backend's index-check flags and a function
    ``bad_index(value: i32)`` the kernel calls for an index it refuses (see
    ``GpuBackend.index_flags``); its slot travels in the uniform ``check_slot``.

    >>> p = Program("demo", "body", inputs=[("x", "f32")], outputs=[("y", "f32")],
    ...             uniforms=[("n", "u32", 1)], subs={"BODY": "y[i] = x[i];"})  # doctest: +SKIP
    """

    def __init__(self, label: str, body: str, *, inputs, outputs, uniforms=(), wg: int = 256,
                 subs=None, entry: str = "main", checks_indices: bool = False):
        self.label, self.entry, self.wg = label, entry, wg
        if checks_indices:
            outputs = [*outputs, ("flags", "atomic<i32>")]
            uniforms = [*uniforms, ("check_slot", "u32", 1)]
        self.n_read, self.n_write = len(inputs), len(outputs)
        offsets, word = {}, 0
        for name, typ, count in uniforms:
            offsets[name] = word
            word += count
        if word > UNIFORM_WORDS:
            raise ValueError(f"{label}: {word} uniform words exceed the {UNIFORM_WORDS}-word slot")
        self.fields = [(name, typ) for name, typ, count in uniforms for _ in range(count)]
        self.fmt = uniform_format(self.fields)
        self.code = with_enables(_prelude(inputs, outputs, offsets, wg) + (_BAD_INDEX if checks_indices else "")
                                 + Template(kernel_source(body)).substitute(subs or {}))

    def packed(self, values) -> bytes:
        """The uniform ``values`` (flattened, in field order) as bytes; a
        :class:`GpuLimitError` names the first one its 32-bit field cannot hold."""
        try:
            return struct.pack(self.fmt, *values)
        except struct.error:
            raise GpuLimitError(_overflow(self.fields, values)) from None


def uniform_format(fields) -> str:
    """The ``struct`` format of uniform words of (name, WGSL type) ``fields``.

    >>> uniform_format([("n", "u32"), ("p", "f32")])
    '<If'
    """
    return "<" + "".join(_FMT[typ] for _, typ in fields)


def _overflow(fields, values) -> str:
    """Which of ``values`` overflows its (name, WGSL type) field, e.g. ``uniform n = 4294967296 is
    outside u32 (0..4294967295)``."""
    for (name, typ), v in zip(fields, values):
        lo, hi = _RANGES.get(typ, (-float("inf"), float("inf")))
        if not lo <= v <= hi:
            return f"uniform {name} = {v} is outside {typ} ({lo}..{hi})"
    return f"{len(values)} uniform values for {len(fields)} fields"


# An index-checking kernel reports each index it refuses: how many, the least and the greatest.
_BAD_INDEX = """fn bad_index(value: i32) {
    let at = 3u * ui(U_check_slot);
    atomicAdd(&flags[at], 1);
    atomicMin(&flags[at + 1u], value);
    atomicMax(&flags[at + 2u], value);
}
"""


def _prelude(inputs, outputs, offsets, wg) -> str:
    lines = [f"const WG: u32 = {wg}u;"]
    b = 0
    for name, typ in inputs:
        lines.append(f"@group(0) @binding({b}) var<storage, read> {name}: array<{typ}>;")
        b += 1
    for name, typ in outputs:
        lines.append(f"@group(0) @binding({b}) var<storage, read_write> {name}: array<{typ}>;")
        b += 1
    # Uniforms are read at an offset the shader compiler cannot fold (plus the slot's last word,
    # always 0). Otherwise Mesa's lavapipe (22.3, Debian 12's) "inlines" the uniforms that a
    # branch or a loop bound reads at a constant offset: when that shrinks the shader, it compiles
    # a variant at every dispatch and never frees it (0.4 MiB of host memory per MatMul dispatch).
    zero = f"u.d[{ZERO_WORD // 4}u][{ZERO_WORD % 4}u]"
    lines += [f"struct Uniforms {{ d: array<vec4<u32>, {SLOT_WORDS // 4}> }};",
              f"@group(0) @binding({b}) var<uniform> u: Uniforms;",
              f"fn ui(i: u32) -> u32 {{ let j = i + {zero}; return u.d[j >> 2u][j & 3u]; }}",
              "fn ii(i: u32) -> i32 { return bitcast<i32>(ui(i)); }",
              "fn uf(i: u32) -> f32 { return bitcast<f32>(ui(i)); }",
              # workgroups beyond 65535 are split over y: this is the flat workgroup index
              "fn flat_group(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.y * nwg.x + wid.x; }"]
    lines += [f"const U_{name}: u32 = {off}u;" for name, off in offsets.items()]
    return "\n".join(lines) + "\n"



# ---------------------------------------------------------------- user source inside generated code

USER_BEGIN, USER_END = "// user source of ", "// end of user source"
_LOCATION = re.compile(r"\S+:(\d+):(\d+)")
_GUTTER = re.compile(r"^\s*(\d+) \u2502 ")


class WgslError(GpuError):
    """A WGSL compile error in a user's kernel source, at ``line`` and ``column`` (1-based) of it."""

    def __init__(self, message: str, kernel: str, line: int, column: int):
        super().__init__(message)
        self.kernel, self.line, self.column = kernel, line, column


def user_source(name: str, source: str) -> str:
    """``source`` between the markers that let a compile error be located in it."""
    return f"{USER_BEGIN}{name}\n{source}\n{USER_END}\n"


def compile_error(code: str, error: GpuError) -> GpuError:
    r"""``error`` (a compile failure of ``code``) as a :class:`WgslError` located in the user
    source that ``code`` holds, or ``error`` itself when the code holds none or the compiler
    points elsewhere.

    >>> code = "fn f() {}\n" + user_source("K", "let a = ;")
    >>> e = compile_error(code, GpuError("parsing error: bad\n  wgsl:3:9"))
    >>> (e.kernel, e.line, e.column)
    ('K', 1, 9)
    """
    lines = code.split("\n")
    begin = next((i for i, t in enumerate(lines) if t.startswith(USER_BEGIN)), None)
    if begin is None:
        return error
    name, end = lines[begin][len(USER_BEGIN):], lines.index(USER_END, begin)
    where = _locate(str(error), lines, begin + 2, end)      # code lines begin+2 .. end are the user's
    if where is None:
        return error
    line, col = where[0] - begin - 1, where[1]
    text = lines[where[0] - 1]
    summary = next((t.strip() for t in str(error).split("\n") if "error" in t.lower() and ":" in t
                    and not t.startswith("wgpu:")), str(error).split("\n")[0])
    return WgslError(f"WGSL kernel {name!r}: line {line}, column {col}: {summary}\n    {text}\n    {' ' * (col - 1)}^\n"
                     f"(compiler output, with lines counted from the generated prelude:)\n{error}", name, line, col)


def _locate(message: str, lines: list, first: int, last: int):
    """(line, column) in the generated code of the first place ``message`` points at within
    lines ``first..last`` (1-based): the compiler's location, else a marked snippet line."""
    for m in _LOCATION.finditer(message):
        if first <= int(m.group(1)) <= last:
            return int(m.group(1)), int(m.group(2))
    out = message.split("\n")
    for k, t in enumerate(out[:-1]):
        m = _GUTTER.match(t)
        if m and first <= int(m.group(1)) <= last and "^" in out[k + 1]:
            src = lines[int(m.group(1)) - 1].rstrip()
            start = len(t.rstrip()) - len(src)
            return int(m.group(1)), max(1, out[k + 1].index("^") - start + 1)
    return None
