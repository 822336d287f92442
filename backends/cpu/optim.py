"""cpu optimizer-update kernels: one Adam/AdamW step of a parameter as one kernel (``AdamStep``), in
PyTorch's single-tensor order of operations (what ``torch.optim.Adam`` runs on cpu, where ``foreach``
defaults to off), so that results agree with PyTorch's to rounding (half precision computed in float32
and rounded where PyTorch stores an intermediate). Each pass writes into an
array the kernel made; the inputs are never written, except a parameter donated to it
(``CpuBackend.donate``), which takes the new parameter once every read of it is done."""
import numpy as np

from webgrad import kernel_names as K

from .elementwise import _can_hold, _donated, _quiet
from .registry import cpu_kernel


def _lerp(start, end, weight):
    """``torch.lerp``: ``start + weight * (end - start)``, from the far end when ``weight >= 0.5``."""
    diff = end - start
    if abs(weight) < 0.5:
        diff *= weight
        diff += start
        return diff
    diff *= 1 - weight
    return np.subtract(end, diff, out=diff)


def _rounding(dtype):
    """What rounds an intermediate where PyTorch stores one (after each of its ops): nothing in float32
    and float64; half precision is computed in float32, as PyTorch's cpu ops do, rounded at those points."""
    if dtype.itemsize >= 4:
        return lambda a: a
    return lambda a: a.astype(dtype).astype(np.float32)


@cpu_kernel(K.ADAM_STEP)
@_quiet
def adam_step(p, grad, m, v, *, decay, weight_decay, beta1, beta2, eps, correction2, step_size, maximize):
    """(param, exp_avg, exp_avg_sq) after one Adam step: PyTorch's ``_single_tensor_adam``, without amsgrad."""
    dtype = p.dtype
    into = p if p is _donated[0] and _can_hold(p, grad) else None
    rnd = _rounding(dtype)
    if dtype.itemsize < 4:
        p, grad, m, v = (a.astype(np.float32) for a in (p, grad, m, v))
    g = np.negative(grad) if maximize else grad
    if decay != 1.0:
        p = rnd(p * decay)                   # param.mul_(1 - lr * weight_decay): AdamW's decoupled decay
    if weight_decay != 0:
        g = rnd(g + p * weight_decay)        # grad.add(param, alpha=weight_decay): Adam's L2 penalty
    m = rnd(_lerp(m, g, 1 - beta1))          # exp_avg.lerp_(grad, 1 - beta1)
    v = rnd(v * beta2)                       # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    term = g * (1 - beta2)
    term *= g
    v += term
    v = rnd(v)
    denom = rnd(np.sqrt(v))                  # (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    denom /= correction2
    denom = rnd(denom)
    denom += eps
    denom = rnd(denom)
    step = m * -step_size                    # param.addcdiv_(exp_avg, denom, value=-step_size)
    step /= denom
    if into is None:
        step += p
    else:
        step = np.add(step, p, out=into)
    return tuple(np.asarray(a, dtype=dtype) for a in (step, m, v))   # (0-d inputs give numpy scalars)
