"""Program objects: a WGSL kernel body plus everything needed to bind and dispatch it.

A program's source is its ``.wgsl`` body (package data in ``kernels/``, with ``${NAME}``
placeholders) behind a generated prelude: the storage bindings, the uniform block and its
accessors, the workgroup size and the split-dispatch index helper. Uniforms are a flat
list of 32-bit words (u32, i32 or f32) laid out in ``array<vec4<u32>, 16>`` -- the one
layout whose WGSL alignment is trivially right -- and read with ``ui``/``ii``/``uf``
at the ``U_<name>`` offsets the prelude declares.
"""
from __future__ import annotations

import struct
from functools import lru_cache
from importlib import resources
from string import Template

UNIFORM_WORDS = 64                  # 256 bytes: one dynamic-offset slot (WebGPU's offset alignment)
UNIFORM_SLOT = UNIFORM_WORDS * 4
_FMT = {"u32": "I", "i32": "i", "f32": "f"}

# webgrad dtype name -> WGSL storage element type (bool is stored as u32 0/1)
WGSL_TYPES = {"float32": "f32", "int32": "i32", "bool": "u32"}


@lru_cache(maxsize=None)
def kernel_source(name: str) -> str:
    """The text of ``kernels/<name>.wgsl`` (package data)."""
    return resources.files(__package__).joinpath("kernels", f"{name}.wgsl").read_text()


class Program:
    """A compute program: WGSL source, entry point, workgroup size, bindings and uniform layout.

    ``inputs``/``outputs`` are (variable, WGSL element type) pairs, bound in that order as
    read-only then read-write storage; ``uniforms`` are (name, type, count) fields.

    >>> p = Program("demo", "body", inputs=[("x", "f32")], outputs=[("y", "f32")],
    ...             uniforms=[("n", "u32", 1)], subs={"BODY": "y[i] = x[i];"})  # doctest: +SKIP
    """

    def __init__(self, label: str, body: str, *, inputs, outputs, uniforms=(), wg: int = 256,
                 subs=None, entry: str = "main"):
        self.label, self.entry, self.wg = label, entry, wg
        self.n_read, self.n_write = len(inputs), len(outputs)
        offsets, word = {}, 0
        for name, typ, count in uniforms:
            offsets[name] = word
            word += count
        if word > UNIFORM_WORDS:
            raise ValueError(f"{label}: {word} uniform words exceed the {UNIFORM_WORDS}-word slot")
        self.fmt = "<" + "".join(_FMT[typ] * count for _, typ, count in uniforms)
        self.code = _prelude(inputs, outputs, offsets, wg) + Template(kernel_source(body)).substitute(subs or {})

    def pack(self, buf, offset: int, values) -> None:
        """Write the uniform ``values`` (flattened, in field order) into ``buf`` at ``offset``."""
        struct.pack_into(self.fmt, buf, offset, *values)


def _prelude(inputs, outputs, offsets, wg) -> str:
    lines = [f"const WG: u32 = {wg}u;"]
    b = 0
    for name, typ in inputs:
        lines.append(f"@group(0) @binding({b}) var<storage, read> {name}: array<{typ}>;")
        b += 1
    for name, typ in outputs:
        lines.append(f"@group(0) @binding({b}) var<storage, read_write> {name}: array<{typ}>;")
        b += 1
    lines += [f"struct Uniforms {{ d: array<vec4<u32>, {UNIFORM_WORDS // 4}> }};",
              f"@group(0) @binding({b}) var<uniform> u: Uniforms;",
              "fn ui(i: u32) -> u32 { return u.d[i >> 2u][i & 3u]; }",
              "fn ii(i: u32) -> i32 { return bitcast<i32>(ui(i)); }",
              "fn uf(i: u32) -> f32 { return bitcast<f32>(ui(i)); }",
              # workgroups beyond 65535 are split over y: this is the flat workgroup index
              "fn flat_group(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.y * nwg.x + wid.x; }"]
    lines += [f"const U_{name}: u32 = {off}u;" for name, off in offsets.items()]
    return "\n".join(lines) + "\n"
