"""Argument checks the optimizers share: PyTorch's range for each hyper-parameter (``ValueError``,
with PyTorch's wording plus the optimizer's name and the range wanted), and the execution flags
PyTorch accepts (``foreach``, ``fused``, ``capturable``, ``differentiable``).

>>> check_ranges("SGD", lr=-1.0)
Traceback (most recent call last):
ValueError: SGD: Invalid learning rate: -1.0 (wanted >= 0)
"""
from __future__ import annotations

from ..tensor import Tensor


def _at_least_zero(v):
    return 0.0 <= v


# name -> (what PyTorch's message calls it, the range in words, the test)
_RANGES = {
    "lr": ("learning rate", ">= 0", _at_least_zero),
    "eps": ("epsilon value", ">= 0", _at_least_zero),
    "weight_decay": ("weight_decay value", ">= 0", _at_least_zero),
    "momentum": ("momentum value", ">= 0", _at_least_zero),
    "alpha": ("alpha value", ">= 0", _at_least_zero),
    "lr_decay": ("lr_decay value", ">= 0", _at_least_zero),
    "initial_accumulator_value": ("initial_accumulator_value value", ">= 0", _at_least_zero),
    "momentum_decay": ("momentum_decay value", ">= 0", _at_least_zero),
    "rho": ("rho value", "in [0, 1]", lambda v: 0.0 <= v <= 1.0),
}


def check_ranges(opt: str, **values) -> None:
    """Raise ``ValueError`` for the first value outside PyTorch's range for its name (a tensor
    value, as PyTorch allows for ``lr``, must hold one element)."""
    for name, value in values.items():
        if isinstance(value, Tensor) and value.numel() != 1:
            raise ValueError(f"{opt}: Tensor {name} must be 1-element, got {value.numel()} elements")
        label, wanted, ok = _RANGES[name]
        if not ok(value):
            raise ValueError(f"{opt}: Invalid {label}: {value} (wanted {wanted})")


def check_betas(opt: str, betas, same_type: bool = False) -> tuple:
    """``betas`` as a tuple of floats, each in [0, 1); ``same_type`` (Adam's rule): both floats or
    both one-element tensors.

    >>> check_betas("Adam", (0.9, 1.0))
    Traceback (most recent call last):
    ValueError: Adam: Invalid beta parameter at index 1: 1.0 (wanted 0 <= beta < 1)
    """
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"{opt}: Invalid beta parameter at index {i}: {beta} (wanted 0 <= beta < 1)")
    if same_type and not (all(isinstance(b, float) for b in betas) or all(isinstance(b, Tensor) for b in betas)):
        raise ValueError(f"{opt}: betas must be either both floats or both Tensors, got "
                         f"{tuple(type(b).__name__ for b in betas)}")
    return tuple(to_scalar(b) for b in betas)


def check_flags(opt: str, *, differentiable=False, fused=None, foreach=None) -> None:
    """``foreach``, ``fused`` and ``capturable`` choose how PyTorch runs the same update on CUDA and
    have no effect here; ``differentiable=True`` (recording the step for autograd) is refused, since
    here the step never joins the graph."""
    if differentiable:
        raise NotImplementedError(f"{opt}: differentiable=True (taping the optimizer step for autograd) is not "
                                  f"supported; webgrad runs every step under no_grad")
    if fused and foreach:
        raise RuntimeError(f"{opt}: `fused` and `foreach` cannot be `True` together.")


def to_scalar(value):
    """A Python number for a hyper-parameter given as a one-element tensor (PyTorch allows
    tensor ``lr`` and ``betas``); anything else unchanged."""
    return value.item() if isinstance(value, Tensor) else value


__all__ = ["check_ranges", "check_betas", "check_flags", "to_scalar"]
