"""Fused-loss kernels: SoftmaxCrossEntropy, a thread per row (rows are short: a row's classes)."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import WG
from .program import Program

_NAN_BITS = 0x7FC00000   # a float32 quiet NaN


def softmax_cross_entropy(be, x, target, *, ignore_index):
    n, c = x.shape
    out = be.alloc((n,), x.dtype)
    if n == 0:
        return out

    def build():
        return Program(K.SOFTMAX_CROSS_ENTROPY, "softmax_cross_entropy", inputs=[("x", "f32"), ("tgt", "i32")],
                       outputs=[("loss", "f32")], wg=WG,
                       uniforms=[("n", "u32", 1), ("c", "u32", 1), ("ignore", "i32", 1), ("nan", "u32", 1)])
    be.run(("softmax_cross_entropy",), build, [x, target], [out], [n, c, ignore_index, _NAN_BITS], -(-n // WG))
    return out


KERNELS = {K.SOFTMAX_CROSS_ENTROPY: softmax_cross_entropy}
