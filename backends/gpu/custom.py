"""WGSL kernels written by users, registered once for every GPU backend (``wgpu``, ``webgpu``).

* ``wgsl_elementwise``: a WGSL expression over named inputs and attrs, run by the backend's
  strided elementwise shader (so inputs broadcast); attrs travel as f32 uniforms.
* ``wgsl_kernel``: a whole compute shader behind a generated prelude that declares its
  bindings and a uniform block ``u`` with the shapes, sizes and attrs (layout in ``prelude``).

Nothing compiles at registration: each backend builds a pipeline on first use, one per key
(ranks and dtypes, never full shapes or attr values). Compile errors come back as
:class:`~webgrad.backends.gpu.program.WgslError` with the line and column in the user's text.
"""
from __future__ import annotations

import re
import warnings

from webgrad import registry
from webgrad.dtypes import bool_, to_dtype
from webgrad.shapes import broadcast_shapes

from .elementwise import elementwise, fill
from .program import UNIFORM_WORDS, WGSL_TYPES, Program, WgslError, uniform_format, user_source, with_enables

GPU_BACKENDS = ("wgpu", "webgpu")
MAX_RANK = 4
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# WebGPU's default limits on a workgroup, which both GPU devices ask for
WORKGROUP_LIMITS = {"invocations": 256, "x": 256, "y": 256, "z": 64}
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_MAIN = re.compile(r"\bfn\s+main\s*\(")
_WORKGROUP_SIZE = re.compile(r"@workgroup_size\s*\(([^)]*)\)")
_LITERAL = re.compile(r"^(\d+)[ui]?$")


class WgslOp:
    """What ``wgsl_elementwise`` and ``wgsl_kernel`` return: calling it runs the kernel on
    its tensors' backend through ``run_kernel`` (so a ``cpu`` twin registered under the same
    name serves cpu tensors, and a registered gradient makes it differentiable)."""

    def __init__(self, name: str, n_inputs, attrs: tuple):
        self.name, self.n_inputs, self.attrs = name, n_inputs, attrs

    def __call__(self, *tensors, **attrs):
        from webgrad.engine import run_kernel
        if self.n_inputs is not None and len(tensors) != self.n_inputs:
            raise TypeError(f"{self.name}: expected {self.n_inputs} tensor(s), got {len(tensors)}")
        return run_kernel(self.name, *tensors, **attrs)

    def __repr__(self):
        return f"<WGSL kernel {self.name!r}>"


def _check_names(fn: str, kind: str, names) -> tuple:
    names = tuple(names)
    for n in names:
        if not isinstance(n, str) or not _NAME.match(n):
            raise ValueError(f"{fn}: {kind} name {n!r} is not a WGSL identifier")
    if len(set(names)) != len(names):
        raise ValueError(f"{fn}: {kind} names {names} repeat")
    return names


def _attr_values(name: str, declared: tuple, attrs: dict) -> list:
    if set(attrs) != set(declared):
        raise TypeError(f"{name}: takes attrs {declared}, got {tuple(sorted(attrs))}")
    try:
        return [float(attrs[a]) for a in declared]
    except (TypeError, ValueError):
        raise TypeError(f"{name}: attrs must be numbers (they travel as f32), got {attrs}") from None


