"""Gradients of the windows kernels: Im2Col and Col2Im are each other's adjoint, so each
one's gradient is the other (and conv/pooling get gradients of any order)."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..registry import register_gradient


@register_gradient(K.IM2COL, kernel=K.IM2COL_GRAD)
def _im2col_grad(dy, saved, attrs):
    return (run_kernel(K.COL2IM, dy, output_size=tuple(saved.shapes[0][2:]), **attrs),)


@register_gradient(K.COL2IM)
def _col2im_grad(dy, saved, attrs):
    attrs = {k: v for k, v in attrs.items() if k != "output_size"}
    return (run_kernel(K.IM2COL, dy, **attrs),)
