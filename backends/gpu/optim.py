"""Optimizer-update kernels: one Adam/AdamW step of a parameter as one dispatch (``kernels/adam_step.wgsl``),
in the order of operations of the cpu kernel (``backends/cpu/optim.py``) and PyTorch's single-tensor Adam."""
from __future__ import annotations

from webgrad import kernel_names as K

from .elementwise import WG
from .program import Program

_UNIFORMS = [("n", "u32", 1), ("maximize", "u32", 1), ("decay", "f32", 1), ("wd", "f32", 1), ("w1", "f32", 1),
             ("beta2", "f32", 1), ("c2", "f32", 1), ("corr2", "f32", 1), ("eps", "f32", 1), ("step_size", "f32", 1)]


def _program():
    return Program(K.ADAM_STEP, "adam_step", inputs=[("p", "f32"), ("grad", "f32"), ("m", "f32"), ("v", "f32")],
                   outputs=[("p_out", "f32"), ("m_out", "f32"), ("v_out", "f32")], wg=WG, uniforms=_UNIFORMS)


def adam_step(be, p, grad, m, v, *, decay, weight_decay, beta1, beta2, eps, correction2, step_size, maximize):
    outs = [be.alloc(p.shape, p.dtype) for _ in range(3)]
    n = p.size
    if n:
        numbers = [n, int(bool(maximize)), decay, weight_decay, 1 - beta1, beta2, 1 - beta2, correction2, eps,
                   step_size]   # the per-step numbers as they are (a plan the device holds writes them there)
        be.run(("adam_step",), _program, [p, grad, m, v], outs, numbers, -(-n // WG))
    return tuple(outs)


KERNELS = {K.ADAM_STEP: adam_step}
