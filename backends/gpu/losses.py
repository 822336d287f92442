"""Fused-loss kernels: SoftmaxCrossEntropy, a thread per row for rows of at most ``ROW_MAX``
classes; longer rows take their max and sum of exponentials from the backend's (multi-pass)
reductions first, so no shader loop runs longer than ``ROW_MAX`` (some implementations stop a
shader's loops after 65535 iterations: Mesa's lavapipe). Then for 'sum' and 'mean' the backend's
own Sum reduction (and for 'mean' one division)."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import WG, View, elementwise
from .program import Program
from .reduce import reduction as _reduction, sum_exp

_NAN_BITS = 0x7FC00000   # a float32 quiet NaN
_SUM, _MAX = _reduction(K.SUM), _reduction(K.MAX)
_REDUCTIONS = ("none", "sum", "mean")
ROW_MAX = 4096           # classes a row may have for one thread to read it (twice: 8192 iterations)

# the row's max m and sum of exponentials s: read by the thread (two loops of C), or given. (A NaN
# in the row makes s NaN whatever m is: WGSL's max may skip it.)
_ROW = {False: """    var m = x[base];
    for (var j = 1u; j < c; j++) { m = max(m, x[base + j]); }       // C <= ROW_MAX times
    var s = 0.0;
    for (var j = 0u; j < c; j++) { s += exp(x[base + j] - m); }     // C <= ROW_MAX times""",
        True: """    let m = mx[r];
    let s = sx[r];"""}


def softmax_cross_entropy(be, x, target, *, ignore_index, reduction):
    """Per-row losses [N] ('none'), their sum, or their mean over the kept rows (0-d; NaN when no
    row is kept). For 'mean' the row kernel also writes each row's kept flag (1.0 or 0.0) after
    the losses, so one Sum over [2, N] gives (total, kept) and one division the mean."""
    if reduction not in _REDUCTIONS:
        from webgrad.nn.functional._utils import check_reduction
        check_reduction(reduction, K.SOFTMAX_CROSS_ENTROPY)
    n, c = x.shape
    mean = reduction == "mean"
    rows = be.alloc((2, n) if mean else (n,), x.dtype)
    if n:
        long = c > ROW_MAX
        extra = _row_stats(be, x) if long else []
        flags, slot = be.index_flags(K.SOFTMAX_CROSS_ENTROPY, c)

        def build():
            ins = [("x", "f32"), ("tgt", "i32")] + ([("mx", "f32"), ("sx", "f32")] if long else [])
            return Program(K.SOFTMAX_CROSS_ENTROPY, "softmax_cross_entropy", inputs=ins,
                           outputs=[("loss", "f32")], wg=WG, checks_indices=True,
                           subs={"ROW": _ROW[long]},
                           uniforms=[("n", "u32", 1), ("c", "u32", 1), ("ignore", "i32", 1), ("nan", "u32", 1),
                                     ("count", "u32", 1)])
        be.run(("softmax_cross_entropy", long), build, [x, target, *extra], [rows, flags],
               [n, c, ignore_index, _NAN_BITS, int(mean), slot], -(-n // WG))
    if reduction == "none":
        return rows
    sums = _SUM(be, rows, axes=(len(rows.shape) - 1,), keepdim=False)
    if not mean:
        return sums
    # total / kept, NaN (from a uniform: WGSL has no NaN constant) when no row is kept
    return elementwise(be, K.SOFTMAX_CROSS_ENTROPY, "select(x0 / x1, p0, x1 == 0.0)",
                       [View(sums, 0, ()), View(sums, 1, ())], (), x.dtype, params=(float("nan"), 0.0))


def _row_stats(be, x):
    """[max, sum of exp(x - max)] of each row of ``x`` [N, C] ([N, 1] and [N]), by the backend's reductions."""
    m = _MAX(be, x, axes=(1,), keepdim=True)
    return [m, sum_exp(be, x, m, 1)]


KERNELS = {K.SOFTMAX_CROSS_ENTROPY: softmax_cross_entropy}
