"""Fused-loss kernels: SoftmaxCrossEntropy, a thread per row (rows are short: a row's classes),
then for 'sum' and 'mean' the backend's own Sum reduction (and for 'mean' one division)."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import WG, View, elementwise
from .program import Program
from .reduce import reduction as _reduction

_NAN_BITS = 0x7FC00000   # a float32 quiet NaN
_SUM = _reduction(K.SUM)
_REDUCTIONS = ("none", "sum", "mean")


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
        flags, slot = be.index_flags(K.SOFTMAX_CROSS_ENTROPY, c)

        def build():
            return Program(K.SOFTMAX_CROSS_ENTROPY, "softmax_cross_entropy", inputs=[("x", "f32"), ("tgt", "i32")],
                           outputs=[("loss", "f32")], wg=WG, checks_indices=True,
                           uniforms=[("n", "u32", 1), ("c", "u32", 1), ("ignore", "i32", 1), ("nan", "u32", 1),
                                     ("count", "u32", 1)])
        be.run(("softmax_cross_entropy",), build, [x, target], [rows, flags],
               [n, c, ignore_index, _NAN_BITS, int(mean), slot], -(-n // WG))
    if reduction == "none":
        return rows
    sums = _SUM(be, rows, axes=(len(rows.shape) - 1,), keepdim=False)
    if not mean:
        return sums
    # total / kept, NaN (from a uniform: WGSL has no NaN constant) when no row is kept
    return elementwise(be, K.SOFTMAX_CROSS_ENTROPY, "select(x0 / x1, p0, x1 == 0.0)",
                       [View(sums, 0, ()), View(sums, 1, ())], (), x.dtype, params=(float("nan"), 0.0))


KERNELS = {K.SOFTMAX_CROSS_ENTROPY: softmax_cross_entropy}
