"""The linear-algebra names PyTorch keeps in ``torch`` and on ``Tensor`` beside ``torch.linalg``
(``torch.det``, ``torch.cross``, ``Tensor.matrix_power`` ...): the same functions under their older
names and signatures. ``METHODS`` are attached to Tensor by ``webgrad.linalg``'s import."""
from ..tensor import Tensor
from .norms import dist, frobenius_norm, nuclear_norm
from .products import chain_matmul, cross, matrix_power as _matrix_power, vdot


def matrix_power(input, n):
    """``torch.matrix_power``: ``linalg.matrix_power`` under PyTorch's older name.

    >>> import webgrad as wg
    >>> wg.matrix_power(wg.tensor([[2.0, 0.0], [0.0, 3.0]]), 2).tolist()
    [[4.0, 0.0], [0.0, 9.0]]
    """
    return _matrix_power(input, n)


METHODS = {"cross": cross, "dist": dist, "vdot": vdot, "matrix_power": matrix_power}

for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)

__all__ = ["chain_matmul", "cross", "dist", "frobenius_norm", "matrix_power", "nuclear_norm", "vdot"]
