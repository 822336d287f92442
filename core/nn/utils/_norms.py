"""What weight and spectral normalization share: PyTorch's ``norm_except_dim`` and the weight
seen as a matrix with ``dim`` first."""
from __future__ import annotations


def norm_except_dim(v, pow: float = 2, dim: int = 0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (``dim=-1``: the
    whole tensor's norm, a 0-d tensor, as PyTorch's ``torch.norm_except_dim``)."""
    if dim == -1:
        return v.norm(pow)
    return v.norm(pow, dim=tuple(d for d in range(v.ndim) if d != dim), keepdim=True)


def weight_matrix(weight, dim: int):
    """``weight`` as a matrix whose rows run along ``dim`` (spectral norm's view of a weight)."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.ndim) if d != dim))
    return weight.reshape(weight.shape[0], -1)


def default_spectral_dim(module) -> int:
    """1 for transposed convolutions (their weight is [in, out, ...]), else 0, as PyTorch's."""
    from ..layers.conv import _ConvTransposeNd
    return 1 if isinstance(module, _ConvTransposeNd) else 0
