"""Parametrizations built on ``parametrize`` (PyTorch's ``torch.nn.utils.parametrizations``):
``weight_norm`` and ``spectral_norm``. (``orthogonal`` needs a QR and a matrix exponential that
webgrad's linalg does not have yet.)

>>> import webgrad as wg
>>> m = weight_norm(wg.nn.Linear(3, 2))
>>> sorted(n for n, _ in m.named_parameters())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
from __future__ import annotations

from ...engine import no_grad
from ...ops.creation import empty
from ...tensor import Tensor
from ..functional.distance import normalize
from ..module import Module
from . import parametrize
from ._norms import default_spectral_dim, norm_except_dim, weight_matrix


class _WeightNorm(Module):
    """``weight = g * v / ||v||`` (the norm over every dim but ``dim``; ``dim=None``: the whole
    tensor's); its originals are ``g`` (original0) and ``v`` (original1)."""

    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


class _SpectralNorm(Module):
    """``weight / sigma``, sigma the largest singular value of the weight seen as a matrix, estimated
    by power iteration on the buffers ``_u``, ``_v`` (one step per training-mode access)."""

    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if not -ndim <= dim < max(ndim, 1):
            raise IndexError(f"spectral_norm: Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim, self.eps = dim % max(ndim, 1), eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = weight_matrix(weight, self.dim)
            h, w = matrix.shape
            u = empty(h, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            v = empty(w, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _power_method(self, matrix, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(matrix.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(matrix.H.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        matrix = weight_matrix(weight, self.dim)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * matrix.mv(v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (PyTorch's
    ``parametrizations.weight_norm``): magnitude ``g`` is ``parametrizations.<name>.original0``,
    direction ``v`` is ``original1``. Returns ``module``.

    >>> import webgrad as wg
    >>> m = weight_norm(wg.nn.Linear(3, 2))
    >>> m.parametrizations.weight.original0.shape
    webgrad.Size([2, 1])
    """
    return parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None):
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration (PyTorch's
    ``parametrizations.spectral_norm``; the same vectors from the same seed). ``dim``: the weight's
    output dim (default 1 for transposed convolutions, else 0). Returns ``module``.

    >>> import webgrad as wg
    >>> m = spectral_norm(wg.nn.Linear(4, 3))
    >>> sorted(m.parametrizations.weight[0]._buffers)
    ['_u', '_v']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    dim = default_spectral_dim(module) if dim is None else dim
    return parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))


__all__ = ["weight_norm", "spectral_norm"]
