"""LuFactor, TriangularSolve, Cholesky, Geqrf and HouseholderProduct in WGSL (``kernels/lu_*.wgsl``,
``triangular_solve.wgsl``, ``cholesky.wgsl``, ``householder_*.wgsl``, ``eye_batch.wgsl``).

Each is sequential in one index (the pivot step, the row solved, the column factored, the reflector
applied), so each step is a dispatch over the batch: LU takes two per pivot step (the pivot search,
swap and column scaling with one invocation per matrix; the trailing block's rank-1 update with one
per element), a triangular solve one per row (one invocation per matrix and right-hand side), Cholesky
one per column, Householder QR two per column and forming Q one per reflector. No invocation loops
more than about 3n (or 2m) times, under the 65,535 trips after which some implementations (lavapipe)
stop a shader's loops for matrices up to ~21,000 columns (~32,000 rows): ``check_trips`` refuses larger
ones. The cost is a number of dispatches proportional to n.
"""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.dtypes import int32, int64
from webgrad.registry import get_kernel

from .device import GpuLimitError
from .program import Program

WG = 64
LOOP_TRIPS = 65535   # some implementations (Mesa's lavapipe) stop a shader's loops after this many trips


def check_trips(label: str, shape: tuple, trips: int) -> None:
    """Refuse a matrix whose invocations would loop more than ``LOOP_TRIPS`` times, before anything runs."""
    if trips > LOOP_TRIPS:
        raise GpuLimitError(f"{label}: a matrix of shape {tuple(shape)} needs shader loops of {trips} trips on the GPU, "
                            f"past the {LOOP_TRIPS} some devices run; factor it on the cpu backend")


def program(body, inputs, outputs, uniforms, label=None, subs=None):
    """The builder of the program ``kernels/<body>.wgsl`` (labelled with its kernel's name for errors)."""
    label = label or (K.LU_FACTOR if body.startswith("lu") else K.TRIANGULAR_SOLVE)
    return lambda: Program(label, body, inputs=inputs, outputs=outputs, uniforms=uniforms, wg=WG, subs=subs)


_LU_OUT = [("lu", "f32"), ("pivots", "i32"), ("perm", "i32"), ("info", "i32")]
_LU_STEP = [("n", "u32", 1), ("k", "u32", 1), ("count", "u32", 1)]


