"""The older weight and spectral normalization (PyTorch's ``torch.nn.utils.weight_norm`` and
``spectral_norm``): the weight is replaced by its pieces as parameters (``weight_g``/``weight_v``,
or ``weight_orig`` with buffers ``weight_u``/``weight_v``) and recomputed by a forward pre-hook.
``parametrizations.weight_norm``/``spectral_norm`` are the newer form."""
from __future__ import annotations

import warnings

from ...engine import no_grad
from ...ops.creation import empty
from ..functional.distance import normalize
from ..parameter import Parameter
from ._norms import default_spectral_dim, norm_except_dim, weight_matrix


class WeightNorm:
    """The forward pre-hook of ``weight_norm``: sets ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    def apply_to(self, module):
        weight = module._parameters.get(self.name)
        if weight is None:
            raise ValueError(f"weight_norm: module {type(module).__name__} has no parameter named '{self.name}'")
        del module._parameters[self.name]
        module.register_parameter(self.name + "_g", Parameter(norm_except_dim(weight, 2, self.dim).detach()))
        module.register_parameter(self.name + "_v", Parameter(weight.detach()))
        object.__setattr__(module, self.name, self.compute_weight(module))
        module.register_forward_pre_hook(self)

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module)
        object.__delattr__(module, self.name)
        del module._parameters[self.name + "_g"], module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name, self.compute_weight(module))


class SpectralNorm:
    """The forward pre-hook of ``spectral_norm``: one power-iteration step (in training mode) on
    ``<name>_u``/``<name>_v``, then ``module.<name> = <name>_orig / sigma``."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def compute_weight(self, module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = weight_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(matrix.T.mv(u), dim=0, eps=self.eps))
                    u.copy_(normalize(matrix.mv(v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        return weight / (u * matrix.mv(v)).sum()

    def apply_to(self, module):
        weight = module._parameters.get(self.name)
        if weight is None:
            raise ValueError(f"spectral_norm: module {type(module).__name__} has no parameter named '{self.name}'")
        with no_grad():
            h, w = weight_matrix(weight, self.dim).shape
            u = normalize(empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1), dim=0, eps=self.eps)
            v = normalize(empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1), dim=0, eps=self.eps)
        del module._parameters[self.name]
        module.register_parameter(self.name + "_orig", weight)
        object.__setattr__(module, self.name, weight.detach())
        module.register_buffer(self.name + "_u", u)
        module.register_buffer(self.name + "_v", v)
        module.register_forward_pre_hook(self)

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        object.__delattr__(module, self.name)
        for suffix in ("_u", "_v"):
            del module._buffers[self.name + suffix]
        del module._parameters[self.name + "_orig"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def weight_norm(module, name: str = "weight", dim: int = 0):
    """Replace ``module.<name>`` by ``<name>_g`` (magnitude) and ``<name>_v`` (direction) parameters,
    recombined before each forward (deprecated in PyTorch for ``parametrizations.weight_norm``; a
    FutureWarning says so). Returns ``module``.

    >>> import warnings, webgrad as wg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = weight_norm(wg.nn.Linear(3, 2))
    >>> sorted(m.state_dict())
    ['bias', 'weight_g', 'weight_v']
    """
    warnings.warn("`webgrad.nn.utils.weight_norm` is deprecated in favor of "
                  "`webgrad.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    _check_not_twice(module, name, WeightNorm, "weight_norm")
    WeightNorm(name, dim).apply_to(module)
    return module


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None):
    """Divide ``module.<name>`` by its spectral norm before each forward, by power iteration on
    buffers ``<name>_u``/``<name>_v`` (the parameter becomes ``<name>_orig``). Returns ``module``.

    >>> import webgrad as wg
    >>> sorted(spectral_norm(wg.nn.Linear(3, 2)).state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    dim = default_spectral_dim(module) if dim is None else dim
    _check_not_twice(module, name, SpectralNorm, "spectral_norm")
    SpectralNorm(name, n_power_iterations, dim, eps).apply_to(module)
    return module


def _check_not_twice(module, name, kind, op):
    if _find_hook(module, name, kind) is not None:
        raise RuntimeError(f"Cannot register two {op} hooks on the same parameter {name}")


def _find_hook(module, name, kind):
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return key
    return None


def _remove(module, name, kind, op):
    key = _find_hook(module, name, kind)
    if key is None:
        raise ValueError(f"{op} of '{name}' not found in {module}")
    module._forward_pre_hooks.pop(key).remove(module)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo ``weight_norm``: ``module.<name>`` is one parameter again, holding the recombined value.

    >>> import warnings, webgrad as wg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = remove_weight_norm(weight_norm(wg.nn.Linear(3, 2)))
    >>> sorted(m.state_dict())
    ['bias', 'weight']
    """
    return _remove(module, name, WeightNorm, "weight_norm")


def remove_spectral_norm(module, name: str = "weight"):
    """Undo ``spectral_norm``: ``module.<name>`` is one parameter again, the normalized weight.

    >>> import webgrad as wg
    >>> sorted(remove_spectral_norm(spectral_norm(wg.nn.Linear(3, 2))).state_dict())
    ['bias', 'weight']
    """
    return _remove(module, name, SpectralNorm, "spectral_norm")


__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]