def _register(fn_name: str, name: str, kernel) -> None:
    """Register ``kernel(be, *arrays, **attrs)`` for every GPU backend name, warning once
    (at the caller's line) when one of them already has a kernel ``name``."""
    from . import _bind
    taken = [b for b in GPU_BACKENDS if name in registry.kernels_for_backend(b)]
    if taken:
        warnings.warn(f"{fn_name}: kernel {name!r} was already registered for {', '.join(taken)}; replacing it",
                      UserWarning, stacklevel=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for b in GPU_BACKENDS:
            registry.register_kernel(name, b, _bind(kernel, b, registry, name))


# ---------------------------------------------------------------- elementwise from an expression


def wgsl_elementwise(name: str, expr: str, inputs=("x",), attrs=(), dtype="float32") -> WgslOp:
    """Register kernel ``name`` on the GPU backends as ``out = expr`` elementwise, where
    ``expr`` is WGSL over the inputs and attrs by name, all ``f32`` (int, bool and float16 inputs are
    converted); its value is ``f32``, ``i32`` or ``bool`` for ``dtype`` float32, int32, bool (``f32`` for
    float16 too, rounded to half when stored, where the device has float16).
    Inputs broadcast against each other; the output has the broadcast shape. Returns the op.

    >>> import webgrad as wg
    >>> swish = wg.wgsl_elementwise("Swish", "x / (1.0 + exp(-beta * x))", attrs=("beta",))  # doctest: +SKIP
    >>> swish(wg.tensor([0.0, 1.0], backend="wgpu"), beta=1.0).tolist()  # doctest: +SKIP
    [0.0, 0.7310585975646973]
    """
    fn = "wgsl_elementwise"
    inputs, attrs = _check_names(fn, "input", inputs), _check_names(fn, "attr", attrs)
    _check_names(fn, "input and attr", inputs + attrs)
    out_dtype = to_dtype(dtype)
    if out_dtype.name not in WGSL_TYPES:
        raise TypeError(f"{fn}: dtype {out_dtype.name} has no WGSL form; use float32, int32 or bool")
    ret = {"bool": "bool", "float16": "f32"}.get(out_dtype.name) or WGSL_TYPES[out_dtype.name]
    params = ", ".join(f"{a}: f32" for a in inputs + attrs)
    # the expression starts a line of its own, so the compiler's columns are the user's
    extra = f"fn user_({params}) -> {ret} {{ return\n{user_source(name, expr)}; }}\n"
    args = [f"f32(x{k})" for k in range(len(inputs))] + [f"uf(U_p + {k}u)" for k in range(len(attrs))]
    call = f"user_({', '.join(args)})"
    expr_out = f"select(O(0), O(1), {call})" if out_dtype is bool_ else f"O({call})"

    def kernel(be, *arrays, **attr_values):
        if len(arrays) != len(inputs):
            raise TypeError(f"{name}: expected {len(inputs)} input(s) {inputs}, got {len(arrays)}")
        values = _attr_values(name, attrs, attr_values)
        be._check_dtype(out_dtype)
        shape = broadcast_shapes(*[a.shape for a in arrays], op=name)
        return elementwise(be, name, expr_out, list(arrays), shape, out_dtype, params=values + [0.0] * (2 - len(values)),
                           extra=extra, vec4=False)
    kernel.__name__ = name
    _register(fn, name, kernel)
    return WgslOp(name, len(inputs), attrs)


# ---------------------------------------------------------------- full compute shaders


def prelude(n_inputs: int, in_dtypes, out_dtype, ranks, attrs, wg: int) -> str:
    """The WGSL put before a ``wgsl_kernel`` source: bindings, the uniform block ``u`` and helpers.

    >>> print(prelude(1, ["float32"], "float32", [2, 2], ("beta",), 64))  # doctest: +NORMALIZE_WHITESPACE
    const WG: u32 = 64u;
    @group(0) @binding(0) var<storage, read> in0: array<f32>;
    @group(0) @binding(1) var<storage, read_write> out: array<f32>;
    struct Uniforms {
      shape_out: vec4<u32>,
      shape_in0: vec4<u32>,
      size_out: u32,
      size_in0: u32,
      beta: f32,
    };
    @group(0) @binding(2) var<uniform> u: Uniforms;
    const RANK_OUT: u32 = 2u;
    const RANK_IN0: u32 = 2u;
    fn flat_index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid; }
    """
    tensors = ["out"] + [f"in{k}" for k in range(n_inputs)]
    lines = [f"const WG: u32 = {wg}u;"]
    lines += [f"@group(0) @binding({k}) var<storage, read> in{k}: array<{WGSL_TYPES[t]}>;"
              for k, t in enumerate(in_dtypes)]
    lines.append(f"@group(0) @binding({n_inputs}) var<storage, read_write> out: array<{WGSL_TYPES[out_dtype]}>;")
    lines.append("struct Uniforms {")
    lines += [f"  shape_{t}: vec4<u32>," for t in tensors]
    lines += [f"  size_{t}: u32," for t in tensors]
    lines += [f"  {a}: f32," for a in attrs]
    lines += ["};", f"@group(0) @binding({n_inputs + 1}) var<uniform> u: Uniforms;"]
    lines += [f"const RANK_{t.upper()}: u32 = {r}u;" for t, r in zip(tensors, ranks)]
    lines.append("fn flat_index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 "
                 "{ return (wid.y * nwg.x + wid.x) * WG + lid; }")
    return "\n".join(lines) + "\n"


class ShaderProgram(Program):
    """A Program whose code is a user's whole shader behind :func:`prelude` (entry ``main``)."""

    def __init__(self, label: str, code: str, n_read: int, attrs: tuple, wg: int):
        self.label, self.entry, self.wg, self.code = label, "main", wg, code
        self.n_read, self.n_write = n_read, 1
        tensors = ["out"] + [f"in{k}" for k in range(n_read)]
        self.fields = ([(f"shape_{t}", "u32") for t in tensors for _ in range(MAX_RANK)]
                       + [(f"size_{t}", "u32") for t in tensors] + [(a, "f32") for a in attrs])
        self.fmt = uniform_format(self.fields)


def check_entry_point(name: str, source: str, wg: int, flat: bool) -> None:
    """Raise a :class:`WgslError` naming kernel ``name`` and the cause when ``source`` has no
    ``@compute`` entry point ``main`` with a ``@workgroup_size``, when that size is beyond what
    WebGPU runs, or, for a ``flat`` dispatch (``ceil(size_out / wg)`` workgroups), when it is not
    ``wg`` invocations. Sizes written other than as literals or ``WG`` are left to WebGPU.

    >>> check_entry_point("K", "@compute @workgroup_size(8, 8) fn main() {}", 64, flat=True)
    >>> check_entry_point("K", "@compute @workgroup_size(WG) fn mian() {}", 64, flat=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    webgrad.backends.gpu.program.WgslError: WGSL kernel 'K': the shader has no entry point `fn main` ...
    """
    text = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), source)    # comments blanked, offsets kept
    main = _MAIN.search(text)
    if main is None:
        raise WgslError(f"WGSL kernel {name!r}: the shader has no entry point `fn main` (write "
                        f"`@compute @workgroup_size(WG) fn main(...)`)", name, None, None)
    start = max(text.rfind("}", 0, main.start()), text.rfind(";", 0, main.start())) + 1
    head, where = text[start:main.start()], _place(text, main.start())
    size = _WORKGROUP_SIZE.search(head)
    if "@compute" not in head or size is None:
        raise WgslError(f"WGSL kernel {name!r}: line {where[0]}: `fn main` needs the attributes `@compute "
                        f"@workgroup_size(WG)`", name, *where)
    dims = [_LITERAL.match(d.strip()) or d.strip() for d in size.group(1).split(",") if d.strip()]
    dims = [wg if d == "WG" else int(d.group(1)) if isinstance(d, re.Match) else None for d in dims]
    if None in dims:
        return
    problem = _workgroup_problem(dims, wg, flat)
    if problem:
        line, column = _place(text, start + size.start())
        raise WgslError(f"WGSL kernel {name!r}: line {line}, column {column}: @workgroup_size({size.group(1).strip()}) "
                        f"{problem}", name, line, column)