def lu_factor(be, a):
    n, batch = a.shape[-1], a.shape[:-2]
    check_trips(K.LU_FACTOR, a.shape, 3 * n)
    count = a.size // (n * n) if n else 0
    outs = [be.alloc(a.shape, a.dtype), be.alloc(batch + (n,), int32), be.alloc(batch + (n,), int64),
            be.alloc(batch, int32)]
    if count == 0:   # no matrices, or 0 x 0 ones (whose info is 0)
        outs[3] = get_kernel(K.FILL, be.name)(shape=batch, value=0, dtype=int32)
        return tuple(outs)
    be.run(("lu_init",), program("lu_init", [("a", "f32")], _LU_OUT, [("n", "u32", 1), ("total", "u32", 1)]),
           [a], outs, [n, a.size], -(-a.size // WG))
    for k in range(n):
        be.run(("lu_pivot",), program("lu_pivot", [], _LU_OUT, _LU_STEP), [], outs, [n, k, count], -(-count // WG))
        if k < n - 1:
            block = count * (n - k - 1) ** 2
            be.run(("lu_update",), program("lu_update", [], [("lu", "f32")], _LU_STEP), [], outs[:1],
                   [n, k, count], -(-block // WG))
    return tuple(outs)


def triangular_solve(be, a, b, *, upper, unitriangular):
    n, cols = a.shape[-1], b.shape[-1]
    check_trips(K.TRIANGULAR_SOLVE, a.shape, n)
    x = be.alloc(b.shape, b.dtype)
    count = b.size // (n * cols) if n and cols else 0
    if count == 0:
        return x
    build = program("triangular_solve", [("a", "f32"), ("b", "f32")], [("x", "f32")],
                     [("n", "u32", 1), ("cols", "u32", 1), ("count", "u32", 1), ("row", "u32", 1),
                      ("lo", "u32", 1), ("hi", "u32", 1), ("unit", "u32", 1)])
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        lo, hi = (i + 1, n) if upper else (0, i)
        be.run(("triangular_solve",), build, [a, b], [x], [n, cols, count, i, lo, hi, int(bool(unitriangular))],
               -(-count * cols // WG))
    return x


def cholesky(be, a):
    """A dispatch per column (one invocation per matrix and row at or below the diagonal), after zeros."""
    n, batch = a.shape[-1], a.shape[:-2]
    check_trips(K.CHOLESKY, a.shape, 2 * n)
    fill = get_kernel(K.FILL, be.name)
    l, info = fill(shape=a.shape, value=0.0, dtype=a.dtype), fill(shape=batch, value=0, dtype=int32)
    count = a.size // (n * n) if n else 0
    build = program("cholesky", [("a", "f32")], [("l", "f32"), ("info", "i32")],
                     [("n", "u32", 1), ("j", "u32", 1), ("count", "u32", 1)], K.CHOLESKY)
    for j in range(n if count else 0):
        be.run(("cholesky",), build, [a], [l, info], [n, j, count], -(-count * (n - j) // WG))
    return l, info


_APPLY = [("m", "u32", 1), ("k", "u32", 1), ("count", "u32", 1), ("kmax", "u32", 1), ("xcols", "u32", 1),
          ("ycols", "u32", 1), ("first", "u32", 1)]


def _apply_program(name, inputs, outputs, subs):
    return program("householder_apply", inputs, outputs, _APPLY, name, subs)


def geqrf(be, a):
    """Per column k: the reflector (one invocation per matrix), then its application to the columns
    after k (one per matrix and column)."""
    m, n = a.shape[-2:]
    check_trips(K.GEQRF, a.shape, 2 * m)
    kmax = min(m, n)
    count = a.size // (m * n) if m and n else 0
    r = get_kernel(K.IDENTITY, be.name)(a)
    tau = get_kernel(K.FILL, be.name)(shape=a.shape[:-2] + (kmax,), value=0.0, dtype=a.dtype)
    vector = program("householder_vector", [], [("r", "f32"), ("tau", "f32")],
                      [("m", "u32", 1), ("n", "u32", 1), ("k", "u32", 1), ("count", "u32", 1), ("kmax", "u32", 1)],
                      K.GEQRF)
    apply = _apply_program(K.GEQRF, [], [("r", "f32"), ("tau", "f32")], {"X": "r", "Y": "r", "TAU": "tau"})
    for k in range(kmax if count else 0):
        be.run(("householder_vector",), vector, [], [r, tau], [m, n, k, count, kmax], -(-count // WG))
        if k + 1 < n:
            be.run(("householder_apply", "geqrf"), apply, [], [r, tau], [m, k, count, kmax, n, n, k + 1],
                   -(-count * (n - k - 1) // WG))
    return r, tau


def householder_product(be, a, tau):
    """The identity's first n columns, then one dispatch per reflector, the last first (as orgqr)."""
    m, n = a.shape[-2:]
    check_trips(K.HOUSEHOLDER_PRODUCT, a.shape, 2 * m)
    kmax = tau.shape[-1]
    count = a.size // (m * n) if m and n else 0
    q = be.alloc(a.shape, a.dtype)
    be.run(("eye_batch",), program("eye_batch", [], [("q", "f32")],
                                    [("m", "u32", 1), ("n", "u32", 1), ("total", "u32", 1)], K.HOUSEHOLDER_PRODUCT),
           [], [q], [m, n, a.size], -(-a.size // WG))
    apply = _apply_program(K.HOUSEHOLDER_PRODUCT, [("x", "f32"), ("tau", "f32")], [("q", "f32")],
                           {"X": "x", "Y": "q", "TAU": "tau"})
    for k in reversed(range(kmax if count else 0)):
        be.run(("householder_apply", "orgqr"), apply, [a, tau], [q], [m, k, count, kmax, n, n, 0],
               -(-count * n // WG))
    return q


KERNELS = {K.LU_FACTOR: lu_factor, K.TRIANGULAR_SOLVE: triangular_solve, K.CHOLESKY: cholesky, K.GEQRF: geqrf,
           K.HOUSEHOLDER_PRODUCT: householder_product}
