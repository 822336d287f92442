"""Elementwise pieces the update rules share, written in PyTorch's order of operations (so
float64 runs agree with PyTorch to the last bits and float32 runs to rounding), plus the
float32 rounding PyTorch applies to the scalars it keeps in float32 tensors.

>>> import webgrad as wg
>>> lerp(wg.tensor([0.0]), wg.tensor([10.0]), 0.25).tolist()
[2.5]
"""
from __future__ import annotations

from ..dtypes import round_to_float32
from ..tensor import Tensor


def write_state(state: dict, key: str, value):
    """Make ``state[key]`` hold ``value`` and return it: written into the tensor already there (in
    place, as PyTorch's optimizers update their state, so a tensor a user holds, or a ``state_dict()``
    taken earlier, sees the new values), or stored when the key is new.

    >>> import webgrad as wg
    >>> state = {"m": wg.zeros(2)}; held = state["m"]
    >>> write_state(state, "m", wg.ones(2)) is held, held.tolist()
    (True, [1.0, 1.0])
    """
    held = state.get(key)
    if isinstance(held, Tensor):
        return held._assign(value, "optimizer.step")
    state[key] = value
    return value


def with_weight_decay(grad, p, weight_decay):
    """``grad + weight_decay * p`` (PyTorch's L2 penalty, ``grad.add(p, alpha=wd)``); ``grad`` when 0."""
    return grad if weight_decay == 0 else grad + p * weight_decay


def lerp(start, end, weight: float):
    """``start + weight * (end - start)``, from the far end when ``weight >= 0.5`` (as ``torch.lerp``)."""
    if abs(weight) < 0.5:
        return start + (end - start) * weight
    return end - (end - start) * (1 - weight)


def addcmul(x, t1, t2, value: float):
    """``x + value * t1 * t2`` (``torch.addcmul``'s order)."""
    return x + (t1 * t2 if value == 1 else t1 * value * t2)


def square_average(avg, grad, decay: float):
    """``avg * decay + (1 - decay) * grad²``: the running mean of squared gradients."""
    return addcmul(avg * decay, grad, grad, 1 - decay)


def f32_mul(a: float, b: float) -> float:
    """``a * b`` as a float32 tensor times a Python number gives it (both rounded, then the product)."""
    return round_to_float32(round_to_float32(a) * round_to_float32(b))


__all__ = ["write_state", "with_weight_decay", "lerp", "addcmul", "square_average", "f32_mul"]
