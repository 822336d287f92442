"""Gradients of the binary kernels (the engine sums broadcast gradients back to each input's shape).
The hot ones call kernels directly: their operands already share a dtype and broadcast."""
from .. import kernel_names as K
from ..engine import run_kernel
from ..registry import register_gradient
from .complex import conj


def _ops():
    import webgrad as wg
    return wg


@register_gradient(K.ADD, kernel=K.ADD_GRAD)
def _add(dy, saved, attrs):
    return dy, dy


@register_gradient(K.SUB, kernel=K.SUB_GRAD)
def _sub(dy, saved, attrs):
    return dy, (run_kernel(K.NEG, dy) if saved.edges[1] is not None else None)


@register_gradient(K.MUL, inputs_to_save=True, kernel=K.MUL_GRAD, saved_for=[[1], [0]])
def _mul(dy, saved, attrs):
    a, b = saved
    need_a, need_b = saved.edges
    return (run_kernel(K.MUL, dy, conj(b)) if need_a is not None else None,
            run_kernel(K.MUL, dy, conj(a)) if need_b is not None else None)


@register_gradient(K.DIV, inputs_to_save=True, kernel=K.DIV_GRAD, saved_for=[[1], [0, 1]])
def _div(dy, saved, attrs):
    a, b = conj(saved[0]), conj(saved[1])   # (complex: PyTorch's conjugates)
    # PyTorch's order of operations (-dy * ((a / b) / b)): the same over- and underflows
    return dy / b, -dy * (a / b / b)


@register_gradient(K.FLOOR_DIVIDE)
def _floor_divide(dy, saved, attrs):
    """Zero almost everywhere (PyTorch's rule): the gradients are zeros."""
    wg = _ops()
    return wg.zeros_like(dy), wg.zeros_like(dy)


@register_gradient(K.REMAINDER, inputs_to_save=True, saved_for=[[], [0, 1]])
def _remainder(dy, saved, attrs):
    """a % b = a - b * (a // b): dy for a, -dy * (a // b) for b."""
    a, b = saved
    return dy, (-dy * run_kernel(K.FLOOR_DIVIDE, a, b) if saved.edges[1] is not None else None)


@register_gradient(K.FMOD, inputs_to_save=True, saved_for=[[], [0, 1]])
def _fmod(dy, saved, attrs):
    """fmod(a, b) = a - b * trunc(a / b): dy for a, -dy * trunc(a / b) for b."""
    a, b = saved
    return dy, (-dy * _ops().div(a, b, rounding_mode="trunc") if saved.edges[1] is not None else None)


@register_gradient(K.POW, inputs_to_save=[0, 1], outputs_to_save=[0], saved_for=[[0, 1], [0, 1, 2]])
def _pow(dy, saved, attrs):
    wg = _ops()
    a, b, y = saved
    if a._dtype.is_complex:
        return _complex_pow(wg, dy, a, b, y, saved.edges[1] is not None)
    da = wg.where(b == 0, 0.0, dy * b * a ** (b - 1))
    # d/db = a ** b * log(a): NaN for a < 0 and -inf * ... at a == 0 with b < 0, as PyTorch's; 0 at a == 0, b >= 0
    db = wg.where((a == 0) & (b >= 0), 0.0, dy * y * wg.log(a)) if saved.edges[1] is not None else None
    return da, db


def _complex_pow(wg, dy, a, b, y, need_b):
    """PyTorch's complex pow_backward: ``dy * conj(b * a ** (b - 1))`` (0 where b is 0) and
    ``dy * conj(a ** b * log(a))`` (0 where a is 0 and b is real and >= 0)."""
    da = wg.where(b == 0, 0.0, dy * conj(b * a ** (b - 1)))
    if not need_b:
        return da, None
    real_b = b.real
    keep = (a == 0) & (b.imag == 0) & (real_b >= 0)
    return da, wg.where(keep, 0.0, dy * conj(y * wg.log(a)))


def _share(dy, a, b):
    """dy for a and for b in ``maximum(a, b)``, as PyTorch's rule: all of it to the larger, half each
    on a tie, and all of it to both where either is NaN (neither is smaller)."""
    wg = _ops()
    half = wg.where(a == b, dy * 0.5, dy)
    return wg.where(a < b, 0.0, half), wg.where(a > b, 0.0, half)


@register_gradient(K.MAXIMUM, inputs_to_save=True)
def _maximum(dy, saved, attrs):
    return _share(dy, *saved)


@register_gradient(K.MINIMUM, inputs_to_save=True)
def _minimum(dy, saved, attrs):
    da, db = _share(dy, *saved)
    return db, da


@register_gradient(K.ATAN2, inputs_to_save=True)
def _atan2(dy, saved, attrs):
    a, b = saved
    r2 = a * a + b * b
    scale = run_kernel(K.WHERE, r2 == 0, r2, dy / r2)   # 0 at (0, 0), as PyTorch's
    return scale * b, -scale * a


@register_gradient(K.WHERE, inputs_to_save=[0], kernel=K.WHERE_GRAD)
def _where(dy, saved, attrs):
    wg = _ops()
    (cond,) = saved
    return None, wg.where(cond, dy, 0.0), wg.where(cond, 0.0, dy)