def _workgroup_problem(dims: list, wg: int, flat: bool) -> str | None:
    """What is wrong with a workgroup of ``dims`` (see check_entry_point), or None."""
    invocations = 1
    for d in dims:
        invocations *= d
    limits = [WORKGROUP_LIMITS[k] for k in "xyz"][:len(dims)]
    if not 1 <= len(dims) <= 3 or min(dims) < 1 or any(d > m for d, m in zip(dims, limits)) \
            or invocations > WORKGROUP_LIMITS["invocations"]:
        x, y, z = (WORKGROUP_LIMITS[k] for k in "xyz")
        return (f"is not a workgroup WebGPU runs (1 to 3 sizes, each from 1 to {x}, {y}, {z}, and at most "
                f"{WORKGROUP_LIMITS['invocations']} invocations in all)")
    if flat and invocations != wg:
        return (f"runs {invocations} invocations per workgroup, but the dispatch covers size_out with "
                f"workgroups of workgroup_size={wg} (WG): write @workgroup_size(WG), pass "
                f"workgroup_size={invocations}, or give a grid")
    return None


def _place(text: str, offset: int) -> tuple:
    """(line, column), 1-based, of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def _padded(shape) -> list:
    return list(shape) + [1] * (MAX_RANK - len(shape))


def wgsl_kernel(name: str, source: str, output, attrs=(), workgroup_size: int = 64, grid=None) -> WgslOp:
    """Register kernel ``name`` on the GPU backends as the compute shader ``source`` (entry
    ``main``), behind a generated prelude (see :func:`prelude`): inputs ``in0..`` (read),
    ``out`` (read_write), the uniform block ``u`` (``shape_out``, ``shape_in0``... as
    ``vec4<u32>`` padded with 1, ``size_out``, ``size_in0``..., then the f32 ``attrs`` by name),
    constants ``WG`` and ``RANK_OUT``/``RANK_IN0``..., and ``flat_index(wid, nwg, lid)``.
    ``output(shapes, attrs)`` gives the output's (shape, dtype); the dispatch is
    ``ceil(size_out / workgroup_size)`` workgroups (split over y beyond 65535), or
    ``grid(shapes, attrs)`` (an int or an (x, y, z) tuple). Shapes have rank at most 4.

    >>> import webgrad as wg
    >>> rev = wg.wgsl_kernel("Rev", "...", output=lambda shapes, attrs: (shapes[0], "float32"))  # doctest: +SKIP
    """
    fn = "wgsl_kernel"
    attrs = _check_names(fn, "attr", attrs)
    wg = int(workgroup_size)
    if not 1 <= wg <= 256:
        raise ValueError(f"{fn}: workgroup_size must be in 1..256 (WebGPU's default limit), got {workgroup_size}")

    def kernel(be, *arrays, **attr_values):
        values = _attr_values(name, attrs, attr_values)
        shapes = tuple(a.shape for a in arrays)
        out_shape, out_dtype = output(shapes, dict(attr_values))
        out_shape, out_dtype = tuple(int(d) for d in out_shape), to_dtype(out_dtype)
        be._check_dtype(out_dtype)
        ranks = [len(out_shape)] + [len(s) for s in shapes]
        if max(ranks) > MAX_RANK:
            raise ValueError(f"{name}: WGSL kernels take shapes of rank <= {MAX_RANK}; got {out_shape} from {shapes}")
        if 5 * len(ranks) + len(attrs) > UNIFORM_WORDS:
            raise ValueError(f"{name}: {len(arrays)} inputs and {len(attrs)} attrs overflow the "
                             f"{UNIFORM_WORDS}-word uniform block")
        out = fill(be, shape=out_shape, value=0, dtype=out_dtype)   # zeros where the shader writes nothing
        in_dtypes = [a.dtype.name for a in arrays]
        key = ("wgsl", name, source, tuple(ranks), tuple(in_dtypes), out_dtype.name, wg)

        def build():
            check_entry_point(name, source, wg, flat=grid is None)
            code = prelude(len(arrays), in_dtypes, out_dtype.name, ranks, attrs, wg) + user_source(name, source)
            code = with_enables(code)
            return ShaderProgram(name, code, len(arrays), attrs, wg)
        sizes = [out.size] + [a.size for a in arrays]
        uniforms = [d for s in (out_shape,) + shapes for d in _padded(s)] + sizes + values
        groups = -(-out.size // wg) if grid is None else grid(shapes, dict(attr_values))
        if isinstance(groups, (tuple, list)):
            groups = tuple(int(g) for g in groups) + (1,) * (3 - len(groups))
        be.run(key, build, list(arrays), [out], uniforms, groups)
        return out
    kernel.__name__ = name
    _register(fn, name, kernel)
    return WgslOp(name, None, attrs)


__all__ = ["WgslError", "WgslOp", "prelude", "wgsl_elementwise", "wgsl_kernel"]
