"""Weight initialisation in place (PyTorch's ``torch.nn.init``), drawn from ``generator`` (a
``webgrad.Generator``; None: the default generator) as PyTorch draws: after ``manual_seed(s)``, the
values PyTorch's init functions (and so its modules' constructors) give, on every backend."""
from __future__ import annotations

import math
import warnings

from ..engine import no_grad
from ..ops import binary, creation, random

_GAINS = {"linear": 1.0, "identity": 1.0, "sigmoid": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0,
          "conv_transpose1d": 1.0, "conv_transpose2d": 1.0, "conv_transpose3d": 1.0,
          "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (``leaky_relu`` takes its slope as ``param``).

    >>> round(calculate_gain("relu"), 4)
    1.4142
    """
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity not in _GAINS:
        raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; "
                         f"expected one of {', '.join(sorted(_GAINS))}, leaky_relu")
    return _GAINS[nonlinearity]


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight: dims 1 and 0 times the receptive field size."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
                         f"(got shape {tuple(tensor.shape)})")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor, new, op):
    with no_grad():
        return tensor._assign(new, op)


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fill with values drawn uniformly from [a, b).

    >>> import webgrad as wg
    >>> w = uniform_(wg.empty(100), -1, 1); -1 <= w.min().item() and w.max().item() < 1
    True
    """
    with no_grad():
        return random.uniform_(tensor, a, b, generator=generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill with values from N(mean, std²).

    >>> import webgrad as wg
    >>> normal_(wg.empty(2, 3), generator=wg.Generator().manual_seed(0)).shape
    webgrad.Size([2, 3])
    """
    with no_grad():
        return random.normal_(tensor, mean, std, generator=generator)


def constant_(tensor, val: float):
    """Fill with ``val``.

    >>> import webgrad as wg
    >>> constant_(wg.empty(2), 0.5).tolist()
    [0.5, 0.5]
    """
    return _fill(tensor, creation.full_like(tensor, val), "constant_")


def zeros_(tensor):
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def ones_(tensor):
    """Fill with ones."""
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).

    >>> import webgrad as wg
    >>> xavier_uniform_(wg.empty(3, 5)).abs().max().item() <= (6 / 8) ** 0.5
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * (gain * math.sqrt(2.0 / float(fan_in + fan_out)))   # PyTorch's roundings, step by step
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """Glorot normal: N(0, std²) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """He uniform: U(-b, b) with b = gain * sqrt(3 / fan). ``a=sqrt(5)`` is PyTorch's Linear/Conv default.

    >>> import webgrad as wg
    >>> kaiming_uniform_(wg.empty(4, 16), a=5 ** 0.5).abs().max().item() <= 0.25
    True
    """
    if tensor.numel() == 0:   # e.g. Linear(0, n) or Linear(n, 0): PyTorch warns and leaves it
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * (calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)))   # as PyTorch rounds
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """He normal: N(0, std²) with std = gain / sqrt(fan)."""
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)), generator)


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None):
    """Fill with draws from N(mean, std²) truncated to [a, b], drawn as PyTorch (2.13) draws them, so
    that after ``manual_seed(s)`` the numbers are PyTorch's: where [a, b] holds over 30% of the
    mass, normal draws with those outside redrawn until none is; else uniform draws on [a, b], each
    kept by comparing a uniform draw's log with its log density (redrawn until all are kept).

    >>> import webgrad as wg
    >>> w = trunc_normal_(wg.empty(1000), std=0.02, a=-0.04, b=0.04)
    >>> -0.04 <= w.min().item() and w.max().item() <= 0.04
    True
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    mass = _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std)
    with no_grad():
        if mass > 0.3:
            return _normal_redrawn(tensor, mean, std, a, b, generator)
        return _uniform_accepted(tensor, mean, std, a, b, generator)


def _normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def _normal_redrawn(tensor, mean, std, a, b, generator):
    """N(mean, std²) draws, those outside [a, b] (the bounds in the tensor's dtype) redrawn, in PyTorch's order."""
    low, high = (creation.tensor(v, dtype=tensor.dtype).item() for v in (a, b))
    result = random.normal_(tensor, mean, std, generator=generator)
    while True:
        outside = (result < low) | (result > high)
        if not outside.any():
            break
        result = binary.where(outside, random.normal_(creation.empty_like(result), mean, std, generator=generator),
                              result)
    return tensor if result is tensor else tensor.copy_(result)


def _log_density_excess(candidates, mean, std, log_peak):
    """In place: -((candidates - mean) / std)² / 2 - log_peak, in PyTorch's order of operations."""
    return candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)


def _uniform_accepted(tensor, mean, std, a, b, generator):
    """Uniform draws on [a, b], each accepted where log(u) <= its log density excess, the rest redrawn."""
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    accept = creation.empty_like(tensor)
    random.uniform_(tensor, a, b, generator=generator)
    candidates = _log_density_excess(tensor.clone(), mean, std, log_peak)
    pending = random.uniform_(accept, generator=generator).log_().gt(candidates)
    result = tensor
    while pending.any():
        candidates = random.uniform_(candidates, a, b, generator=generator)
        result = binary.where(pending, candidates, result)
        _log_density_excess(candidates, mean, std, log_peak)
        pending = binary.where(pending, random.uniform_(accept, generator=generator).log_().gt(candidates), pending)
    return tensor if result is tensor else tensor.copy_(result)


def default_init_(weight, bias=None, fan_in=None):
    """PyTorch's default for Linear/Conv: kaiming_uniform_(a=sqrt(5)) on the weight and
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in = _calculate_fan_in_and_fan_out(weight)[0] if fan_in is None else fan_in
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        uniform_(bias, -bound, bound)


__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_"]

from .init_orthogonal import orthogonal_  # noqa: E402  (QR from webgrad.linalg)
from .init_more import *  # noqa: E402,F401,F403  (eye_, dirac_, sparse_ and the deprecated names)
from . import init_more as _init_more  # noqa: E402

__all__ += ["orthogonal_", *_init_more.__all__]
