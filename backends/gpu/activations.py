"""The Softmax family along one axis (``kernels/softmax.wgsl``: a workgroup or a thread per row,
see rows.py; rows too long for one kernel's loops take their statistics from the backend's
reductions) and GeluGrad (an elementwise map through ``elementwise``, with helpers.wgsl's erf)."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import View, elementwise
from .program import Program
from .reduce import reduction, sum_exp
from .rows import WG, fits, row_groups, row_variant
from .runtime import GpuArray

_SUM, _MAX = reduction(K.SUM), reduction(K.MAX)

# kernel -> (inputs, needs the row max, summand at j given m, output at j given m and the sum s)
_ROWS = {
    K.SOFTMAX: (("in0",), True, "exp(in0[j] - m)", "exp(in0[j] - m) / s"),
    K.LOG_SOFTMAX: (("in0",), True, "exp(in0[j] - m)", "in0[j] - m - log(s)"),
    K.SOFTMAX_GRAD: (("in0", "in1"), False, "in0[j] * in1[j]", "in1[j] * (in0[j] - s)"),
    K.LOG_SOFTMAX_GRAD: (("in0", "in1"), False, "in0[j]", "in0[j] - exp(in1[j]) * s"),
}


# for rows too long for the row kernel: kernel -> (the row's statistics: "max and sum_exp" (of x0), or
# the summand of a Sum, an expression in the inputs; the output at each element, an expression in
# the inputs followed by the row's statistics (x1, x2 after one input, x2 after two))
_LONG = {
    K.SOFTMAX: ("max and sum_exp", "exp(x0 - x1) / x2"),
    K.LOG_SOFTMAX: ("max and sum_exp", "x0 - x1 - log(x2)"),
    K.SOFTMAX_GRAD: ("x0 * x1", "x1 * (x0 - x2)"),
    K.LOG_SOFTMAX_GRAD: ("x0", "x0 - exp(x1) * x2"),
}


def _long_rows(be, name, arrays, outer, n, inner):
    """The kernel ``name`` over [outer, n, inner] views of ``arrays`` with the reductions (multi-pass,
    so any n) and one elementwise map: every shader loop stays short whatever the row's length."""
    shape3 = (outer, n, inner)
    views = [GpuArray(a.storage, shape3, a.dtype) for a in arrays]
    statistic, value = _LONG[name]
    if statistic == "max and sum_exp":
        m = _MAX(be, views[0], axes=(1,), keepdim=True)
        stats = [m, sum_exp(be, views[0], m, 1)]
    else:
        summand = views[0] if statistic == "x0" else elementwise(be, name, statistic, views, shape3, views[0].dtype)
        stats = [_SUM(be, summand, axes=(1,), keepdim=False)]
    along = [View(t, 0, (inner, 0, 1)) for t in stats]        # one value per row, read across the row
    out = elementwise(be, name, value, views + along, shape3, views[0].dtype)
    return GpuArray(out.storage, arrays[0].shape, out.dtype)


def _along(name):
    inputs, needs_max, term, value = _ROWS[name]

    def fn(be, *arrays, axis):
        shape = arrays[0].shape
        n, outer, inner = shape[axis], 1, 1
        for d in shape[:axis]:
            outer *= d
        for d in shape[axis + 1:]:
            inner *= d
        rows = outer * inner
        if rows and n and not fits(n):
            return _long_rows(be, name, arrays, outer, n, inner)
        out = be.alloc(shape, arrays[0].dtype)
        if rows == 0 or n == 0:
            return out
        long = row_variant(n)

        def build():
            subs = {**long, "MAX": str(needs_max).lower(), "TERM": term, "VALUE": value}
            return Program(name, "softmax", inputs=[(v, "f32") for v in inputs], outputs=[("out", "f32")], wg=WG,
                           uniforms=[("rows", "u32", 1), ("n", "u32", 1), ("inner", "u32", 1)], subs=subs)
        be.run(("rows", name, long["LANES"]), build, list(arrays), [out], [rows, n, inner], row_groups(rows, n))
        return out
    return fn


# dy * gelu'(x): Phi(x) + x phi(x), or the tanh form's derivative (PyTorch's formula)
_GELU_GRAD = {
    "none": "x0 * (T0(0.5) * (T0(1.0) + erf_(x1 * T0(0.7071067811865476)))"
            " + x1 * exp(T0(-0.5) * x1 * x1) * T0(0.3989422804014327))",
    "tanh": "gelu_tanh_grad_(x0, x1)",
}
_TANH_GRAD = """fn gelu_tanh_grad_(dy: F, x: F) -> F {
    let t = tanh_(F(0.7978845608028654) * (x + F(0.044715) * x * x * x));
    let slope = F(0.7978845608028654) * (F(1.0) + F(3.0 * 0.044715) * x * x);
    return dy * (F(0.5) * (F(1.0) + t) + F(0.5) * x * (F(1.0) - t * t) * slope);
}
"""


def gelu_grad(be, dy, x, y, *, approximate):
    """dy * gelu'(x) from x (y = gelu(x), which the cpu kernel reads Phi off, is not needed here:
    erf costs a shader a few instructions)."""
    if approximate not in _GELU_GRAD:
        raise ValueError(f"GeluGrad: approximate must be 'none' or 'tanh', got {approximate!r}")
    return elementwise(be, K.GELU_GRAD, _GELU_GRAD[approximate], [dy, x], x.shape, x.dtype,
                       extra=_TANH_GRAD if approximate == "tanh" else "")


KERNELS = {**{name: _along(name) for name in _ROWS}, K.GELU_GRAD: gelu_grad}
