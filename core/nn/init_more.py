"""More of ``torch.nn.init``: ``eye_``, ``dirac_``, ``sparse_`` (PyTorch's draws: a seeded run fills
the same values) and the deprecated names without the trailing underscore (``normal``,
``xavier_uniform``, ...), which warn and call the in-place ones, as PyTorch's. ``webgrad.nn.init``
holds them all."""
from __future__ import annotations

import math
import warnings

from ..engine import no_grad
from ..ops import creation
from ..ops.random import randperm
from . import init


def eye_(tensor):
    """Fill the 2-D ``tensor`` with the identity matrix (ones on the diagonal), in place.

    >>> import webgrad as wg
    >>> eye_(wg.empty(2, 3)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if tensor.ndim != 2:
        raise ValueError(f"eye_: Only tensors with 2 dimensions are supported, got {tensor.ndim}")
    return init._fill(tensor, creation.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device), "eye_")


def dirac_(tensor, groups: int = 1):
    """Fill the 3-, 4- or 5-D convolution weight ``tensor`` with the Dirac delta, so that the
    convolution keeps its input channels (per group), in place.

    >>> import webgrad as wg
    >>> dirac_(wg.empty(2, 2, 3)).tolist()
    [[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: Only tensors with 3, 4, or 5 dimensions are supported, got {tensor.ndim}")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups:
        raise ValueError(f"dirac_: dim 0 must be divisible by groups (size {sizes[0]}, groups {groups})")
    per_group = sizes[0] // groups
    centre = tuple(s // 2 for s in sizes[2:])
    value = creation.zeros(*sizes, dtype=tensor.dtype, device=tensor.device)
    with no_grad():
        for g in range(groups):
            for d in range(min(per_group, sizes[1])):
                value[(g * per_group + d, d) + centre] = 1
    return init._fill(tensor, value, "dirac_")


def sparse_(tensor, sparsity: float, std: float = 0.01, generator=None):
    """Fill the 2-D ``tensor`` with N(0, std) values, then zero ``ceil(sparsity * rows)`` random rows
    of each column, in place (as PyTorch: the normals from ``generator``, the row choices from the
    default generator's ``randperm``).

    >>> import webgrad as wg
    >>> int((sparse_(wg.empty(4, 3), 0.5) == 0).sum())
    6
    """
    if tensor.ndim != 2:
        raise ValueError(f"sparse_: Only tensors with 2 dimensions are supported, got {tensor.ndim}")
    rows, cols = tensor.shape
    zeros_per_col = math.ceil(sparsity * rows)
    with no_grad():
        init.normal_(tensor, 0.0, std, generator)
        value = tensor.clone()
        for col in range(cols):
            value[randperm(rows, device=tensor.device)[:zeros_per_col], col] = 0
    return init._fill(tensor, value, "sparse_")


def _deprecated(method):
    old, new = method.__name__[:-1], method.__name__

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.", FutureWarning, stacklevel=2)
        return method(*args, **kwargs)
    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = (f"Deprecated ``{new}`` (a FutureWarning says so, as PyTorch's).\n\n"
                               f"    >>> import warnings, webgrad as wg\n"
                               f"    >>> with warnings.catch_warnings(record=True) as caught:\n"
                               f"    ...     warnings.simplefilter('always'); _ = {old}(wg.empty(3, 3){_EXAMPLE_ARGS.get(old, '')})\n"
                               f"    >>> caught[0].category.__name__\n    'FutureWarning'\n")
    return deprecated_init


_EXAMPLE_ARGS = {"constant": ", 0.5", "sparse": ", 0.5"}
uniform, normal, constant = _deprecated(init.uniform_), _deprecated(init.normal_), _deprecated(init.constant_)
xavier_uniform, xavier_normal = _deprecated(init.xavier_uniform_), _deprecated(init.xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(init.kaiming_uniform_), _deprecated(init.kaiming_normal_)
eye, sparse = _deprecated(eye_), _deprecated(sparse_)
dirac = _deprecated(dirac_)
orthogonal = _deprecated(init.orthogonal_)
dirac.__doc__ = dirac.__doc__.replace("wg.empty(3, 3)", "wg.empty(3, 3, 3)")

__all__ = ["eye_", "dirac_", "sparse_", "uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "eye", "dirac", "sparse", "orthogonal"]
